"""What a head mostly does, measured on its weights: the words beside a head on the A real model page."""

from __future__ import annotations

import numpy as np

from .errors import N_


def head_pattern(weights: np.ndarray, tokens: list[str] | tuple[str, ...],
                 is_pad: np.ndarray | None = None) -> tuple[str, float]:  # [n_seq, n_seq] -> (what, share)
    """The pattern that takes the largest share of a head's weight, averaged over its (non-padding) queries.

    Candidates: weight on ``[SEP]``, on ``[CLS]``, on the query itself, on the token just before, on the token just
    after. Returns the pattern's description and its share (0 … 1).

    Examples
    --------
    >>> toks = ["[CLS]", "a", "b", "[SEP]"]
    >>> head_pattern(np.eye(4, k=-1) + np.eye(4)[:, :1] * np.eye(4)[0], toks)
    ('looks one token back', 0.75)
    >>> w = np.zeros((4, 4)); w[:, 3] = 0.8; w[:, 1] = 0.2
    >>> head_pattern(w, toks)
    ('on [SEP]', 0.8)
    """
    n = len(tokens)
    keep = np.ones(n, dtype=bool) if is_pad is None else ~np.asarray(is_pad, dtype=bool)
    w = weights[np.ix_(keep, keep)]  # [m, m]: real tokens only
    toks = [t for t, k in zip(tokens, keep, strict=True) if k]
    m = len(toks)

    def on(token: str) -> float:
        cols = [j for j, t in enumerate(toks) if t == token]
        return float(w[:, cols].sum(axis=1).mean()) if cols else 0.0

    shares = {  # the patterns' names are N_-marked: the app shows them in the learner's language
        N_("on [SEP]"): on("[SEP]"),
        N_("on [CLS]"): on("[CLS]"),
        N_("looks at itself"): float(np.trace(w) / m),
        N_("looks one token back"): float(np.trace(w, offset=-1) / m) if m > 1 else 0.0,
        N_("looks one token ahead"): float(np.trace(w, offset=1) / m) if m > 1 else 0.0,
    }
    what = max(shares, key=shares.get)
    return what, shares[what]


def head_description(weights: np.ndarray, tokens: list[str] | tuple[str, ...],
                     is_pad: np.ndarray | None = None) -> tuple[str, dict]:
    """:func:`describe_head` as an English template and its values (``what``: an N_-marked pattern), so that the
    app can show it in the learner's language (``template.format(**values)`` is the English line).

    >>> template, values = head_description(np.full((4, 4), 0.25), ["[CLS]", "a", "b", "[SEP]"])
    >>> template[-28:], values
    ('(the largest, {what}, {pct})', {'what': 'on [SEP]', 'pct': '25 %'})
    """
    what, share = head_pattern(weights, tokens, is_pad)
    n = len(tokens) - (0 if is_pad is None else int(np.count_nonzero(is_pad)))
    pct = f"{100 * share:.0f} %"  # a value, not in the template: gettext reads "% o" as a printf directive
    if share < 1 / 3:
        return N_("spreads its weight: no single pattern takes a third (the largest, {what}, {pct})"), \
            {"what": what, "pct": pct}
    if what.startswith("on "):
        return N_("{pct} of the weight on {token} (averaged over the {n} queries)"), \
            {"token": what.removeprefix("on "), "pct": pct, "n": n}
    return N_("{what}: {pct} of the weight (averaged over the {n} queries)"), {"what": what, "pct": pct, "n": n}


def describe_head(weights: np.ndarray, tokens: list[str] | tuple[str, ...],
                  is_pad: np.ndarray | None = None) -> str:
    """One line on what a head mostly does, with the measured share of its weight (in English; the app translates
    :func:`head_description`).

    Examples
    --------
    >>> w = np.zeros((4, 4)); w[:, 3] = 0.73; w[:, 0] = 0.27
    >>> describe_head(w, ["[CLS]", "a", "b", "[SEP]"])
    '73 % of the weight on [SEP] (averaged over the 4 queries)'
    >>> describe_head(np.full((4, 4), 0.25), ["[CLS]", "a", "b", "[SEP]"])
    'spreads its weight: no single pattern takes a third (the largest, on [SEP], 25 %)'
    """
    template, values = head_description(weights, tokens, is_pad)
    return template.format(**values)
