"""The one exception attn_core raises for input a learner can get wrong."""

from __future__ import annotations


class AttentionInputError(ValueError):
    """Input that attention cannot be computed from.

    The message names the matrix and, where one cell is at fault, the cell as
    (row, column), both counted from 0 as in numpy. ``matrix`` and ``cell`` hold
    the same facts for a UI that wants to point at the grid.

    Examples
    --------
    >>> err = AttentionInputError("X: cell (0, 1) is NaN", matrix="X", cell=(0, 1))
    >>> err.matrix, err.cell
    ('X', (0, 1))
    """

    def __init__(self, message: str, *, matrix: str | None = None, cell: tuple[int, int] | None = None):
        super().__init__(message)
        self.matrix = matrix
        self.cell = cell
