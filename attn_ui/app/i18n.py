"""Languages: the learner's language, and every text the app shows in it (gettext).

The catalogs are standard gettext files in ``attn_ui/locales/<lang>/LC_MESSAGES/app.po`` (one message id per
English string), compiled to ``app.mo`` beside them (``bash .ci/dev i18n`` extracts, updates and compiles with
Babel; a test checks that each ``.mo`` says what its ``.po`` says). Each language has a ``GLOSSARY.md`` next to
its catalog: the field's terms, used the same way on every page.

In code:

- ``_("Undo")`` translates now, in the session's language;
- ``_("{n} heads").format(n=n)``: placeholders are named, and filled in after translating (a translation may
  move them); never ``_(f"...")``, which no catalog can hold;
- ``N_("…")`` marks a text made at import time (a page title, a preset's note, a lesson) for the catalogs and
  leaves it in English; the code that shows it calls ``_`` on it then;
- :func:`error_text` shows an :class:`attn_core.AttentionInputError` or an :class:`attn_models.ModelError` in
  the learner's language;
- a widget's ``format_func`` translates with :func:`option_labels` or :func:`translator` (made during the run:
  AppTest calls it outside the run), and :func:`sentences` joins translated sentences.

Formulas, matrix names (X, W_Q, …), numbers and token labels are never translated.
"""

from __future__ import annotations

import gettext
import threading
from collections.abc import Callable, Mapping
from functools import cache
from pathlib import Path
from typing import Any

from attn_core import N_, Phrase, Words  # N_: the one marker (its texts are Words: filled() translates them as values)

__all__ = ["N_", "LANGUAGES", "error_text", "filled", "language", "ngettext", "option_labels", "sentences",
           "translator"]

#: the languages offered, in the picker's order: code -> the language's own name
LANGUAGES = {"en": "English", "zh": "中文", "ko": "한국어"}
DEFAULT = "en"
#: a language's BCP 47 tag where it is not its code (the page's ``lang``: voices, glyph variants, line breaking)
TAGS = {"zh": "zh-Hans"}
LOCALE_DIR = Path(__file__).parents[1] / "locales"  # attn_ui/locales
DOMAIN = "app"
LANG_KEY = "lang"  # the session's language; listed with every other key in attn_ui.app.state (state.LANG)


@cache
def catalog(lang: str) -> gettext.NullTranslations:
    """The compiled catalog of ``lang`` (English: none, the message ids are the English text)."""
    if lang == DEFAULT:
        return gettext.NullTranslations()
    return gettext.translation(DOMAIN, LOCALE_DIR, languages=[lang])


_PINNED = threading.local()  # .run: (the run's st_internals.run_token(), its language), set by pin_language


def language() -> str:
    """The session's language code ("en", "zh", "ko"); English outside a Streamlit run.

    Outside a run ``st.session_state`` is an empty stand-in (no language: English), but each read of it there logs
    "missing ScriptRunContext"; so where Streamlit's runtime does not exist (plain Python, tests/core, AppTest between
    its runs) it is not read (attn_ui.infra.st_internals.running). Once :func:`pin_language` has run in this script
    run, the language it read (a page asks for it a hundred times a run: every ``_``)."""
    from attn_ui.infra import st_internals  # here: importing this module imports no Streamlit (attn_ui.widgets.text)

    pinned = getattr(_PINNED, "run", None)
    if pinned is not None and pinned[0] is st_internals.run_token():
        return pinned[1]
    if not st_internals.running():
        return DEFAULT
    import streamlit as st

    return st.session_state.get(LANG_KEY, DEFAULT)


def pin_language() -> None:
    """Read the session's language once for the rest of this script run (attn_ui.shell.frame, once it is chosen and
    every callback has run: nothing changes it later in a run). Until then, and in another run or thread (a fragment),
    :func:`language` reads the session's state as before: a reading of st.session_state costs ≈ 10 µs, and a page
    calls ``_`` about a hundred times a run."""
    from attn_ui.infra import st_internals

    _PINNED.run = None  # read afresh
    token = st_internals.run_token()
    if token is not None:
        _PINNED.run = (token, language())


def translator() -> Callable[[str], str]:
    """``_`` bound to this run's language, for a widget's ``format_func``: Streamlit calls it while the widget is
    made, but AppTest also calls it outside the run (to find the option a test picks), where ``_`` cannot know the
    session's language. ``tr = translator(); st.radio(..., format_func=lambda k: tr(LABELS[k]))``."""
    return catalog(language()).gettext


def option_labels(labels: Mapping[Any, str]) -> Callable[[Any], str]:
    """A widget's ``format_func`` showing each option's label (a text marked with ``N_``) in this run's language:
    ``st.radio(_("Mask"), kinds, format_func=option_labels(KIND_LABELS))`` (see :func:`translator`)."""
    tr = translator()
    return {option: tr(label) for option, label in labels.items()}.__getitem__


def sentences(*texts: str) -> str:
    """Whole sentences, each already translated, one after the other. Joining them is itself a message
    (``"{sentence} {next}"``), so a language written without spaces between sentences (Chinese) joins them
    without one."""
    out = ""
    for text in filter(None, texts):
        out = _("{sentence} {next}").format(sentence=out, next=text) if out else text
    return out


def _(message: str) -> str:
    """``message`` (an English message id) in the session's language."""
    lang = language()
    if lang == DEFAULT or not message:  # gettext("") is the catalog's header
        return message
    return catalog(lang).gettext(message)


def ngettext(singular: str, plural: str, n: int) -> str:
    """The singular or the plural of a message for the count ``n``, in the session's language."""
    return catalog(language()).ngettext(singular, plural, n)


def tag(lang: str) -> str:
    """The page's ``lang`` attribute for ``lang``: "zh-Hans", "ko", "en"."""
    return TAGS.get(lang, lang)


def pick(lang: str | None) -> str | None:
    """``lang`` if it names an offered language ("zh", "zh-CN", "ko_KR", "en-GB"), else None.

    >>> pick("zh-CN"), pick("ko"), pick("fr-FR"), pick(None)
    ('zh', 'ko', None, None)
    """
    if not lang:
        return None
    code = str(lang).replace("_", "-").split("-")[0].lower()
    return code if code in LANGUAGES else None


def error_text(err: Exception) -> str:
    """An error's message in the session's language.

    attn_core and attn_models raise with an English template and its values (``err.template``,
    ``err.params``); the template is translated, and so is every value marked for the catalogs
    (:class:`attn_core.Words`: a hint, a score function's name), never a value the learner wrote.
    An error without a template shows its English message.
    """
    template = getattr(err, "template", None)
    params = getattr(err, "params", None)
    if template is None or params is None:
        return str(err)
    return filled(template, params)


def filled(template: str, values: Mapping[str, object]) -> str:
    """An English template (marked with ``N_``) and its values, in the learner's language: the template and every
    value marked for the catalogs (:class:`attn_core.Words`) are translated (a :class:`attn_core.Phrase`, a template
    with values of its own, filled likewise); the learner's own text stays."""
    if not values:  # as the errors do: a template without values is the message itself (braces and all)
        return _(template)
    return _(template).format(**{k: filled(v.template, v.params) if isinstance(v, Phrase) else
                                 _(v) if isinstance(v, Words) else v for k, v in values.items()})
