"""The Modern attention page's presets, cached computations, charts and sentences.

What Llama, Mistral, Gemma 2, BLOOM and Qwen 3 change in the seeds' attention (attn_core.modern_attention), on the
learner's own configuration. Every sentence that states a property of a number is computed here from the numbers the
page shows. Nothing here calls st: the page (pages/modern.py) draws.
"""

from __future__ import annotations

from dataclasses import replace

import altair as alt
import numpy as np
import pandas as pd

from attn_core import (
    Config,
    DecodeTrace,
    ModernTrace,
    OnlineTrace,
    RoPE,
    cached_decode,
    head_slice,
    kv_head_of,
    online_softmax_attention,
    run,
    soft_cap,
    with_dimensions,
)
from attn_ui.app.i18n import N_, _, ngettext
from attn_ui.infra import budget
from attn_ui.widgets.numbers import format_numbers
from attn_ui.widgets.text import md_escape


def base_text(base: float, *, latex: bool = False) -> str:
    r"""RoPE's base as a person writes it: a whole number with its thousands grouped (1,000,000; in LaTeX 1\,000\,000),
    else the shortest float text ("1e+06" would read as e + 6 in a formula).

    >>> base_text(1e6), base_text(1e6, latex=True), base_text(12.5), base_text(1e300, latex=True)
    ('1,000,000', '1\\,000\\,000', '12.5', '10^{300}')
    """
    if base.is_integer() and base < 1e15:
        return f"{int(base):,}".replace(",", r"\," if latex else ",")
    mantissa, _e, exponent = f"{base:g}".partition("e")
    if not exponent:
        return mantissa
    power = f"10^{{{int(exponent)}}}" if latex else f"10^{int(exponent)}"
    return power if mantissa == "1" else (rf"{mantissa} \cdot {power}" if latex else f"{mantissa}·{power}")


# ---- widget keys (page-prefixed) ---------------------------------------------------------------------------------
KV, ROPE_ON, ROPE_BASE, ROPE_LAYOUT = "modern_kv", "modern_rope", "modern_rope_base", "modern_rope_layout"
QK_NORM, ALIBI, CAUSAL = "modern_qk_norm", "modern_alibi", "modern_causal"
WINDOW_ON, WINDOW, CAP_ON, CAP = "modern_window_on", "modern_window", "modern_cap_on", "modern_cap"
SECTION, BLOCK, TILE, ROW, STEP = "modern_section", "modern_block", "modern_tile", "modern_row", "modern_step"
PAIR_M, PAIR_N, SHIFT = "modern_m", "modern_n", "modern_shift"
MAX_SHIFT = 100_000  # the largest shift s of the RoPE check (its whole number box)
PRESET_NOTE = "modern_preset_note"  # ((width before, width after), configuration): a RoPE preset widened the heads
GRID_WEIGHTS = {"w_q", "w_k", "w_v", "w_o"}  # a change of these redraws the grids
REFUSED = "modern_refused"  # {widget key: (value typed, message)}: a change the core refused, shown beside its widget

LAYOUTS = {"half": N_("half (Llama, Mistral, Qwen: rotate_half)"),
           "interleaved": N_("interleaved (RoFormer, Meta's Llama: pairs side by side)")}
BYTES_PER_NUMBER = 2  # a KV cache in bfloat16 / float16, as the models serve
GEMMA_CAP = 50.0
#: the plot is the size given, axes and legends added around it (Streamlit's default squeezes a small chart)
PAD = alt.AutoSizeParams(type="pad", contains="padding")  # Gemma 2's attn_logit_softcapping

# ---- the sections --------------------------------------------------------------------------------------------------
GQA, ROPE_S, WINDOW_S, CAP_S, ALIBI_S, ONLINE, CACHE = (
    N_("Grouped-query heads"), N_("RoPE"), N_("Window"), N_("Soft-cap"), N_("ALiBi"), N_("Online softmax"),
    N_("KV cache"))
SECTIONS = [GQA, ROPE_S, WINDOW_S, CAP_S, ALIBI_S, ONLINE, CACHE]


# ---- presets ---------------------------------------------------------------------------------------------------------

OFF_FIELDS = {"n_kv_heads": None, "rope": None, "qk_norm": False, "alibi": False, "window": None, "softcap": None}


def grouped_kv(n_heads: int) -> int:
    """The key/value heads a preset groups ``n_heads`` query heads into: the largest divisor of n_heads at most half
    of it (8 → 4, 6 → 3, 2 → 1), n_heads itself for one head.

    >>> [grouped_kv(n) for n in (1, 2, 6, 8)]
    [1, 1, 3, 4]
    """
    return max([g for g in range(1, n_heads // 2 + 1) if n_heads % g == 0], default=n_heads)


def preset_window(n_seq: int) -> int:
    """A window that hides something: half the tokens, rounded up (Mistral 7B's is 4,096 of a 32k context).

    >>> preset_window(3), preset_window(6)
    (2, 3)
    """
    return max(1, (n_seq + 1) // 2)


def sensible_cap(largest: float) -> float:
    """A soft cap for scores of this size: the largest |scaled score| rounded to two significant digits (at least
    0.1), so the largest is pulled in by about a quarter (tanh(1) ≈ 0.76), as Gemma 2's cap of 50 acts on scores of
    a few tens.

    >>> sensible_cap(1.2345), sensible_cap(0.0)
    (1.2, 0.1)
    """
    return max(0.1, float(f"{largest:.2g}"))


PRESETS = {"llama": N_("Llama / Mistral"), "gemma": N_("Gemma 2"), "bloom": N_("BLOOM"), "qwen": N_("Qwen 3"),
           "off": N_("Off")}
PRESET_HELP = {
    "llama": N_("RoPE (θ base 10,000, half layout), grouped-query heads, a causal mask and a sliding window of half "
                "the tokens (Mistral's)."),
    "gemma": N_("Soft-capped scores (Gemma 2 caps at 50; here at the size of your scores), grouped-query heads and a "
                "causal mask."),
    "bloom": N_("ALiBi's linear distance penalty instead of positions in X, and a causal mask."),
    "qwen": N_("QK-norm (RMSNorm of each head's queries and keys), then RoPE (θ base 1,000,000), grouped-query heads "
               "and a causal mask."),
    "off": N_("Every modern option off: the tutorials' attention (the mask stays as it is)."),
}


def preset_changes(name: str, cfg: Config, largest_scaled: float) -> dict:
    """The Config fields preset ``name`` sets on ``cfg`` (``largest_scaled``: the largest |scaled score| of the
    seeds' attention on these numbers, for Gemma 2's cap). Grouped-query heads change W_K, W_V (and W_O) too."""
    fields = {k: v for k, v in OFF_FIELDS.items() if k != "n_kv_heads"}
    if name != "off":
        fields["mask_kind"] = "causal"
    if name == "llama":
        fields |= {"rope": RoPE(10000.0, "half"), "window": preset_window(cfg.n_seq)}
    elif name == "gemma":
        fields["softcap"] = sensible_cap(largest_scaled)
    elif name == "bloom":
        fields["alibi"] = True
    elif name == "qwen":
        fields |= {"rope": RoPE(1_000_000.0, "half"), "qk_norm": True}
    widened = widen_changes(cfg) if fields.get("rope") is not None and odd_width(cfg) else {}
    cfg = replace(cfg, **widened)  # RoPE turns pairs: an odd head is widened first, as the Widen button does
    kv = {"off": cfg.n_heads, "bloom": cfg.n_heads}.get(name, grouped_kv(cfg.n_heads))  # BLOOM: multi-head
    return widened | fields | (kv_changes(cfg, kv) if kv != cfg.kv_heads else {})


def odd_width(cfg: Config) -> bool:
    """Whether a head of W_Q or W_K has an odd width (RoPE, which turns pairs of features, refuses it)."""
    return bool(cfg.d_q % 2 or cfg.d_k % 2)


def kv_changes(cfg: Config, n_kv: int) -> dict:
    """The fields that give ``cfg`` ``n_kv`` key/value heads: n_kv_heads, and W_K, W_V resized to n_kv heads
    (attn_core.with_dimensions: each value that still fits kept, new heads' columns drawn anew) and W_O."""
    per_k, per_v = cfg.w_k.shape[1] // cfg.kv_heads, cfg.w_v.shape[1] // cfg.kv_heads
    new = with_dimensions(replace(cfg, n_kv_heads=n_kv), n_seq=cfg.n_seq, d_model=cfg.d_model,
                          d_qk=cfg.w_q.shape[1], d_v=per_v * n_kv, d_k=per_k * n_kv)
    return {"n_kv_heads": new.n_kv_heads, "w_k": new.w_k, "w_v": new.w_v, "w_o": new.w_o}


def even_widths(cfg: Config) -> Config:
    """``cfg`` with one more column per head in W_Q and W_K where a head's width is odd (RoPE turns pairs), every
    value kept (new columns drawn with Xavier's initialiser)."""
    d_q, d_k = cfg.d_q + cfg.d_q % 2, cfg.d_k + cfg.d_k % 2
    return with_dimensions(cfg, n_seq=cfg.n_seq, d_model=cfg.d_model, d_qk=d_q * cfg.n_heads,
                           d_v=cfg.w_v.shape[1], d_k=d_k * cfg.kv_heads)


def widen_changes(cfg: Config) -> dict:
    """The fields that give each head of W_Q and W_K an even width (:func:`even_widths`: every value kept, the new
    columns drawn as Inputs & weights draws them): the Widen button's change, and a RoPE preset's on an odd width."""
    n = even_widths(replace(cfg, rope=None))
    return {f: getattr(n, f) for f in ("w_q", "w_k", "w_o", "n_kv_heads")}


def kv_choices(n_heads: int) -> list[int]:
    """Key/value head counts for ``n_heads`` query heads: its divisors, largest (multi-head) first.

    >>> kv_choices(8)
    [8, 4, 2, 1]
    """
    return [g for g in range(n_heads, 0, -1) if n_heads % g == 0]


# ---- cached computations ---------------------------------------------------------------------------------------------

@budget.cached("modern_trace", slots=budget.EXPLORER_SLOTS)
def trace(cfg: Config) -> ModernTrace:
    """attn_core.run(cfg) for a configuration with modern options, once per distinct configuration. Raises
    AttentionInputError."""
    return run(cfg)


def plain(cfg: Config) -> Config:
    """``cfg`` with the options that change the scores off (RoPE, QK-norm, ALiBi, window, soft-cap); grouped heads
    kept (they share weights, they do not change a score)."""
    return replace(cfg, rope=None, qk_norm=False, alibi=False, window=None, softcap=None)


def changes_a_score(cfg: Config) -> bool:
    """Whether an option that changes a score is applied (what :func:`plain` switches off)."""
    return bool(cfg.rope or cfg.qk_norm or cfg.alibi or cfg.window or cfg.softcap)


MASK_WORDS = {"causal": N_("with the causal mask"), "padding": N_("with the padding mask"),
              "custom": N_("with the mask drawn on Masking")}


def weights_said(cfg: Config, cmp: object, queries: list[str], keys: list[str], *, rope_waiting: bool) -> list[str]:
    """The sentences under the weights: how they differ from the tutorials' attention on these numbers with the same
    mask (``cmp``, attn_core.analysis.compare_rows of the two, on the rows where both have a key; None when no option
    that changes a score is applied). ``rope_waiting``: RoPE is switched on but refused (an odd head width), so it is
    not applied. The mask is kept in the comparison, so the words say it is."""
    mask = _(MASK_WORDS[cfg.mask_kind]) if cfg.mask_kind in MASK_WORDS else ""
    said = [_("RoPE is switched on but not applied until each head of W_Q and W_K has an even width (the Widen "
              "button above).")] if rope_waiting else []
    if cmp is None:
        if rope_waiting:
            said.append(_("QK-norm, ALiBi, the window and the cap are off: these are still the tutorials' weights, "
                          "{mask}.").format(mask=mask) if mask else
                        _("QK-norm, ALiBi, the window and the cap are off: these are still the tutorials' weights."))
        elif mask:
            said.append(_("RoPE, QK-norm, ALiBi, the window and the cap are off: these are the tutorials' weights, "
                          "{mask}. Switch one on above.").format(mask=mask))
        else:
            said.append(_("No option that changes a score is on: these are the tutorials' weights. Switch one on "
                          "above."))
        return said
    ref = (_("the tutorials' attention on these numbers, {mask}").format(mask=mask) if mask else
           _("the tutorials' attention on these numbers"))
    if cmp.largest is None:
        said.append(_("No key is left for any query (every row of weights is 0): there are no weights to compare with "
                      "the tutorials' attention."))
        return said
    if cmp.largest == 0:  # exactly: no cell to name
        said.append(_("With RoPE, QK-norm, ALiBi, the window and the cap off ({ref}), these weights are the same: the "
                      "largest difference is 0.").format(ref=ref))
    else:
        said.append(_("With RoPE, QK-norm, ALiBi, the window and the cap off ({ref}), these weights differ by up to "
                      "**{d}** (query {q}, key {k}).").format(
            ref=ref, d=f"{cmp.largest:.4g}", q=md_escape(queries[cmp.at[0]]), k=md_escape(keys[cmp.at[1]])))
    if cmp.left_out:
        said.append(ngettext(
            "No key is left for query {queries} (its row of weights is all 0): it is not compared.",
            "No key is left for queries {queries} (their rows of weights are all 0): they are not compared.",
            len(cmp.left_out)).format(queries=_(", ").join(md_escape(queries[i]) for i in cmp.left_out)))
    return said


#: the most tiles the online softmax section makes: each tile keeps its O before and after ([n_q, d_v] each), so the
#: memory grows with the tiles (256 tiles of one key at the caps: 266 MB measured for one head; 16: about 17 MB)
MAX_TILES = 16


def block_sizes(n_seq: int) -> list[int]:
    """The block sizes offered: as few keys per tile as give at most MAX_TILES tiles, up to one tile of every key.

    >>> block_sizes(4), block_sizes(40)[:3]
    ([1, 2, 3, 4], [3, 4, 5])
    """
    return list(range(-(-n_seq // MAX_TILES), n_seq + 1))


@budget.cached("modern_online", slots=budget.EXPLORER_SLOTS)
def online(q: np.ndarray, k: np.ndarray, v: np.ndarray, block: int, divisor: float,
           mask: np.ndarray | None) -> OnlineTrace:
    return online_softmax_attention(q, k, v, block=block, scale=divisor, mask=mask)


def decode_options(cfg: Config) -> dict:
    """attn_core.decode_step's options from the configuration (decoding is causal)."""
    return {"n_heads": cfg.n_heads, "n_kv_heads": cfg.n_kv_heads, "rope": cfg.rope, "qk_norm": cfg.qk_norm,
            "alibi": cfg.alibi, "window": cfg.window, "softcap": cfg.softcap, "scale": cfg.scale}


#: the tokens the KV cache section decodes: every step keeps its trace and its cache (t rows), so the whole decode
#: grows with the square of the tokens (256 tokens at the caps: 540 MB measured; 64: about 34 MB)
DECODE_TOKENS = 64


@budget.cached("modern_decode", slots=budget.EXPLORER_SLOTS)
def decode(cfg: Config) -> DecodeTrace:
    """The first DECODE_TOKENS tokens of X (at most) decoded one at a time on a key/value cache."""
    return cached_decode(cfg.x[:DECODE_TOKENS], cfg.w_q, cfg.w_k, cfg.w_v, cfg.w_o, **decode_options(cfg))


def causal_config(cfg: Config) -> Config:
    """The configuration decoding computes: ``cfg`` with the causal mask (a causal model's forward pass)."""
    return replace(cfg, mask_kind="causal")


# ---- the pipeline in formulas ------------------------------------------------------------------------------------

def pipeline(cfg: Config) -> list[tuple[str, str]]:
    """One (what, Markdown) line per step the options make, in the order modern_attention runs them: each formula its
    own $…$ (a phone breaks the line between them), the words between them translated."""
    kv = cfg.kv_heads
    lines = [(_("projections"), "$Q = X W_Q$, $K = X W_K$, $V = X W_V$" + (
        " " + _("({n} query heads, {kv} K/V)").format(n=cfg.n_heads, kv=kv) if kv != cfg.n_heads else ""))]
    if cfg.qk_norm:
        lines.append((_("QK-norm"), r"$q \leftarrow q \,/\, \mathrm{rms}(q)$, $k \leftarrow k \,/\, \mathrm{rms}(k)$, "
                                    r"$\mathrm{rms}(x) = (\tfrac{1}{d_k}\textstyle\sum_i x_i^2 + \epsilon)^{1/2}$"))
    if cfg.rope is not None:
        lines.append((_("RoPE"), r"$q_m \leftarrow R(m\,\theta)\, q_m$, $k_n \leftarrow R(n\,\theta)\, k_n$, "
                                 rf"$\theta_i = {{{base_text(cfg.rope.base, latex=True)}}}^{{-2i/d_k}}$"))
    if kv != cfg.n_heads:
        lines.append((_("grouped heads"), _("head h reads K/V head {which}").format(
            which=rf"$\lfloor h / {cfg.n_heads // kv} \rfloor$")))
    # no \sqrt in a line of text: KaTeX draws its bar as a 400em-wide svg clipped by its box (past a phone's edge)
    lines.append((_("scores"), r"$s = q k^\top / {\surd d_k}$" if cfg.scale == "sqrt_dk" else r"$s = q k^\top / c$"))
    if cfg.softcap is not None:
        cap = base_text(cfg.softcap, latex=True)
        lines.append((_("soft-cap"), rf"$s \leftarrow {cap} \tanh(s / {cap})$"))
    if cfg.alibi:
        lines.append((_("ALiBi"), r"$s_{ij} \leftarrow s_{ij} - m_h\,(i - j)$"))
    causal = cfg.mask_kind == "causal"
    if cfg.window is not None or causal:
        rule = (r"j \le i" if cfg.window is None else rf"i - {cfg.window} < j \le i" if causal else
                rf"|i - j| < {cfg.window}")
        lines.append((_("window") if cfg.window is not None else _("causal mask"),
                      _("{masked} unless {rule}").format(masked=r"$s_{ij} = -\infty$", rule=f"${rule}$")))
    lines.append((_("softmax, values"), r"$\mathrm{out} = \mathrm{softmax}(s)\, v$"))
    return lines


# ---- grouped-query heads -----------------------------------------------------------------------------------------

def groups(n_heads: int, n_kv: int) -> list[tuple[int, list[int]]]:
    """Each key/value head with the query heads that read it.

    >>> groups(4, 2)
    [(0, [0, 1]), (1, [2, 3])]
    """
    return [(g, [h for h in range(n_heads) if kv_head_of(h, n_heads, n_kv) == g]) for g in range(n_kv)]


def group_label(g: int, heads: list[int]) -> str:
    """ "query heads 0–1 → KV head 0" """
    which = str(heads[0]) if len(heads) == 1 else f"{heads[0]}–{heads[-1]}"
    return (_("query head {which} → KV head {g}") if len(heads) == 1 else
            _("query heads {which} → KV head {g}")).format(which=which, g=g)


def gqa_diagram(n_heads: int, n_kv: int) -> alt.LayerChart:
    """The query heads as squares in a row, each under the key/value head it reads (a bar spanning its group)."""
    q_name, kv_name = _("query heads"), _("K/V heads")
    rows = [{"level": kv_name, "x0": hs[0], "x1": hs[-1] + 1, "label": f"K,V {g}", "g": g} for g, hs in
            groups(n_heads, n_kv)]
    rows += [{"level": q_name, "x0": h, "x1": h + 1, "label": f"Q {h}", "g": kv_head_of(h, n_heads, n_kv)}
             for h in range(n_heads)]
    data = pd.DataFrame(rows).assign(mid=lambda f: (f.x0 + f.x1) / 2)
    px = max(36, min(64, 640 // n_heads))
    scale = alt.Scale(domain=[0, n_heads], nice=False, zero=False)
    y = alt.Y("level:N", sort=[kv_name, q_name], title=None, axis=alt.Axis(ticks=False, domain=False))
    rects = alt.Chart(data).mark_rect(stroke="white", strokeWidth=2).encode(
        x=alt.X("x0:Q", axis=None, scale=scale), x2="x1:Q", y=y,
        color=alt.Color("g:N", legend=None, scale=alt.Scale(scheme="tableau10")),
        tooltip=[alt.Tooltip("label:N", title=_("head"))])
    labels = alt.Chart(data).mark_text(color="white", fontSize=12, fontWeight="bold").encode(
        x=alt.X("mid:Q", axis=None, scale=scale), y=y, text="label:N")
    return (rects + labels).properties(width=px * n_heads, height=72, autosize=PAD,
                                       description=_("Which key/value head each query head reads"))


def cache_bytes(cfg: Config, n_kv: int | None = None) -> int:
    """Bytes a KV cache holds per token and layer: K and V rows of ``n_kv`` heads (default the configuration's), at
    BYTES_PER_NUMBER bytes a number.

    >>> from attn_core import load_preset
    >>> cache_bytes(load_preset("seed003_heads")), cache_bytes(load_preset("seed003_heads"), 2)
    (2048, 512)
    """
    n_kv = cfg.kv_heads if n_kv is None else n_kv
    return n_kv * (cfg.d_k + cfg.d_v) * BYTES_PER_NUMBER


# ---- RoPE ------------------------------------------------------------------------------------------------------------

def before_rope(t: ModernTrace, h: int, which: str) -> np.ndarray:
    """Head ``h``'s queries (``which`` "q") or its key/value head's keys ("k") as RoPE receives them: after QK-norm
    if on, else straight from the projection. [n_seq, d_k]"""
    if which == "q":
        normed, m, n, i = t.q_normed, t.q, t.n_heads, h
    else:
        normed, m, n, i = t.k_normed, t.k, len(set(t.kv_heads)), t.kv_heads[h]
    if normed is not None:
        return normed[i]
    width = m.shape[1] // n
    return m[:, head_slice(i, width)]


def head_weights(cfg: Config, h: int) -> tuple[np.ndarray, np.ndarray]:
    """Head ``h``'s column slices of W_Q and of its key/value head's W_K: [d_model, d_q], [d_model, d_k]."""
    g = kv_head_of(h, cfg.n_heads, cfg.kv_heads)
    return cfg.w_q[:, head_slice(h, cfg.d_q)], cfg.w_k[:, head_slice(g, cfg.d_k)]


# ---- window ----------------------------------------------------------------------------------------------------------

def hidden_table(hidden: list, queries: list[str], keys: list[str], precision: int) -> pd.DataFrame:
    """One row per query: the keys the window hides and the weight they had together."""
    rows = []
    for i, lost in hidden:
        total = sum(w for _j, w in lost)
        rows.append({_("query"): queries[i],
                     _("keys hidden by the window"): ", ".join(
                         f"{keys[j]} ({format_numbers(np.array([w]), precision)[0]})" for j, w in lost) or "—",
                     _("weight they had"): format_numbers(np.array([total]), precision)[0]})
    return pd.DataFrame(rows).set_index(_("query"))


# ---- soft-cap --------------------------------------------------------------------------------------------------------

def cap_curve(cap: float, largest: float) -> alt.LayerChart:
    """cap · tanh(s / cap) against s, with the line s = s and the caps ±cap, over the scores' range."""
    top = min(max(3 * cap, 1.2 * largest), 1e300)  # a cap near float64's largest would overflow to inf (NaN in Vega)
    s = np.linspace(-top, top, 201)
    data = pd.DataFrame({"s": np.concatenate([s, s]), "out": np.concatenate([soft_cap(s, cap), s]),
                         "curve": np.repeat([_("capped"), _("not capped")], len(s))})
    x = alt.X("s:Q", title=_("scaled score s"))
    y = alt.Y("out:Q", title=_("score after the cap"), scale=alt.Scale(domain=[-top, top]))
    lines = alt.Chart(data).mark_line().encode(
        x=x, y=y, strokeDash=alt.StrokeDash("curve:N", title=None, legend=alt.Legend(orient="bottom")),
        color=alt.Color("curve:N", title=None, scale=alt.Scale(range=["#8073ac", "#808495"])))
    rules = alt.Chart(pd.DataFrame({"out": [cap, -cap]})).mark_rule(strokeDash=[2, 2], color="#e66101").encode(y=y)
    return (rules + lines).properties(width=320, height=220, autosize=PAD,
                                      description=_("The soft cap: cap · tanh(s / cap) against s"))


# ---- online softmax --------------------------------------------------------------------------------------------------

def tile_table(o: OnlineTrace, t_index: int, rows: list[int], queries: list[str], precision: int) -> pd.DataFrame:
    """Tile ``t_index``'s running state for the query ``rows``: m before/after, the rescale factor, l, O."""
    tile = o.tiles[t_index]

    def f(values: np.ndarray) -> list[str]:
        return format_numbers(np.asarray(values, dtype=float), precision)

    def vec(m: np.ndarray) -> list[str]:
        return ["[" + ", ".join(f(r)) + "]" for r in m]

    return pd.DataFrame({
        _("query"): [queries[i] for i in rows],
        _("m before"): f(tile.m_old[rows]), _("m after"): f(tile.m_new[rows]),
        "exp(m_old − m_new)": f(tile.rescale[rows]),
        _("l before"): f(tile.l_old[rows]), _("l after"): f(tile.l_new[rows]),
        _("O after"): vec(tile.o_new[rows]),
    }).set_index(_("query"))


def m_chart(o: OnlineTrace, i: int) -> alt.LayerChart:
    """Row ``i``'s running max m and sum l after each tile."""
    n = len(o.tiles)
    m = [float(t.m_new[i]) if np.isfinite(t.m_new[i]) else None for t in o.tiles]
    data = pd.DataFrame({"tile": np.tile(np.arange(1, n + 1), 2), "value": m + [float(t.l_new[i]) for t in o.tiles],
                         "what": np.repeat(["m", "l"], n)})
    return alt.Chart(data).mark_line(point=True).encode(
        x=alt.X("tile:O", title=_("after tile"), axis=alt.Axis(labelAngle=0)),
        y=alt.Y("value:Q", title=None),
        color=alt.Color("what:N", title=None, scale=alt.Scale(domain=["m", "l"], range=["#e66101", "#8073ac"]),
                        legend=alt.Legend(orient="bottom")),
        tooltip=[alt.Tooltip("what:N"), alt.Tooltip("tile:O"), alt.Tooltip("value:Q", format=".6g")],
    ).properties(width=max(160, 48 * n), height=180, autosize=PAD,
                 description=_("The running max m and sum l after each tile"))


# ---- KV cache --------------------------------------------------------------------------------------------------------

def cache_table(dt: DecodeTrace, tokens: list[str]) -> pd.DataFrame:
    """One row per decoded token: rows read from the cache, computed anew, dot products with and without a cache
    (DecodeTrace.dot_products_so_far)."""
    so_far, without = dt.dot_products_so_far()
    rows = [{_("token"): tokens[t], _("K, V rows from the cache"): t, _("computed"): _("q, k, v of 1 token"),
             _("dot products"): step.dot_products, _("dot products so far"): so_far[t],
             _("without a cache, so far"): without[t]} for t, step in enumerate(dt.steps)]
    return pd.DataFrame(rows).set_index(_("token"))
