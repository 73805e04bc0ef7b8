"""Modern attention: what Llama, Mistral, Qwen 3, Gemma 2 and BLOOM change in the seeds' attention, switched on one
at a time on the learner's own numbers (grouped-query heads, RoPE, QK-norm, ALiBi, a sliding window, soft-capping,
the KV cache and the online softmax of FlashAttention)."""

from collections.abc import Callable
from dataclasses import replace

import numpy as np
import streamlit as st

from attn_core import (
    AttentionInputError,
    RoPE,
    alibi_slopes,
    analysis,
    number_in_range,
    rotation_angles,
    scaled_dot_product_attention,
    shift_check,
    soft_cap,
)
from attn_ui.app import i18n, registry, state
from attn_ui.app.i18n import N_, _, ngettext
from attn_ui.shell import edit_panel, frame
from attn_ui.views import modern_views as mv
from attn_ui.widgets import charts, controls, grid_editor, heatmap, text
from attn_ui.widgets.matrix_display import block_markdown, heading_markdown, matrix_block, note_markdown
from attn_ui.widgets.numbers import exact_texts

frame.page_start(registry.MODERN)
in_panel = edit_panel.sidebar()  # X and the weights, beside what they do here
edit_panel.hint()
controls.precision_control("modern", st.sidebar)

st.markdown(_(
    "Today's language models still compute softmax(q kᵀ / √d_k) v, but around it they change a few steps: fewer key "
    "and value heads, positions turned into the queries and keys (RoPE), a window, a cap on the scores, a bias by "
    "distance, and two ways to compute the same numbers faster (tiles, a cache). Switch each on, on your own numbers: "
    "every other page (Step by step, Multi-head, Masking) computes with them too."
))
with frame.under_panel():  # on a phone right under the panel, where the value is fixed (above the first result)
    grid_editor.pending_errors_banner(registry.MODERN, in_panel=in_panel)
cfg = state.config()
if cfg.cross or cfg.score != "dot":  # each reason with the page (and the control) that switches it back
    reasons = [_("This configuration has queries from Y (cross-attention): switch back to X on Inputs & weights (“The "
                 "queries come from”).")] * cfg.cross + [_(
        "The score function here is {score}: switch back to the dot product on Score functions.").format(
        score=text.score_name(cfg.score))] * (cfg.score != "dot")
    st.info(i18n.sentences(_("These options change self-attention with the dot-product score, as in the models they "
                             "come from."), *reasons), icon=":material/info:")
    for page in [registry.INPUTS] * cfg.cross + [registry.SCORES] * (cfg.score != "dot"):
        st.page_link(page.file, label=_(page.title), icon=page.icon)
    st.stop()


# ---- changing the configuration --------------------------------------------------------------------------------
def refused() -> dict:
    return st.session_state.setdefault(mv.REFUSED, {})


def commit(key: str, make: Callable[[], dict]) -> None:
    """Apply the fields ``make()`` returns; a refusal is kept beside widget ``key`` with the value typed."""
    try:
        message = state.update_config(**make())
    except AttentionInputError as err:  # a RoPE base or a width the core refused before the configuration was made
        message = i18n.error_text(err)
    if message:  # kept with the configuration it was refused for: a change made elsewhere makes it stale
        refused()[key] = (st.session_state.get(key), message, state.config())
    else:
        refused().clear()


def current_refusal(key: str) -> tuple | None:
    entry = refused().get(key)
    return entry if entry is not None and entry[2] is state.config() else None


def shown(key: str, value: object) -> object:
    """What widget ``key`` shows: the value the core refused, if it refused one, else the configuration's."""
    entry = current_refusal(key)
    return value if entry is None else entry[0]


def refusal(key: str) -> bool:
    """Draw the message of a refused change of widget ``key`` (its name and what to change), if any."""
    if entry := current_refusal(key):
        st.error(text.md_escape(entry[1]), icon=":material/error:")
        return True
    return False


def rope_of(on: bool, base: object, layout: str) -> dict:
    return {"rope": RoPE(base, layout) if on else None}


def set_rope() -> None:
    c = state.config()
    base = c.rope.base if c.rope else 10000.0
    commit(mv.ROPE_ON, lambda: rope_of(st.session_state[mv.ROPE_ON], base, c.rope.layout if c.rope else "half"))


def set_base() -> None:
    c = state.config()
    commit(mv.ROPE_BASE, lambda: rope_of(True, st.session_state[mv.ROPE_BASE], c.rope.layout if c.rope else "half"))


def set_layout() -> None:
    c = state.config()
    commit(mv.ROPE_LAYOUT, lambda: rope_of(True, c.rope.base if c.rope else 10000.0, st.session_state[mv.ROPE_LAYOUT]))


def cap_typed(value: object) -> float:
    """What the Cap box holds, checked as its label names it (attn_core.number_in_range: a number above 0)."""
    return number_in_range(_("Cap"), value, 0.0, None, above=True)


def set_cap() -> None:
    on, value = st.session_state[mv.CAP_ON], st.session_state.get(mv.CAP)
    try:  # the box's number if it holds one the cap takes, else one at the size of the scores
        cap = cap_typed(value)
    except AttentionInputError:
        cap = mv.sensible_cap(largest_plain())
    commit(mv.CAP_ON, lambda: {"softcap": cap if on else None})


def set_cap_value() -> None:
    """The Cap box's change: refused in words, naming the box (what was typed stays in it), else applied."""
    typed = st.session_state[mv.CAP]
    try:
        cap = cap_typed(typed)
    except AttentionInputError as err:
        refused()[mv.CAP] = (typed, i18n.sentences(i18n.error_text(err), _("Still using the cap {cap}.").format(
            cap=f"{state.config().softcap:g}")), state.config())
        return
    commit(mv.CAP, lambda: {"softcap": cap})


def largest_plain() -> float:
    """The largest |scaled score| of the seeds' attention on these numbers (Gemma 2's cap is scaled to it)."""
    try:
        t = mv.trace(mv.plain(state.config()))
    except AttentionInputError:
        return 1.0
    return max(float(np.abs(h.scaled).max()) for h in t.heads)


def apply_preset(name: str) -> None:
    """The preset's options, all in one change (one Undo): a RoPE preset on an odd head width widens each head first
    (mv.widen_changes, the Widen button's change) and says so; a refusal says the preset was not applied at all."""
    before = state.config()
    try:
        changes = mv.preset_changes(name, before, largest_plain())
        message = state.set_config(replace(before, **changes), reset_editors=bool(mv.GRID_WEIGHTS & set(changes)),
                                   what=state.change(N_("preset {preset} applied"), preset=mv.PRESETS[name]))
    except AttentionInputError as err:
        message = i18n.error_text(err)
    st.session_state.pop(mv.PRESET_NOTE, None)
    if message:
        refused()["preset"] = (None, _("{preset} was not applied (nothing of it changed): {message}").format(
            preset=_(mv.PRESETS[name]), message=message), state.config())
        return
    refused().clear()
    after = state.config()
    if after.d_q != before.d_q:  # kept with the configuration it was made for: a later change makes it stale
        st.session_state[mv.PRESET_NOTE] = ((before.d_q, after.d_q), after)


def rope_waiting() -> bool:
    """Whether RoPE is switched on but refused for an odd head width (the Widen button is offered): not applied."""
    entry = current_refusal(mv.ROPE_ON)
    return bool(entry and entry[0]) and state.config().rope is None and mv.odd_width(state.config())


def widen() -> None:
    """RoPE's refusal on odd widths: one more column per head in W_Q and W_K, every value kept, then RoPE on."""
    c = state.config()
    commit(mv.ROPE_ON, lambda: mv.widen_changes(c) | {"rope": c.rope or RoPE()})


# ---- 1 · the options -------------------------------------------------------------------------------------------
st.header(_("1 · Switch the options on"))
row = st.container(horizontal=True)
for name, label in mv.PRESETS.items():
    row.button(_(label), key=f"modern_preset_{name}", on_click=apply_preset, args=(name,), help=_(mv.PRESET_HELP[name]))
if not refusal("preset") and (note := st.session_state.get(mv.PRESET_NOTE)) and note[1] is cfg:
    st.info(_("RoPE turns pairs of features: each head was widened from {d} to {even} (new columns of W_Q and W_K "
              "filled as on Inputs & weights). Undo takes it back.").format(d=note[0][0], even=note[0][1]),
            icon=":material/info:")
st.caption(_("A preset sets the options as the model does and keeps X, W_O and every value of W_Q (RoPE, in Llama / "
             "Mistral and Qwen 3, turns pairs of features: a head of odd width gets one more column in W_Q and W_K). "
             "A model's key/value heads are "
             "fewer than its query heads: Llama / Mistral, Gemma 2 and Qwen 3 take half of yours (at least 1), which "
             "keeps the first key/value heads' columns of W_K and W_V and drops the others (Undo brings them back; "
             "going back to more key/value heads draws new ones). With one head there is nothing to group (split it "
             "into heads on Multi-head)."))

left, middle, right = st.columns(3, gap="medium")
with left:
    kvs = mv.kv_choices(cfg.n_heads)
    st.selectbox(_("Key/value heads"), kvs, **state.bind(mv.KV, cfg.kv_heads, lambda: commit(
        mv.KV, lambda: mv.kv_changes(state.config(), st.session_state[mv.KV]))),
        format_func={g: (_("{g} (multi-head)") if g == cfg.n_heads else _("{g} (multi-query)") if g == 1 else
                         _("{g} (grouped)")).format(g=g) for g in kvs}.__getitem__,  # made in the run (translator)
        help=_("How many K and V heads the {n} query heads share (a divisor of n_heads). Changing it resizes W_K and "
               "W_V; every value that still fits is kept.").format(n=cfg.n_heads))
    refusal(mv.KV)
    st.toggle(_("Causal mask"), **state.bind(mv.CAUSAL, cfg.mask_kind == "causal", lambda: commit(
        mv.CAUSAL, lambda: {"mask_kind": "causal" if st.session_state[mv.CAUSAL] else "none"})),
        help=_("A decoder's mask: a token sees itself and the tokens before it. The same as on Masking."))
    st.toggle(_("QK-norm (Qwen 3)"), **state.bind(mv.QK_NORM, cfg.qk_norm, lambda: commit(
        mv.QK_NORM, lambda: {"qk_norm": st.session_state[mv.QK_NORM]})),
        help=_("RMS-normalise each head's queries and keys over d_k before RoPE (eps 10⁻⁶, no gain)."))
    st.toggle(_("ALiBi (BLOOM)"), **state.bind(mv.ALIBI, cfg.alibi, lambda: commit(
        mv.ALIBI, lambda: {"alibi": st.session_state[mv.ALIBI]})),
        help=_("Add −m_h · (i − j) to head h's scores, one slope per head: a penalty growing with the distance to an "
               "earlier key (without the causal mask, a bonus growing with the distance to a later key)."))
with middle:
    st.toggle(_("RoPE (Llama, Mistral, Qwen)"), **state.bind(mv.ROPE_ON, shown(mv.ROPE_ON, cfg.rope is not None),
                                                            set_rope),
              help=_("Rotate each pair of a head's query and key features by an angle proportional to the position."))
    if refusal(mv.ROPE_ON) and mv.odd_width(cfg):
        st.button(_("Widen the heads to {even}").format(even=cfg.d_k + cfg.d_k % 2), key="modern_widen",
                  on_click=widen, width="stretch", help=_(
                      "One more column per head of W_Q and W_K ({d} → {even}), every value kept; then RoPE is "
                      "applied.").format(d=cfg.d_k, even=cfg.d_k + cfg.d_k % 2))
    if cfg.rope is not None:
        st.number_input(_("RoPE base θ"), min_value=None, step=1000.0, format="%g",
                        **state.bind(mv.ROPE_BASE, shown(mv.ROPE_BASE, cfg.rope.base), set_base),
                        help=_("θ_i = base^(−2i/d_k): 10,000 in Llama 2, 500,000 in Llama 3, 1,000,000 in Qwen 3."))
        refusal(mv.ROPE_BASE)
        st.radio(_("Layout"), list(mv.LAYOUTS), format_func=i18n.option_labels(mv.LAYOUTS),
                 **state.bind(mv.ROPE_LAYOUT, cfg.rope.layout, set_layout))
with right:
    windows = [0, *range(1, cfg.n_seq + 1)]
    window_labels = {0: _("off"), **{w: str(w) for w in windows[1:]}}  # made in the run (i18n.translator)
    st.select_slider(_("Sliding window W (Mistral)"), windows, format_func=window_labels.__getitem__,
                     **state.bind(mv.WINDOW, cfg.window or 0, lambda: commit(
                         mv.WINDOW, lambda: {"window": st.session_state[mv.WINDOW] or None})),
                     help=_("Each query sees at most W keys: itself and the W − 1 before it (with the causal mask)."))
    st.toggle(_("Soft-cap the scores (Gemma 2)"), **state.bind(mv.CAP_ON, cfg.softcap is not None, set_cap))
    refusal(mv.CAP_ON)
    if cfg.softcap is not None or mv.CAP in refused():
        controls.number_input(_("Cap"), step=0.1, **state.bind(mv.CAP, shown(mv.CAP, cfg.softcap), set_cap_value),
                              help=_("Scores become cap · tanh(s / cap): never beyond ±cap."))
        refusal(mv.CAP)

cfg = state.config()
st.markdown(block_markdown(heading_markdown(_("The pipeline these options make"), 3),
                           "  \n".join(f"**{what}** · {formulas}" for what, formulas in mv.pipeline(cfg))))

try:
    trace = mv.trace(cfg)
except AttentionInputError as err:
    page = _(registry.INPUTS.title)
    st.error(_("This configuration cannot be computed: {message} Change it on {page}.").format(
        message=text.md_escape(i18n.error_text(err)), page=page), icon=":material/error:")
    st.stop()

queries, keys = text.query_labels(cfg), text.token_labels(cfg)
head = controls.head_selector(cfg.n_heads, "modern")
t = trace.heads[head]


def of_head(title: str, title_head: str) -> str:
    """A title (both marked texts), naming the head shown when the configuration has several."""
    return _(title_head).format(head=head) if cfg.n_heads > 1 else _(title)


base_trace = mv.trace(mv.plain(cfg))
u = base_trace.heads[head]


def weights_block() -> None:
    matrix_block(of_head(N_("Weights, with these options"), N_("Weights (head {head}), with these options")), "",
                 t.weights, queries, keys,
                 kind="weights", y_title=_("query"), x_title=_("key"),
                 masked=None if t.mask is None else ~t.mask)


frame.also_under_panel(weights_block)  # on a phone; and here, under the options that change it
weights_block()
both = analysis.rows_with_keys(t.mask, cfg.n_q) & analysis.rows_with_keys(u.mask, cfg.n_q)  # rows with no key left:
cmp = analysis.compare_rows(t.weights, u.weights, both) if mv.changes_a_score(cfg) else None  # nothing to compare
st.markdown(i18n.sentences(*mv.weights_said(cfg, cmp, queries, keys, rope_waiting=rope_waiting())))

# ---- 2–8 · one section at a time --------------------------------------------------------------------------------
st.header(_("2–8 · Each step, on your numbers"))
section = controls.view_picker(_("Section shown"), mv.SECTIONS, key=mv.SECTION)
precision = controls.precision()


def fmt(x: float) -> str:
    """A number with at least 4 significant digits, with the minus sign the app prints."""
    return f"{x:.{max(precision, 4)}g}".replace("-", "−")


def small(x: float) -> str:
    """A difference, to 3 significant digits (2.22e−16)."""
    return f"{x:.3g}".replace("-", "−")


def gqa() -> None:
    st.subheader(_("Grouped-query attention"))
    n_kv = cfg.kv_heads
    mine, mha = mv.cache_bytes(cfg), mv.cache_bytes(cfg, cfg.n_heads)
    charts.show_chart(charts.cached_chart(mv.gqa_diagram, cfg.n_heads, n_kv), name=_("Grouped-query attention"))
    st.markdown(block_markdown(i18n.sentences(
        ngettext("{n} query head reads", "{n} query heads read", cfg.n_heads).format(n=cfg.n_heads),
        ngettext("{g} K matrix and {g} V matrix: W_K is {d_model} × {wk} and W_V {d_model} × {wv} ({g} head of d_k = "
                 "{d_k} and d_v = {d_v}).",
                 "{g} K matrices and {g} V matrices: W_K is {d_model} × {wk} and W_V {d_model} × {wv} ({g} heads of "
                 "d_k = {d_k} and d_v = {d_v}).", n_kv).format(
            g=n_kv, d_model=cfg.d_model, wk=cfg.w_k.shape[1], wv=cfg.w_v.shape[1], d_k=cfg.d_k, d_v=cfg.d_v),
    ), (_("**Memory of a KV cache**, per token and layer, at {b} bytes a number (float16, as models serve): "
                   "{n_kv} × (d_k + d_v) × {b} = **{mine:,} bytes**, against {n} × (d_k + d_v) × {b} = {mha:,} bytes "
                   "with one K/V head per query head: **{ratio:g} times less**.") if mine < mha else
                 _("**Memory of a KV cache**, per token and layer, at {b} bytes a number (float16, as models serve): "
                   "{n_kv} × (d_k + d_v) × {b} = **{mine:,} bytes**, as much as multi-head attention holds.")).format(
        b=mv.BYTES_PER_NUMBER, n_kv=n_kv, n=cfg.n_heads, mine=mine, mha=mha, ratio=mha / mine)))
    if n_kv == cfg.n_heads:
        st.info(_("Every query head has its own K and V here (multi-head attention). Choose fewer key/value heads "
                  "above to share them.") if cfg.n_heads > 1 else
                _("One head: nothing to share. Split the weights into heads on Multi-head, then share K and V here."),
                icon=":material/info:")
    per_group = max(1, 8 // n_kv)  # at most about 8 heatmaps: each costs the browser on every run
    for g, hs in mv.groups(cfg.n_heads, n_kv):
        shown = hs[:per_group]
        label = f"**{mv.group_label(g, hs)}**"
        if len(shown) > 1:  # above the group's heatmaps side by side; over a lone heatmap, in its block's Markdown
            st.markdown(label)
        spots = controls.side_by_side([heatmap.heatmap_width(trace.heads[h].weights, queries, precision)
                                       for h in shown])
        for spot, h in zip(spots, shown, strict=True):
            with spot:
                w = trace.heads[h]
                matrix_block(_("Weights (head {h})").format(h=h), "", w.weights, queries, keys, kind="weights",
                             y_title=_("query"), x_title=_("key"),
                             masked=None if w.mask is None else ~w.mask, intro=label if len(shown) == 1 else "")


def rope() -> None:
    title = _("RoPE: positions turned into the queries and keys")
    if cfg.rope is None:
        st.subheader(title)
        st.info(_("RoPE is off. Switch it on above (or a Llama / Mistral or Qwen 3 preset)."), icon=":material/info:")
        return
    g = trace.kv_heads[head]
    st.markdown(block_markdown(heading_markdown(title, 3), _(
        "Each pair i of a head's features turns by the angle p · θ_i, θ_i = {base}^(−2i/{d}), p the token's position; "
        "layout **{layout}**. {norm}").format(
        base=mv.base_text(cfg.rope.base), d=cfg.d_k, layout=_(mv.LAYOUTS[cfg.rope.layout]),
        norm=_("QK-norm comes first: RoPE turns the normed rows.") if cfg.qk_norm else "")))
    q0, q1 = mv.before_rope(trace, head, "q"), trace.q_rotated[head]
    k0, k1 = mv.before_rope(trace, head, "k"), trace.k_rotated[g]
    cols = text.dim_labels(cfg.d_k)
    for name, before, after in (("Q", q0, q1), ("K", k0, k1)):
        dom = heatmap.shared_domain(before, after)
        a, b = controls.pair(before, after, queries)
        which = (of_head("Q", N_("Q (head {head})")) if name == "Q" else
                 _("K (K/V head {g})").format(g=g) if cfg.n_heads > 1 else "K")
        with a:
            matrix_block(_("{m} before RoPE").format(m=which), "", before, queries, cols, domain=dom,
                         y_title=_("position"), x_title=_("dimension"))
        with b:
            matrix_block(_("{m} after RoPE").format(m=which), "", after, queries, cols, domain=dom,
                         y_title=_("position"), x_title=_("dimension"))
    theta = rotation_angles(np.arange(cfg.n_seq), cfg.d_k, cfg.rope.base)  # [n_seq, d_k/2]
    matrix_block(_("Angles p · θ_i (radians)"), r"\varphi_{p,i} = p\,\theta_i", theta, queries,
                 [f"i={i}" for i in range(theta.shape[1])], y_title=_("position"), x_title=_("pair"))
    st.markdown(_("**What RoPE makes true:** a query and a key score the same wherever the pair sits; only m − n "
                  "counts. Pick a pair and a shift:"))
    a, b, c = st.columns(3)
    m = a.selectbox(_("query at position m"), range(cfg.n_seq), format_func=lambda i: queries[i],
                    **state.bind(mv.PAIR_M, state.kept(mv.PAIR_M, cfg.n_seq - 1, list(range(cfg.n_seq)))))
    n = b.selectbox(_("key at position n"), range(cfg.n_seq), format_func=lambda i: keys[i],
                    **state.bind(mv.PAIR_N, state.kept(mv.PAIR_N, 0, list(range(cfg.n_seq)))))
    s = controls.whole_box(_("shift s"), mv.SHIFT, 5, 0, mv.MAX_SHIFT,
                           lambda s: _("Still using s = {s}.").format(s=s), where=c,
                           help=_("Positions added to m and n: a whole number from 0 to {most}.").format(
                               most=mv.MAX_SHIFT))
    w_q, w_k = mv.head_weights(cfg, head)
    chk = shift_check(q0[m], k0[n], m, n, s, cfg.x[m], cfg.x[n], w_q, w_k, base=cfg.rope.base,
                      layout=cfg.rope.layout)
    st.dataframe({"": [f"(m, n) = ({m}, {n})", f"(m+s, n+s) = ({m + s}, {n + s})", _("difference")],
                  _("with RoPE"): [fmt(chk.rope_at), fmt(chk.rope_shifted), small(chk.rope_change)],
                  _("positions added to X"): [fmt(chk.abs_at), fmt(chk.abs_shifted), small(chk.abs_change)]},
                 hide_index=True)
    st.caption(_("with RoPE: R(m)q · R(n)k, the head's query and key as RoPE receives them; positions added to X: the "
                 "original Transformer's sinusoidal encoding of the position added to the token's row of X, then "
                 "the head's W_Q and W_K, no RoPE."))
    st.markdown(_("With RoPE the two scores differ by {d_rope}: equal to float64 rounding (the rotations by m + s and "
                  "n + s differ by the same angle (m − n)θ_i). With the original Transformer's positions added to X "
                  "they differ by {d_abs}: the score depends on where the pair sits, not only on m − n.").format(
        d_rope=small(chk.rope_change), d_abs=small(chk.abs_change)))


def window() -> None:
    title = _("The sliding window")
    if cfg.window is None:
        st.subheader(title)
        st.info(_("The window is off. Choose W above (or the Llama / Mistral preset)."), icon=":material/info:")
        return
    causal = cfg.mask_kind == "causal"
    mask = np.ones(t.weights.shape, dtype=bool) if t.mask is None else t.mask
    rule = (ngettext("Query i sees key j when **i − {w} < j ≤ i**: itself and the {w1} key before it, {w} at most "
                     "(Mistral's inclusive rule).",
                     "Query i sees key j when **i − {w} < j ≤ i**: itself and the {w1} keys before it, {w} at most "
                     "(Mistral's inclusive rule).", cfg.window - 1).format(w=cfg.window, w1=cfg.window - 1)
            if causal else
            _("Query i sees key j when **|i − j| < {w}** (no causal mask: both sides). Switch the causal mask on for "
              "Mistral's rule i − {w} < j ≤ i.").format(w=cfg.window))
    st.markdown(block_markdown(heading_markdown(title, 3), rule, _(
        "**The mask the heads use** (window ∧ the configuration's mask) · shape {r} × {c}").format(
        r=mask.shape[0], c=mask.shape[1])))
    charts.show_chart(heatmap.heatmap(mask.astype(float), queries, keys, kind="weights", precision=0, masked=~mask,
                                      x_title=_("key"), y_title=_("query")))
    before_t = mv.trace(replace(cfg, window=None)).heads[head]
    hidden = analysis.hidden_by_window(before_t.mask, mask, before_t.weights)
    n_hidden = sum(len(lost) for _i, lost in hidden)
    st.markdown(_("**What a query can no longer see**: the keys the window hides that the mask alone allowed, and "
                  "the weight each had without the window ({n} in all).").format(n=n_hidden))
    st.dataframe(mv.hidden_table(hidden, queries, keys, precision))
    if not n_hidden:
        st.caption(_("W = {w} hides nothing here: the mask alone already hides every key the window would. Choose a "
                     "smaller W.").format(w=cfg.window))


def softcap() -> None:
    title = _("Soft-capping the scores")
    largest = largest_plain()
    gemma = largest - float(soft_cap(np.array([largest]), mv.GEMMA_CAP)[0])  # what a cap of 50 takes off it
    why = _("Gemma 2 caps at 50: its scores reach tens. The largest |scaled score| of the tutorials' attention on your "
            "numbers (every head) is {s}; a cap of 50 would pull it in by only {g}, so the Gemma 2 preset takes a cap "
            "at the size of your scores ({cap:g}, the largest rounded), which pulls it in by about a quarter, as 50 "
            "does to a score of 50.").format(s=fmt(largest), g=small(gemma), cap=mv.sensible_cap(largest))
    if cfg.softcap is None:
        st.subheader(title)
        st.info(why, icon=":material/info:")
        st.info(_("The soft-cap is off. Switch it on above (or the Gemma 2 preset)."), icon=":material/info:")
        return
    st.markdown(block_markdown(heading_markdown(title, 3), _(
        "After scaling and before the bias and the mask: s ← {cap:g} · tanh(s / {cap:g}).").format(cap=cfg.softcap)))
    dom = heatmap.shared_domain(t.scaled, t.capped)
    a, b = controls.pair(t.scaled, t.capped, queries)
    with a:
        matrix_block(of_head(N_("Scaled scores"), N_("Scaled scores (head {head})")), "", t.scaled, queries, keys,
                     domain=dom, y_title=_("query"), x_title=_("key"))
    with b:
        matrix_block(of_head(N_("Capped"), N_("Capped (head {head})")), "", t.capped, queries, keys, domain=dom,
                     y_title=_("query"), x_title=_("key"))
    cs = analysis.cap_summary(t.scaled, t.capped)
    m_text, cap_text = fmt(cs.largest_capped), fmt(cfg.softcap)
    if m_text == cap_text:  # below the cap but not by 4 digits: every digit, so the two read apart
        m_text, cap_text = (t.replace("-", "−") for t in exact_texts(np.array([cs.largest_capped, cfg.softcap])))
    reached = cs.largest_capped >= cfg.softcap  # tanh(s / c) rounds to 1.0 in float64 once |s| / c ≳ 19
    st.markdown((_("The largest change is **{c}** (query {q}, key {k}); the largest |capped score| is the cap itself, "
                   "{cap}: tanh(s / c) rounds to exactly 1 in float64 once |s| / c is above about 19, so these "
                   "scores reach the cap.") if reached else
                 _("The largest change is **{c}** (query {q}, key {k}); the largest |capped score| is {m}, below the "
                   "cap {cap}: no score reaches it.")).format(
        c=fmt(cs.largest_change), q=text.md_escape(queries[cs.at[0]]), k=text.md_escape(keys[cs.at[1]]),
        m=m_text, cap=cap_text))
    charts.show_chart(charts.cached_chart(mv.cap_curve, cfg.softcap, float(np.abs(t.scaled).max())))
    st.caption(why)


def alibi() -> None:
    st.subheader(_("ALiBi: a bias by distance"))
    if not cfg.alibi:
        st.info(_("ALiBi is off. Switch it on above (or the BLOOM preset)."), icon=":material/info:")
        return
    slopes = alibi_slopes(cfg.n_heads)
    st.dataframe({_("head"): list(range(cfg.n_heads)), _("slope m_h"): [fmt(x) for x in slopes]}, hide_index=True)
    st.markdown(_("Head h adds −m_h · (i − j) to its scores, after the scale (and the cap) and before the mask and "
                  "softmax. With n heads, n a power of two, head h (counted from 0) has the slope m_h = 2^(−8(h+1)/n), "
                  "a geometric sequence; for another n the paper takes the slopes for the power of two below n, then "
                  "every other slope for twice that power, as many as are missing (the table above). There are no "
                  "positions in X: the bias is "
                  "the only place a position enters."))
    reach = analysis.bias_reach(trace.alibi[head], t.mask)  # on the keys each query sees (mask and window)
    where = of_head(N_("Here"), N_("Here (head {head})"))
    said = []
    if reach.penalty:
        b, i, j = reach.penalty
        said.append(_("{where}, a key before its query is penalised, the farther the more: down to {b} (query {q}, "
                      "key {k}).").format(where=where, b=fmt(b), q=text.md_escape(queries[i]),
                                          k=text.md_escape(keys[j])))
    if reach.bonus:
        b, i, j = reach.bonus
        favoured = (_("A key after its query is favoured, the farther the more: up to +{b} (query {q}, key {k}); "
                      "without the causal mask ALiBi rewards later keys (it is defined for causal models).") if said
                    else _("{where}, a key after its query is favoured, the farther the more: up to +{b} (query {q}, "
                           "key {k}); without the causal mask ALiBi rewards later keys (it is defined for causal "
                           "models)."))  # "Here" once
        said.append(favoured.format(where=where, b=fmt(b), q=text.md_escape(queries[i]), k=text.md_escape(keys[j])))
    elif reach.penalty:
        said.append(_("No query sees a key after it, so no key is favoured."))
    if not said:
        said.append(_("{where}, no query sees a key at another position: the bias is 0 on every key left.").format(
            where=where))
    st.markdown(i18n.sentences(*said))
    a, b = controls.pair(trace.alibi[head], t.biased, queries)
    with a:
        matrix_block(of_head(N_("ALiBi bias"), N_("ALiBi bias (head {head})")), r"-m_h\,(i-j)", trace.alibi[head],
                     queries, keys,
                     y_title=_("query"), x_title=_("key"))
    with b:
        matrix_block(of_head(N_("Scores + bias"), N_("Scores + bias (head {head})")), "", t.biased, queries, keys,
                     y_title=_("query"), x_title=_("key"))


def online() -> None:
    st.markdown(block_markdown(heading_markdown(_("Online softmax: FlashAttention's tiles"), 3), _(
        "FlashAttention never holds a whole row of scores: it reads the keys a block at a time and keeps, "
                  "per query, the running max m, the running sum l of exp(s − m) and the unnormalised output O. When "
                  "a block holds a larger score, m rises and l and O so far are multiplied by exp(m_old − m_new). "
                  "With one block (B = n) m is each row's max and p = exp(s − m): the Korean blog post's stable "
                  "softmax (subtract the row max, see Masking) is its first step, l its denominator.")))
    a, b = st.columns(2)
    sizes = mv.block_sizes(cfg.n_seq)
    block = a.select_slider(_("Keys per tile (block size B)"), sizes,
                            help=_("At most {most} tiles: each keeps its own m, l and O.").format(most=mv.MAX_TILES),
                            **state.bind(mv.BLOCK, state.kept(mv.BLOCK, max(sizes[0], cfg.n_seq // 2), sizes)))
    rows_all = -1
    row = b.selectbox(_("Query rows"), [rows_all, *range(cfg.n_q)],
                      format_func={rows_all: _("all"), **dict(enumerate(queries))}.__getitem__,
                      **state.bind(mv.ROW, state.kept(mv.ROW, rows_all, [rows_all, *range(cfg.n_q)])))
    o = mv.online(t.q, t.k, t.v, int(block), float(t.divisor), t.mask)
    tiles = list(range(len(o.tiles)))
    tile_labels = [_("{i} of {n}").format(i=i + 1, n=len(tiles)) for i in tiles]
    pick = st.select_slider(_("Tile"), tiles, format_func=tile_labels.__getitem__,
                            **state.bind(mv.TILE, state.kept(mv.TILE, 0, tiles))) if len(tiles) > 1 else 0
    tile = o.tiles[pick]
    rows = list(range(cfg.n_q)) if row == rows_all else [row]
    cols = keys[tile.start:tile.stop]
    matrix_block(_("Tile {i}: the block's scaled scores, keys {a}–{b}").format(i=pick + 1, a=tile.start,
                                                                               b=tile.stop - 1),
                 "", tile.scores[rows], [queries[i] for i in rows], cols, y_title=_("query"), x_title=_("key"))
    st.dataframe(mv.tile_table(o, pick, rows, queries, precision))
    keep = analysis.rows_with_keys(t.mask, cfg.n_q)  # a query with no key left: m stays −∞, l 0
    i = max(rows, key=lambda r: (len(o.rises(r)), keep[r]))  # where m rose most often (else one with keys)
    r = o.rises(i)
    if not keep[i]:
        said = _("{q} has no key left: m stays −∞ and l 0 after every tile, so nothing is rescaled.").format(
            q=text.md_escape(queries[i]))
    elif r:
        said = i18n.sentences(*(_("In tile {t}, {q} meets a larger score: m rises from {a} to {b}, and l and O so far "
                                  "are multiplied by exp({a} − {b_}) = {f}.").format(
            t=k + 1, q=text.md_escape(queries[i]), a=fmt(m0), b=fmt(m1), b_=fmt(m1) if m1 >= 0 else f"({fmt(m1)})",
            f=fmt(f)) for k, m0, m1, f in r))
    else:
        said = _("For {q} no later tile holds a larger score than the ones before it, so nothing is rescaled. Try a "
                 "block of 1, or another query.").format(q=text.md_escape(queries[i]))
    st.markdown(block_markdown(said, _("**m and l of {q} after each tile**").format(q=text.md_escape(queries[i]))))
    charts.show_chart(charts.cached_chart(mv.m_chart, o, i))
    if t.softcap is None and t.bias is None:
        ref, what = t.output, of_head(N_("the softmax output shown on Step by step"),
                                         N_("the softmax output of head {head} shown on Step by step"))
    else:
        ref = scaled_dot_product_attention(t.q, t.k, t.v, scale=float(t.divisor), mask=t.mask).output
        what = _("softmax(q kᵀ / s) v without the cap and ALiBi (the tiles here take the scaled scores; "
                 "FlashAttention applies those inside each tile)")
    lse = analysis.logsumexp(scaled_dot_product_attention(t.q, t.k, t.v, scale=float(t.divisor), mask=t.mask).masked)
    out, sums = analysis.compare_rows(o.output, ref, keep), analysis.compare_rows(o.logsumexp, lse, keep)
    if out.largest is None:
        st.markdown(_("**After the last tile**: no query has a key left (l = 0 in every row, each output row 0 by "
                      "definition): there is nothing to compare."))
        return
    st.markdown(i18n.sentences(_(
        "**After the last tile**: O / l equals {what}: largest difference **{d}**. m + log l equals each row's "
        "log-sum-exp log Σ_j exp(s_ij): largest difference **{e}**.").format(
        what=what, d=small(out.largest), e=small(sums.largest)), ngettext(
        "No key is left for query {queries} (l = 0, its output row 0 by definition): it is not compared.",
        "No key is left for queries {queries} (l = 0, their output rows 0 by definition): they are not compared.",
        len(out.left_out)).format(queries=_(", ").join(text.md_escape(queries[j]) for j in out.left_out))
        if out.left_out else ""))


def cache() -> None:
    dt = mv.decode(cfg)
    whole = mv.trace(mv.causal_config(cfg))
    st.markdown(block_markdown(
        heading_markdown(_("KV cache: decoding token by token"), 3),
        _("A model writes one token at a time. Token t's attention row does not change once written (the causal "
          "mask), so each step computes only the new token's q, k and v and reads the earlier keys and values from a "
          "cache (the keys kept as scored: after QK-norm and RoPE)."),
        note_markdown(_("Decoding is causal: it is compared with this configuration under the causal mask."))
        if cfg.mask_kind != "causal" else "",
        note_markdown(_("The first {k} of the {n} tokens are decoded here: every step keeps its own cache and trace, "
                        "so the memory grows with the square of the tokens.").format(k=len(dt.steps), n=cfg.n_seq))
        if len(dt.steps) < cfg.n_seq else ""))
    steps = list(range(len(dt.steps)))
    n = st.select_slider(_("Token decoded"), steps, format_func=lambda i: keys[i],
                         **state.bind(mv.STEP, state.kept(mv.STEP, steps[-1], steps))) if len(steps) > 1 else 0
    step = dt.steps[n]
    st.markdown(ngettext(
        "Token {tok}: **computed** its q, k, v (one row each); **from the cache** {n} rows of K and V; {dots} dot "
        "products (its one query against {k} keys, in {h} head), where one forward pass over the {k} tokens without "
        "a cache computes {again} ({k} queries × {k} keys × {h} head).",
        "Token {tok}: **computed** its q, k, v (one row each); **from the cache** {n} rows of K and V; {dots} dot "
        "products (its one query against {k} keys, in each of {h} heads), where one forward pass over the {k} tokens "
        "without a cache computes {again} ({k} queries × {k} keys × {h} heads).", cfg.n_heads).format(
        tok=text.md_escape(keys[n]), n=n, dots=step.dot_products, k=n + 1, h=cfg.n_heads,
        again=step.dot_products_without_cache))
    row1 = [keys[n]]
    a, b = controls.side_by_side([heatmap.heatmap_width(step.k_cache, keys[:n + 1], precision)] * 2)
    with a:
        matrix_block(_("K cache after this step"), "", step.k_cache, keys[:n + 1],
                     text.dim_labels(step.k_cache.shape[1]), y_title=_("key"), x_title=_("dimension"),
                     note=_("the last row is new; the others came from the cache"))
    with b:
        matrix_block(_("V cache after this step"), "", step.v_cache, keys[:n + 1],
                     text.dim_labels(step.v_cache.shape[1]), y_title=_("key"), x_title=_("dimension"),
                     note=_("the last row is new"))
    sw = step.trace.heads[head]
    matrix_block(of_head(N_("Weights of the new query"), N_("Weights of the new query (head {head})")), "",
                 sw.weights, row1, keys[:n + 1], y_title=_("query"), x_title=_("key"),
                 kind="weights", masked=None if sw.mask is None else ~sw.mask)
    st.dataframe(mv.cache_table(dt, keys))
    decoded = len(dt.steps)  # causal: every query keeps its own key, so every decoded row is compared
    same = analysis.compare_rows(dt.output, whole.output[:decoded], analysis.rows_with_keys(None, decoded))
    st.markdown(_("The cached outputs, stacked, equal the whole causal forward pass: largest difference **{d}**.")
                .format(d=small(same.largest)))


{mv.GQA: gqa, mv.ROPE_S: rope, mv.WINDOW_S: window, mv.CAP_S: softcap, mv.ALIBI_S: alibi, mv.ONLINE: online,
 mv.CACHE: cache}[section]()
