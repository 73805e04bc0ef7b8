"""Multi-head: cut W_Q, W_K, W_V into column slices, attend per head, concatenate, project with W_O."""


import numpy as np
import streamlit as st

from attn_core import (
    INITIALIZERS,
    LIMITS,
    AttentionInputError,
    config_mask,
    cross_attention,
    head_score,
    head_slice,
    initialize,
    valid_head_counts,
)
from attn_ui import (
    charts,
    compute,
    controls,
    frame,
    grid_editor,
    head_views,
    heatmap,
    registry,
    state,
    step_by_step,
    text,
)
from attn_ui.matrix_display import formula

frame.page_start(registry.MULTIHEAD)

WANTED = "heads_wanted"  # number_input: the head count the learner asks for
PICK = "heads_pick"  # segmented_control: the head to open on Step by step
BLOCK_HEAD = "heads_block_head"  # segmented_control: the head whose block of concat is printed (section 4)
WEIGHTS_SHOWN = "heads_weights_shown"  # segmented control: W_Q, W_K or W_V
SECTION_SHOWN = "heads_section_shown"  # segmented control: one of sections 3 to 7
WEIGHTS = {"W_Q": "w_q", "W_K": "w_k", "W_V": "w_v"}  # label: matrix
METRIC = "max |multi-head output − single-head output|"
CONCAT_METRIC = "max |concat − single-head output|"  # when W_O changes the width: the output cannot be compared
INIT_NAMES = list(INITIALIZERS)


def use_heads(n_heads: int) -> None:
    """on_click: switch to a valid head count (and show it in the number box)."""
    if message := state.update_config(**state.with_heads(state.config(), n_heads)):
        state.notify(message)
    st.session_state[WANTED] = state.config().n_heads


def pick_head() -> None:
    if st.session_state[PICK] is not None:
        st.session_state[state.HEAD] = st.session_state[PICK]


def fill_w_o() -> None:
    ss = st.session_state
    values = initialize(ss["heads_w_o_init"], state.config().w_o.shape, seed=ss["heads_w_o_seed"])
    if message := state.update_config(w_o=values):
        state.notify(message)


def one_head_identity() -> None:
    """on_click: the setting in which multi-head attention is plain single-head attention."""
    width = state.config().w_v.shape[1]
    use_heads(1)
    if message := state.update_config(w_o=np.eye(width)):
        state.notify(message)


def columns(s: slice) -> str:
    return f"column {s.start}" if s.stop - s.start == 1 else f"columns {s.start}–{s.stop - 1}"


def show_matrix(
    values: np.ndarray, rows: list[str], *, key: str, title: str, y_title: str, n_heads: int | None = None,
    x_title: str = "column",
) -> bool:
    """A (head-marked) matrix; when its rows exceed the drawing budget, a page of rows at a time (a selectbox).

    Every column is always drawn (the head slices are columns); the colours use the whole matrix. Returns whether
    every number of the matrix is printed on its cell (all rows on one page, and numbers shown).
    """
    pages = controls.pages_of(values.shape[0], head_views.rows_that_fit(*values.shape))
    shown = pages[0]
    if len(pages) > 1:
        shown = pages[st.selectbox(
            f"Rows shown ({values.shape[0]} in all, {len(pages[0])} at a time)", range(len(pages)),
            format_func=lambda p: f"rows {pages[p].start}–{pages[p].stop - 1}", key=f"heads_{key}_rows", width=320,
            help="Drawing every row at once would slow the page down. Every column is drawn (so every head's slice "
                 "shows), and the colours use the whole matrix.",
        )]
    part = slice(shown.start, shown.stop)
    chart = head_views.head_matrix(
        values[part], rows[part], n_heads=n_heads, title=title, x_title=x_title, y_title=y_title,
        precision=controls.precision(), domain=heatmap.shared_domain(values),
    )
    charts.show_chart(chart)
    return len(pages) == 1 and chart.layout.show_text


if notice := state.pop_notice():
    st.warning(text.md_escape(notice), icon=":material/warning:")
grid_editor.pending_errors_banner(registry.MULTIHEAD)
st.markdown(
    "Several heads attend **side by side**, each with its own slice of the weights. W_Q, W_K and W_V are "
    "cut by columns into `n_heads` equal slices; head h runs ordinary scaled dot-product attention on "
    "its slices; the head outputs are laid side by side and W_O mixes them into the output."
)
formula(rf"\mathrm{{head}}_h = \mathrm{{Attention}}\big({'Y' if state.config().cross else 'X'} W_Q^{{(h)}},\, "
        r"X W_K^{(h)},\, X W_V^{(h)}\big),\qquad"
        r"\mathrm{MultiHead}(X) = [\,\mathrm{head}_0 \mid \cdots \mid \mathrm{head}_{n-1}\,]\; W_O")

# ---- 1. how many heads ----------------------------------------------------------------------------
cfg = state.config()
st.header("1 · How many heads")
d_qk, d_kk, d_v = cfg.w_q.shape[1], cfg.w_k.shape[1], cfg.w_v.shape[1]  # n_heads·d_q, n_heads·d_k, n_heads·d_v
same_qk = d_qk == d_kk
valid = [h for h in valid_head_counts(d_qk, d_v, d_kk) if h <= LIMITS.n_heads]
qk_cols = (f"the {d_qk} columns of W_Q/W_K" if same_qk else f"the {d_qk} columns of W_Q, the {d_kk} of W_K")
st.session_state.setdefault(WANTED, cfg.n_heads)
wanted = int(st.number_input(
    "Number of heads (n_heads)", min_value=1, max_value=LIMITS.n_heads, step=1, key=WANTED, width=240,
    help=f"Must divide {qk_cols} and the {d_v} columns of W_V; at most {LIMITS.n_heads}.",
))
if wanted != cfg.n_heads and wanted in valid:
    if message := state.update_config(**state.with_heads(cfg, wanted)):
        st.error(text.md_escape(message), icon=":material/error:")
    cfg = state.config()
if wanted not in valid:
    nearest = sorted(sorted(valid, key=lambda h: (abs(h - wanted), h))[:2])
    qk_fit = (f"W_Q and W_K have {d_qk} columns ({d_qk} ÷ {wanted} = {d_qk / wanted:.4g})" if same_qk else
              f"W_Q has {d_qk} columns ({d_qk} ÷ {wanted} = {d_qk / wanted:.4g}), W_K {d_kk} ({d_kk} ÷ {wanted} = "
              f"{d_kk / wanted:.4g})")
    st.warning(
        f"**{wanted} heads do not fit.** Every head needs an equal slice of the columns: {qk_fit} and W_V has "
        f"{d_v} ({d_v} ÷ {wanted} = {d_v / wanted:.4g}), so n_heads must divide "
        f"{'both' if same_qk else 'all three'}. Valid choices: {', '.join(map(str, valid))}. "
        f"Nearest: {' or '.join(map(str, nearest))}. Still showing {cfg.n_heads} head{'s' * (cfg.n_heads > 1)}; "
        "or change the widths on Inputs & weights.",
        icon=":material/warning:",
    )
    for col, h in zip(st.columns(len(nearest) + 4)[:len(nearest)], nearest, strict=True):
        col.button(f"Use {h} head{'s' * (h > 1)}", key=f"heads_use_{h}", on_click=use_heads, args=(h,))
mask_text = {"none": "no mask", "causal": "the causal mask", "padding": "the padding mask",
             "custom": "the custom mask"}[cfg.mask_kind]
qk_widths = (f"d_k per head **{cfg.d_k}** ({d_qk} columns of W_Q and W_K ÷ {cfg.n_heads})" if same_qk else
             f"d_q per head **{cfg.d_q}** ({d_qk} columns of W_Q ÷ {cfg.n_heads}) · d_k per head **{cfg.d_k}** "
             f"({d_kk} columns of W_K ÷ {cfg.n_heads})")
d_a = f" · d_a per head **{cfg.d_a}** ({cfg.w_1.shape[1]} columns of W_1, W_2 ÷ {cfg.n_heads})" if cfg.d_a else ""
score_note = ("" if cfg.score == "dot" else
              f" Each head scores with {step_by_step.SCORE_TEXT[cfg.score]}, using its own column slice of "
              f"{'W_a' if cfg.score == 'general' else 'W_1, W_2 and v_a'} (see Score functions); a change of the "
              "head count keeps the values of those weights that still fit.")
cross_note = (f" The queries come from Y ({cfg.n_q} rows), the keys and values from X ({cfg.n_seq} rows)."
              if cfg.cross else "")
st.markdown(  # one element, not a row of metrics and a box: the browser redraws every element on every edit
    f"**{cfg.n_heads} head{'s' * (cfg.n_heads > 1)}** (valid for these widths: **{', '.join(map(str, valid))}**)"
    f" · {qk_widths} · d_v per head **{cfg.d_v}** "
    f"({d_v} columns of W_V ÷ {cfg.n_heads}){d_a} · concat width n_heads·d_v **{cfg.n_heads * cfg.d_v}**  \n"
    f":material/info: The configuration's scale ({text.scale_text(cfg)}, d_k per head) and {mask_text} apply to "
    f"every head alike; change them on Scaling and Masking.{score_note}{cross_note}"
)

# ---- 2. the weights, cut into heads ---------------------------------------------------------------
st.header("2 · W_Q, W_K, W_V cut into heads")
slices = ("h·d_k … (h+1)·d_k − 1 of W_Q and W_K" if same_qk else
          "h·d_q … (h+1)·d_q − 1 of W_Q, h·d_k … (h+1)·d_k − 1 of W_K")
st.caption(f"Each grey band is one head's column slice; head h uses columns {slices} "
           "and h·d_v … (h+1)·d_v − 1 of W_V. Editing here changes the same values as on Inputs & weights.")
label = controls.view_picker("Weight matrix shown", list(WEIGHTS), key=WEIGHTS_SHOWN)  # only the chosen one is drawn
name = WEIGHTS[label]
width = {"w_q": "d_k" if same_qk else "d_q", "w_k": "d_k", "w_v": "d_v"}[name]
with st.expander(f"Edit {label}", key=f"heads_edit_{name}", on_change="rerun") as box:
    if box.open:  # the grid is built only when the learner opens it
        grid_editor.matrix_editor(name)
cfg = state.config()
w = cfg.matrix(name)
show_matrix(w, text.dim_labels(w.shape[0]), key=name, n_heads=cfg.n_heads,
            title=f"{label} · {w.shape[0]} × {w.shape[1]} = d_model × n_heads·{width}", y_title="input dimension")
st.page_link(registry.INPUTS.file, label="Change the widths or randomise the weights on Inputs & weights",
             icon=":material/edit:")

# ---- 3–7: one section at a time; only the chosen one runs (an edit of W_O redraws section 5 alone) ----


def per_head_section() -> None:
    cfg, trace = state.config(), compute.current_trace()
    queries, keys = text.query_labels(cfg), text.token_labels(cfg)
    st.caption("Attention weights of every head (row: query, column: key), on one shared colour scale 0 … 1."
               + (" The queries are Y's tokens, the keys X's." if cfg.cross else ""))
    shown = head_views.tokens_that_fit(max(cfg.n_q, cfg.n_seq), cfg.n_heads)
    s_q, s_k = min(shown, cfg.n_q), min(shown, cfg.n_seq)
    charts.show_chart(head_views.head_weights(
        [t.weights[:s_q, :s_k] for t in trace.heads], queries[:s_q], keys=keys[:s_k], precision=controls.precision(),
    ))
    if (s_q, s_k) != (cfg.n_q, cfg.n_seq):
        counts = (f"{s_q} of {cfg.n_q} queries and {s_k} of {cfg.n_seq} keys" if cfg.cross
                  else f"{shown} of {cfg.n_seq} tokens")
        st.caption(f"Drawing the first {counts} of each head; Step by step shows one head whole.")
    st.segmented_control("Follow one head step by step", list(range(cfg.n_heads)), format_func=lambda h: f"head {h}",
                         required=True, **state.bind(PICK, st.session_state[state.HEAD], pick_head))
    head = st.session_state[state.HEAD]
    q_cols, k_cols, v_cols = head_slice(head, cfg.d_q), head_slice(head, cfg.d_k), head_slice(head, cfg.d_v)
    qk = (f"{columns(k_cols)} of W_Q and W_K" if q_cols == k_cols else
          f"{columns(q_cols)} of W_Q, {columns(k_cols)} of W_K")
    st.caption(f"Head {head} uses {qk} and {columns(v_cols)} of W_V.")
    if st.button(f"Open head {head} on Step by step", key="heads_open_steps", icon=":material/stairs:"):
        st.switch_page(registry.STEPS.file)


def concat_section() -> None:
    cfg, trace = state.config(), compute.current_trace()
    n_rows, n_cols = trace.concat.shape
    n_q = "n_q" if cfg.cross else "n_seq"
    row_word = "query" if cfg.cross else "token"
    st.markdown(f"**concat** · shape {n_rows} × {n_cols} = [{n_q}, n_heads·d_v] = "
                f"[{cfg.n_q}, {cfg.n_heads}·{cfg.d_v}]")
    st.caption(f"Head h's output ({n_rows} × d_v = {n_rows} × {cfg.d_v}) fills columns h·d_v … (h+1)·d_v − 1: "
               f"column j comes from head j ÷ {cfg.d_v} (rounded down)." if cfg.n_heads > 1 else
               f"With one head, concat is that head's output ({n_rows} × {cfg.d_v}).")
    every_number = show_matrix(trace.concat, text.query_labels(cfg), key="concat", n_heads=cfg.n_heads,
                               title="concat = [head 0 | head 1 | …]", y_title=row_word)
    if not every_number:
        head_block_view(cfg, trace, row_word)


def head_block_view(cfg, trace, row_word: str) -> None:
    """One head's block of concat, every number printed (the whole concat is too large to print them)."""
    st.markdown(f"**Read one head's numbers** · the heatmap above is too large to print every number; here is one "
                f"head's block of {trace.concat.shape[0]} × {cfg.d_v}, its columns wrapped onto lines.")
    if cfg.n_heads > 1:
        st.segmented_control("Head", list(range(cfg.n_heads)), format_func=lambda h: f"head {h}", required=True,
                             **state.bind(BLOCK_HEAD, st.session_state[state.HEAD],
                                          state.copy_to(state.HEAD, BLOCK_HEAD)))
    head = min(st.session_state[state.HEAD], cfg.n_heads - 1)
    cols = head_slice(head, cfg.d_v)
    n_rows, labels = trace.concat.shape[0], text.query_labels(cfg)
    pages = controls.pages_of(n_rows, head_views.block_rows(n_rows, cfg.d_v))
    shown = pages[0]
    if len(pages) > 1:
        shown = pages[st.selectbox(
            f"Rows of head {head} shown ({n_rows} in all, {len(pages[0])} at a time)", range(len(pages)),
            format_func=lambda p: f"rows {pages[p].start}–{pages[p].stop - 1}", key="heads_block_rows", width=320,
        )]
    part = slice(shown.start, shown.stop)
    charts.show_chart(head_views.head_block(
        trace.concat[part, cols], labels[part], head=head, first_col=cols.start, y_title=row_word,
        precision=controls.precision(), domain=heatmap.shared_domain(trace.concat),
    ))
    st.caption(f"This is head {head}'s output, weights_{head} · V_{head}, exactly; Step by step shows how it is made "
               f"(with head {head} picked there).")


def project_section() -> None:
    w_o = state.config().w_o
    top, tools = st.columns([4, 1], vertical_alignment="bottom")
    top.markdown(f"**W_O** · shape {w_o.shape[0]} × {w_o.shape[1]} = [n_heads·d_v, d_out] · "
                 "identity by default when square; row block h multiplies head h's output.")
    with tools.popover("Randomise W_O", icon=":material/casino:", width="stretch", key="heads_w_o_randomise",
                       on_change="rerun") as box:
        if box.open:  # its widgets are built only while it is open (and keep their values while it is closed)
            st.selectbox("Initialiser", INIT_NAMES, format_func=INITIALIZERS.get,
                         **state.bind("heads_w_o_init", state.kept("heads_w_o_init", "xavier_uniform", INIT_NAMES)))
            st.number_input("Seed", 0, 2**31 - 1, **state.bind("heads_w_o_seed", state.kept("heads_w_o_seed", 0)))
            st.button("Fill W_O", key="heads_w_o_fill", on_click=fill_w_o)
    with st.expander("Edit W_O", expanded=w_o.size <= 64, key="heads_edit_w_o", on_change="rerun") as box:
        if box.open:
            grid_editor.matrix_editor("w_o")
    cfg, trace = state.config(), compute.current_trace()
    out, queries = trace.output, text.query_labels(cfg)
    st.markdown(f"**output = concat · W_O** · shape {out.shape[0]} × {out.shape[1]} = "
                f"[{'n_q' if cfg.cross else 'n_seq'}, d_out]")
    show_matrix(out, queries, key="output", title="output = concat · W_O", x_title="output dimension",
                y_title="query" if cfg.cross else "token")
    check_metrics(cfg, trace, per_head=False)


def check_metrics(cfg, trace, *, per_head: bool = True) -> None:
    """How far the multi-head output is from single-head attention (and, with ``per_head``, one head's block of
    concat from plain attention on its slices)."""
    head = min(st.session_state[state.HEAD], cfg.n_heads - 1)
    q_cols, k_cols, v_cols = head_slice(head, cfg.d_q), head_slice(head, cfg.d_k), head_slice(head, cfg.d_v)
    y, score, mask = cfg.y if cfg.cross else cfg.x, cfg.score_function(), config_mask(cfg)
    # a score function's weights are per head: single-head attention on the whole of W_Q, W_K has no W_a
    # (W_1, W_2) of its own unless there is one head
    whole = cfg.n_heads == 1 or cfg.score == "dot"
    try:
        single = cross_attention(y, cfg.x, cfg.w_q, cfg.w_k, cfg.w_v, scale=cfg.scale, mask=mask,
                                 score=score) if whole else None
        one = cross_attention(y, cfg.x, cfg.w_q[:, q_cols], cfg.w_k[:, k_cols], cfg.w_v[:, v_cols], scale=cfg.scale,
                              mask=mask, score=head_score(score, head, cfg.n_heads)) if per_head else None
    except AttentionInputError as err:
        st.error(f"Single-head attention cannot be computed here: {text.md_escape(str(err))}", icon=":material/error:")
        st.stop()
    out, metrics = trace.output, []  # (label, value, help)
    if single is not None:  # the output if it has single-head attention's shape, else concat (before W_O)
        mine, label = (out, METRIC) if single.output.shape == out.shape else (trace.concat, CONCAT_METRIC)
        metrics.append((label, np.abs(mine - single.output).max(), None))
    if per_head:
        metrics.append((f"max |head {head}'s block of concat − attention on its slices|",
                        np.abs(trace.concat[:, v_cols] - one.output).max(),
                        "Each head is plain attention on its own column slices of W_Q, W_K, W_V."))
    places = st.columns(len(metrics)) if len(metrics) > 1 else [st] * len(metrics)
    for place, (label, value, why) in zip(places, metrics, strict=True):
        place.metric(label, f"{value:.3g}", width="content", help=why)
    if single is None:
        st.caption(f"The {cfg.score} score's weights hold one column slice per head: with {cfg.n_heads} heads "
                   "there is no single-head attention on the whole of W_Q and W_K to compare the output with.")
    elif single.output.shape != out.shape:
        n = "n_q" if cfg.cross else "n_seq"
        st.caption(
            f"The output is {out.shape[0]} × {out.shape[1]} ([{n}, d_out]: W_O turns the {trace.concat.shape[1]} "
            f"concatenated columns into {out.shape[1]}); single-head attention gives {single.output.shape[0]} × "
            f"{single.output.shape[1]} ([{n}, n_heads·d_v]), so the two cannot be compared number for number. Compared "
            "instead: concat, the heads side by side before W_O, which has single-head attention's shape."
        )


def shapes_section() -> None:
    shapes = head_views.shapes_table(state.config(), compute.current_trace())
    st.dataframe(shapes, hide_index=True, height=35 * (len(shapes) + 1) + 3)


def check_section() -> None:
    cfg, trace = state.config(), compute.current_trace()
    st.caption("Single-head attention on the whole of W_Q, W_K, W_V (as on Step by step with one head), computed "
               "separately and compared with this page's output.")
    check_metrics(cfg, trace)
    is_identity = compute.is_identity(cfg.w_o)
    if cfg.n_heads == 1 and is_identity:
        st.success("One head and W_O = I: the multi-head output is exactly single-head attention.",
                   icon=":material/check_circle:")
    else:
        w_o = cfg.w_o.shape
        not_identity = ("W_O is not the identity" if w_o[0] == w_o[1] else
                        f"W_O is {w_o[0]} × {w_o[1]}, not the identity")
        why = " and ".join(filter(None, [f"{cfg.n_heads} heads" if cfg.n_heads > 1 else "",
                                         "" if is_identity else not_identity]))
        st.markdown(f"Now: {why}, so the outputs need not agree.")
        st.button("Try it: 1 head and W_O = I", key="heads_try_single", on_click=one_head_identity,
                  help="Sets the number of heads to 1 and replaces W_O by the identity (as wide as W_V).")


SECTIONS = {
    "3 · Each head attends": per_head_section,
    "4 · Concatenate the heads": concat_section,
    "5 · Project with W_O": project_section,
    "6 · Every shape": shapes_section,
    "7 · Check: one head is plain attention": check_section,
}
compute.current_trace()  # stops here with a message when the configuration cannot be computed
st.header("3–7 · From the heads to the output")
SECTIONS[controls.view_picker("Section shown", list(SECTIONS), key=SECTION_SHOWN)]()  # only the chosen one runs
