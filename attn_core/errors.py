"""The one exception attn_core raises for input a learner can get wrong, and the gettext marker ``N_``.

An error carries an English template and its values (``err.template``, ``err.params``); ``str(err)`` is the
template filled in. The app shows it in the learner's language (``attn_ui.app.i18n.error_text``): the template is
translated, and so is every value that is itself a text marked with :func:`N_` (:class:`Words`: a hint, a score
function's name).
Matrix names, numbers and the learner's own values pass through as they are.
"""

from __future__ import annotations


class Words(str):
    """A text marked with :func:`N_`: the app shows it in the learner's language. A plain ``str`` value of an error
    (a token label, what the learner typed) is never translated, even when it reads like an English message."""

    __slots__ = ()


class Phrase(Words):
    """A marked template with its values, used as a value of another message (a reason inside a sentence): the app
    translates the template and fills it, as it does an error's (``template``, ``params``).

    >>> p = Phrase(N_("{field} is missing"), field="layer")
    >>> p, p.template, p.params
    ('layer is missing', '{field} is missing', {'field': 'layer'})
    """

    def __new__(cls, template: str, **params: object) -> Phrase:
        made = super().__new__(cls, template.format(**params) if params else template)
        made.template, made.params = template, params
        return made


def N_(message: str) -> Words:  # noqa: N802 (gettext's name for it)
    """Mark ``message`` for the app's catalogs without translating it (attn_core is numpy only: the app translates).

    >>> N_("every cell must be a finite number")
    'every cell must be a finite number'
    """
    return Words(message)


class AttentionInputError(ValueError):
    """Input that attention cannot be computed from.

    The message names the matrix and, where one cell is at fault, the cell as
    (row, column), both counted from 0 as in numpy. ``matrix`` and ``cell`` hold
    the same facts for a UI that wants to point at the grid. ``template`` is the
    English message with ``{placeholders}`` (marked with :func:`N_`), ``params``
    their values; ``str(err)`` is the template filled in.

    Where more cells of the matrix are at fault (``validation.as_matrix`` looks at
    every cell), ``more`` holds an error about each of the next ones, in reading
    order (a few: the first ``validation.MORE_CELLS``), and ``n_more`` counts them
    all; otherwise ``()`` and 0.

    Examples
    --------
    >>> err = AttentionInputError(N_("{name}: cell ({i}, {j}) is {v!r}, not a number."), name="X", i=0, j=1, v="a",
    ...                           matrix="X", cell=(0, 1))
    >>> str(err), err.matrix, err.cell
    ("X: cell (0, 1) is 'a', not a number.", 'X', (0, 1))
    >>> err.template, err.params
    ('{name}: cell ({i}, {j}) is {v!r}, not a number.', {'name': 'X', 'i': 0, 'j': 1, 'v': 'a'})
    """

    def __init__(self, template: str, *, matrix: str | None = None, cell: tuple[int, int] | None = None,
                 **params: object):
        self.template, self.params = template, params
        super().__init__(template.format(**params) if params else template)
        self.matrix = matrix
        self.cell = cell
        self.more: tuple[AttentionInputError, ...] = ()
        self.n_more = 0
