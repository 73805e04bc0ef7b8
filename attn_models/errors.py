"""The errors of attn_models: every message says what is wrong and what to do, for a learner to read.

An error carries an English template and its values (``err.template``, ``err.params``); ``str(err)`` is the
template filled in. The app shows it in the learner's language (``attn_ui.app.i18n.error_text``): the template is
translated, and so is every value that is itself a text marked with :func:`N_` (an :class:`attn_core.Words`).
"""

from __future__ import annotations

from attn_core import N_  # marks a text for the app's catalogs: an attn_core.Words, which the app translates

__all__ = ["N_", "ModelError", "ModelUnavailableError", "NotFetchedError"]


class ModelError(ValueError):
    """A checkpoint or an input this package refuses: of a family the app does not run, over the app's caps, not
    safetensors, a sentence longer than the caps allow, a layer that does not exist.

    >>> err = ModelError(N_("Layer {layer} does not exist."), layer=7)
    >>> str(err), err.template, err.params
    ('Layer 7 does not exist.', 'Layer {layer} does not exist.', {'layer': 7})
    """

    def __init__(self, template: str, **params: object) -> None:
        self.template, self.params = template, params
        super().__init__(template.format(**params) if params else template)


class ModelUnavailableError(ModelError):
    """The checkpoint is not on this machine (no folder, not in the Hugging Face cache) and cannot be downloaded.

    Its ``advice`` value says what to do without a network; :meth:`advised` puts another in its place (the app's:
    only what its server allows).

    >>> err = ModelUnavailableError(N_("Not here. {advice}"), advice="Copy it.")
    >>> str(err.advised("Ask whoever runs the server."))
    'Not here. Ask whoever runs the server.'
    """

    def advised(self, advice: str) -> ModelUnavailableError:
        """The same error with ``advice`` (a marked text, an attn_core.Phrase) as what to do; itself without one."""
        if "advice" not in self.params:
            return self
        return type(self)(self.template, **{**self.params, "advice": advice})


class NotFetchedError(ModelError):
    """A Hub repo that is not in the cache, asked for where no download may start (a link, a lesson): the learner
    downloads it on A real model, by a click."""
