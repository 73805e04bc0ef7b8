"""NumPy code export: a standalone script that rebuilds a configuration and prints every intermediate.

The script needs only numpy. It repeats attn_core's operations in the same order (project with the
full weights, slice the heads, the scores (``q @ k.T``, or the configuration's score function), divide,
mask with -inf, stable softmax, ``@ v``, concatenate, ``@ W_O``), so its numbers are attn_core's. It prints
one block per intermediate::

    ## head0_scores 3 3
    2.0 4.0 4.0
    ...

a header ``## <name> <rows> <cols>`` (names as in :func:`attn_core.share.named_matrices`), then one
line per row, each value written with Python's ``repr`` (exact for float64; ``-inf`` where a score is
masked). :func:`parse_output` reads it back.
"""

from __future__ import annotations

import numpy as np

from .config import MATRIX_NAMES, Config

_HEADER = '''#!/usr/bin/env python3
"""Self-attention with a configuration exported from the Self-Attention Explorer (needs only numpy).

Run: python {file_name}
Prints every intermediate as a block: "## <name> <rows> <cols>", then one line per row, the values
separated by spaces (Python's repr of each float64, exact; -inf where a score is masked).
"""

import numpy as np

'''

_SOFTMAX = '''

def softmax(a):  # [n_q, n_k] -> [n_q, n_k]: rows sum to 1; a row that is all -inf gives all zeros
    m = np.max(a, axis=-1, keepdims=True)
    m = np.where(np.isneginf(m), 0.0, m)  # an all-masked row: exp(-inf - 0) = 0, no inf - inf
    with np.errstate(over="ignore", invalid="ignore"):
        e = np.exp(a - m)  # <= 1 everywhere
    total = np.sum(e, axis=-1, keepdims=True)
    return np.divide(e, total, out=np.zeros_like(e), where=total > 0)
'''
_SHOW = '''

def show(name, m):  # print one matrix as a parseable block
    print(f"## {{name}} {{m.shape[0]}} {{m.shape[1]}}")
    for row in m:
        print(" ".join(repr(float(v)) for v in row))
'''  # both scripts' helpers (their braces doubled: the bodies are str.format templates)

_BODY = _SOFTMAX + _SHOW + '''

Q = Y @ W_Q  # [n_q, n_heads*d_q]
K = X @ W_K  # [n_seq, n_heads*d_k]
V = X @ W_V  # [n_seq, n_heads*d_v]
d_q = Q.shape[1] // n_heads
d_k = K.shape[1] // n_heads
d_v = V.shape[1] // n_heads
divisor = {divisor}

head_outputs = []
for h in range(n_heads):
    q = Q[:, h * d_q:(h + 1) * d_q]  # [n_q, d_q]
    k = K[:, h * d_k:(h + 1) * d_k]  # [n_seq, d_k]
    v = V[:, h * d_v:(h + 1) * d_v]  # [n_seq, d_v]
{score_lines}
    scaled = scores / divisor  # [n_q, n_seq]
{bias_line}
    masked = biased if mask is None else np.where(mask, biased, -np.inf)  # [n_q, n_seq]
    weights = softmax(masked)  # [n_q, n_seq]
    output = weights @ v  # [n_q, d_v]
    for name, m in (("q", q), ("k", k), ("v", v), {score_shown}("scores", scores), ("scaled", scaled),
                    {bias_shown}("masked", masked), ("weights", weights), ("output", output)):
        show(f"head{{h}}_{{name}}", m)
    head_outputs.append(output)

concat = np.concatenate(head_outputs, axis=1)  # [n_q, n_heads*d_v]
output = concat @ W_O  # [n_q, d_out]
show("concat", concat)
show("output", output)
'''

_MODERN_BODY = _SOFTMAX + '''

def rms_norm(m, eps=1e-6):  # [n, d] -> [n, d]: each row over its root mean square (QK-norm, as Qwen 3's)
    with np.errstate(divide="ignore", invalid="ignore"):
        normed = m / np.sqrt(np.mean(m * m, axis=-1, keepdims=True) + eps)
    normed[~np.isfinite(normed)] = 0.0
    return normed


def rope(m, positions, base, layout):  # [n, d] -> [n, d]: pair i of row p turned by the angle p * base**(-2i/d)
    d = m.shape[1]
    theta = 1.0 / base ** (np.arange(0, d, 2, dtype=np.float64) / d)  # [d/2]
    angles = positions.astype(np.float64)[:, None] * theta[None, :]  # [n, d/2]
    cos, sin = np.cos(angles), np.sin(angles)
    a, b = (m[:, :d // 2], m[:, d // 2:]) if layout == "half" else (m[:, 0::2], m[:, 1::2])  # the pairs
    out = np.empty_like(m)
    if layout == "half":  # pairs (i, i + d/2), transformers' rotate_half
        out[:, :d // 2], out[:, d // 2:] = a * cos - b * sin, a * sin + b * cos
    else:  # pairs (2i, 2i + 1), RoFormer's and Meta's Llama
        out[:, 0::2], out[:, 1::2] = a * cos - b * sin, a * sin + b * cos
    return out


def alibi_slopes(n):  # the paper's geometric slopes, the non-power-of-two rule as in its code
    p = 2 ** int(np.floor(np.log2(n)))
    slopes = (2.0 ** (-8.0 / p)) ** np.arange(1, p + 1, dtype=np.float64)
    if p != n:
        extra = (2.0 ** (-8.0 / (2 * p))) ** np.arange(1, 2 * p + 1, 2, dtype=np.float64)
        slopes = np.concatenate([slopes, extra[:n - p]])
    return slopes
''' + _SHOW + '''

Q = Y @ W_Q  # [n_q, n_heads*d_q]
K = X @ W_K  # [n_seq, n_kv_heads*d_k]
V = X @ W_V  # [n_seq, n_kv_heads*d_v]
d_q = Q.shape[1] // n_heads
d_k = K.shape[1] // n_kv_heads
d_v = V.shape[1] // n_kv_heads
divisor = {divisor}
positions = np.arange(len(tokens))  # each token's position: RoPE's angle, ALiBi's distance
i, j = np.arange(len(query_tokens))[:, None], np.arange(len(tokens))[None, :]  # query and key positions
{options}{window_lines}
def scored(m, h):  # a head's queries or keys as scored: QK-normed, then rotated
    {norm_line}
    {rope_line}
    return m


head_outputs = []
for h in range(n_heads):
    g = h // (n_heads // n_kv_heads)  # the key/value head query head h reads
    q = scored(Q[:, h * d_q:(h + 1) * d_q], h)  # [n_q, d_q]
    k = scored(K[:, g * d_k:(g + 1) * d_k], g)  # [n_seq, d_k]
    v = V[:, g * d_v:(g + 1) * d_v]  # [n_seq, d_v]
{score_lines}
    scaled = scores / divisor  # [n_q, n_seq]
{cap_line}
{bias_line}
    masked = biased if mask is None else np.where(mask, biased, -np.inf)  # [n_q, n_seq]
    weights = softmax(masked)  # [n_q, n_seq]
    output = weights @ v  # [n_q, d_v]
    for name, m in (("q", q), ("k", k), ("v", v), {score_shown}("scores", scores), ("scaled", scaled),
                    {extra_shown}("masked", masked), ("weights", weights), ("output", output)):
        show(f"head{{h}}_{{name}}", m)
    head_outputs.append(output)

concat = np.concatenate(head_outputs, axis=1)  # [n_q, n_heads*d_v]
output = concat @ W_O  # [n_q, d_out]
show("concat", concat)
show("output", output)
'''

SCORE_CODE = {  # per score function: the lines that make a head's scores, and the intermediates they show
    "dot": ("    scores = q @ k.T  # [n_q, n_seq]: dot product", ""),
    "general": ("    q_a = q @ W_a[:, h * d_k:(h + 1) * d_k]  # [n_q, d_k]: this head's slice of W_a\n"
                "    scores = q_a @ k.T  # [n_q, n_seq]: (q W_a) k", '("q_a", q_a), '),
    "additive": ("    d_a = W_1.shape[1] // n_heads\n"
                 "    cols = slice(h * d_a, (h + 1) * d_a)  # this head's columns of W_1, W_2 and v_a\n"
                 "    q_1 = q @ W_1[:, cols]  # [n_q, d_a]\n"
                 "    k_2 = k @ W_2[:, cols]  # [n_seq, d_a]\n"
                 "    scores = np.tanh(q_1[:, None, :] + k_2[None, :, :]) @ v_a[0, cols]  # [n_q, n_seq]: additive",
                 '("q_1", q_1), ("k_2", k_2), '),
}

_SHAPES = {"x": "[n_seq, d_model]", "y": "[n_q, d_model]: the queries' sequence", "w_q": "[d_model, n_heads*d_q]",
           "w_k": "[d_model, n_heads*d_k]", "w_v": "[d_model, n_heads*d_v]", "w_o": "[n_heads*d_v, d_out]",
           "w_a": "[d_q, n_heads*d_k]", "w_1": "[d_q, n_heads*d_a]", "w_2": "[d_k, n_heads*d_a]",
           "v_a": "[1, n_heads*d_a]"}


def numpy_script(cfg: Config, file_name: str = "attention.py") -> str:
    """A standalone numpy script that rebuilds ``cfg`` and prints every intermediate.

    Token labels enter the script only through ``repr`` (a Python string literal), never as code.

    Examples
    --------
    >>> from attn_core import load_preset
    >>> script = numpy_script(load_preset("seed000"))
    >>> "import numpy as np" in script, "X = np.array([" in script, script.count("import")
    (True, True, 1)
    """
    lines = [f"tokens = {list(cfg.tokens)!r}"]
    if cfg.cross:
        lines.append(f"query_tokens = {list(cfg.y_tokens)!r}  # cross-attention: Y's rows ask, X's rows answer")
    lines.append(f"n_heads = {int(cfg.n_heads)}")
    if cfg.modern:
        lines.append(f"n_kv_heads = {cfg.kv_heads}  # key/value heads: query head h reads h // (n_heads // n_kv_heads)")
    lines.append("")
    for name in cfg.matrix_names():
        lines.append(f"{MATRIX_NAMES[name]} = {_array(cfg.matrix(name))}  # {_SHAPES[name]}")
    if not cfg.cross:
        lines += ["Y = X  # self-attention: the queries come from X too", "query_tokens = tokens"]
    lines.append("")
    lines += _mask_lines(cfg)
    if cfg.scale == "sqrt_dk":
        divisor = "float(np.sqrt(d_k))  # scaled by sqrt(d_k)"
    elif cfg.scale == "none":
        divisor = "1.0  # not scaled"
    else:
        divisor = f"{float(cfg.scale)!r}  # a chosen divisor"
    if cfg.score_bias is not None:
        lines[-1:-1] = [f"B = np.array({cfg.score_bias.tolist()!r})  # score bias [n_heads, n_q, n_seq]"]
        bias_line, bias_shown = "    biased = scaled + B[h]  # [n_q, n_seq]: + the score bias", '("biased", biased), '
    else:
        bias_line, bias_shown = "    biased = scaled  # no score bias", ""
    score_lines, score_shown = SCORE_CODE[cfg.score]
    if cfg.modern:
        return _HEADER.format(file_name=file_name) + "\n".join(lines) + _modern_body(cfg, divisor, score_lines,
                                                                                       score_shown)
    return _HEADER.format(file_name=file_name) + "\n".join(lines) + _BODY.format(
        divisor=divisor, score_lines=score_lines, score_shown=score_shown, bias_line=bias_line,
        bias_shown=bias_shown)


def _modern_body(cfg: Config, divisor: str, score_lines: str, score_shown: str) -> str:
    """The script's body with the modern options, in attn_core.modern_attention's order and operations."""
    options = ""
    if cfg.window is not None:
        causal = cfg.mask_kind == "causal"
        rule = "(j > i - window) & (j <= i)  # causal: the window keys ending at the query" if causal else (
            "np.abs(i - j) < window  # the same reach on both sides")
        window_lines = (f"window = {int(cfg.window)}\nwindow_mask = {rule}\n"
                        "mask = window_mask if mask is None else mask & window_mask\n")
    else:
        window_lines = ""
    norm_line = "m = rms_norm(m)" if cfg.qk_norm else "pass  # no QK-norm"
    rope_line = (f"m = rope(m, positions, {float(cfg.rope.base)!r}, {cfg.rope.layout!r})" if cfg.rope is not None
                 else "pass  # no RoPE")
    cap_line = (f"    capped = {float(cfg.softcap)!r} * np.tanh(scaled / {float(cfg.softcap)!r})  # soft-capped"
                if cfg.softcap is not None else "    capped = scaled  # no soft cap")
    bias = [*(["B[h]"] if cfg.score_bias is not None else []), *(["alibi[h]"] if cfg.alibi else [])]
    bias_line = "    biased = capped  # no score bias" if not bias else (
        f"    biased = capped + ({' + '.join(bias)})  # [n_q, n_seq]: + the score bias")
    if cfg.alibi:
        options = "alibi = alibi_slopes(n_heads)[:, None, None] * (j - i)[None]  # -m_h * (i - j): ALiBi\n"
    extra = [*(['("capped", capped), '] if cfg.softcap is not None else []),
             *(['("biased", biased), '] if cfg.alibi else [])]
    return _MODERN_BODY.format(divisor=divisor, options=options, window_lines=window_lines, norm_line=norm_line,
                               rope_line=rope_line, score_lines=score_lines, score_shown=score_shown, cap_line=cap_line,
                               bias_line=bias_line, extra_shown="".join(extra))


def _array(m: np.ndarray, dtype: str = "") -> str:  # [r, c] -> "np.array([\n    [...],\n])"
    rows = "".join(f"    [{', '.join(map(repr, row))}],\n" for row in m.tolist())
    return f"np.array([\n{rows}]{', dtype=' + dtype if dtype else ''})"


def _mask_lines(cfg: Config) -> list[str]:
    """The mask as code: True = may attend."""
    if cfg.mask_kind == "causal":
        return ["mask = np.tri(len(tokens), dtype=bool)  # causal: each token sees itself and earlier ones"]
    if cfg.mask_kind == "padding":
        return [
            f"is_pad = np.array({[bool(p) for p in cfg.is_pad]!r})  # True = padding token",
            "mask = np.broadcast_to(~is_pad, (len(query_tokens), len(tokens)))  # no query attends to padding",
        ]
    if cfg.mask_kind == "custom":
        return [f"mask = {_array(cfg.custom_mask.astype(int), 'bool')}  # custom: 1 = may attend"]
    return ["mask = None  # every token attends to every token"]


def parse_output(text: str) -> dict[str, np.ndarray]:
    """Read the script's printed blocks back into matrices, by name.

    Raises
    ------
    ValueError
        A block whose rows or values do not match its header.

    Examples
    --------
    >>> parse_output("## head0_weights 1 2\\n0.25 0.75\\n## output 1 1\\n-inf\\n")["head0_weights"].tolist()
    [[0.25, 0.75]]
    """
    out: dict[str, np.ndarray] = {}
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        head = lines[i].split()
        if len(head) != 4 or head[0] != "##":
            raise ValueError(f"line {i + 1}: expected '## <name> <rows> <cols>', got {lines[i]!r}")
        name, n_rows, n_cols = head[1], int(head[2]), int(head[3])
        rows = [[float(v) for v in line.split()] for line in lines[i + 1:i + 1 + n_rows]]
        if len(rows) != n_rows or any(len(r) != n_cols for r in rows):
            raise ValueError(f"block {name}: expected {n_rows} rows of {n_cols} values")
        out[name] = np.array(rows, dtype=np.float64).reshape(n_rows, n_cols)
        i += 1 + n_rows
    return out
