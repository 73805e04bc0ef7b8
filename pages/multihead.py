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
from attn_ui.app import i18n, registry, state
from attn_ui.app.i18n import N_, _, ngettext
from attn_ui.shell import edit_panel, frame
from attn_ui.views import compute, head_views, step_by_step
from attn_ui.widgets import charts, controls, grid_editor, heatmap, randomise, text
from attn_ui.widgets.matrix_display import formula

frame.page_start(registry.MULTIHEAD)
in_panel = edit_panel.sidebar(drawn_by_page=("w_o",))  # W_O's grid is in section 5, above what it changes
edit_panel.hint()

WANTED = "heads_wanted"  # number_input: the head count the learner asks for
PICK = "heads_pick"  # segmented_control: the head to open on Step by step
BLOCK_HEAD = "heads_block_head"  # segmented_control: the head whose block of concat is printed (section 4)
WEIGHTS_SHOWN = "heads_weights_shown"  # segmented control: W_Q, W_K or W_V
SECTION_SHOWN = "heads_section_shown"  # segmented control: one of sections 3 to 7
WEIGHTS = {"W_Q": "w_q", "W_K": "w_k", "W_V": "w_v"}  # label: matrix
METRIC = N_("max |multi-head output − single-head output|")
CONCAT_METRIC = N_("max |concat − single-head output|")  # when W_O changes the width: the output cannot be compared
#: the W_O that "Split into heads" gives a configuration whose W_O is the identity: (initialiser, seed), the
#: Randomise W_O popover's first choices, so that popover gives it back
MIXING_W_O = ("xavier_uniform", 0)


def use_heads(n_heads: int) -> None:
    """on_click: switch to a valid head count (and show it in the number box)."""
    if message := state.update_config(**state.with_heads(state.config(), n_heads)):
        state.notify(message)
    st.session_state[WANTED] = state.config().n_heads


def pick_head() -> None:
    if st.session_state[PICK] is not None:
        st.session_state[state.HEAD] = st.session_state[PICK]


def split_heads(n_heads: int) -> None:
    """on_click: ``n_heads`` heads, keeping every value (state.with_heads); an identity W_O becomes one that mixes
    the heads (MIXING_W_O)."""
    cfg = state.config()
    changes = state.with_heads(cfg, n_heads)
    if compute.is_identity(cfg.w_o):
        changes["w_o"] = initialize(MIXING_W_O[0], cfg.w_o.shape, seed=MIXING_W_O[1])
    if message := state.update_config(**changes):
        state.notify(message)
    st.session_state[WANTED] = state.config().n_heads


def mix_w_o() -> None:
    """on_click: W_O (the identity) becomes one that mixes the heads (MIXING_W_O)."""
    w_o = state.config().w_o
    if message := state.update_config(w_o=initialize(MIXING_W_O[0], w_o.shape, seed=MIXING_W_O[1])):
        state.notify(message)


def mixing_w_o_text() -> str:
    return _("{init}, seed {seed}").format(init=_(INITIALIZERS[MIXING_W_O[0]]), seed=MIXING_W_O[1])


def one_head_identity() -> None:
    """on_click: the setting in which multi-head attention is plain single-head attention."""
    width = state.config().w_v.shape[1]
    use_heads(1)
    if message := state.update_config(w_o=np.eye(width)):
        state.notify(message)


def columns(s: slice) -> str:
    return (_("column {i}").format(i=s.start) if s.stop - s.start == 1 else
            _("columns {first}–{last}").format(first=s.start, last=s.stop - 1))


def rows_labels(pages: list[range]) -> list[str]:
    """The options of a rows selectbox, made now (format_func runs outside the run too: i18n.translator)."""
    return [_("rows {first}–{last}").format(first=p.start, last=p.stop - 1) for p in pages]


def head_names(n_heads: int) -> list[str]:
    return [_("head {h}").format(h=h) for h in range(n_heads)]


def show_matrix(
    values: np.ndarray, rows: list[str], *, key: str, title: str, y_title: str, n_heads: int | None = None,
    x_title: str | None = None,
) -> bool:
    """A (head-marked) matrix; when its rows exceed the drawing budget, a page of rows at a time (a selectbox).

    Every column is always drawn (the head slices are columns); the colours use the whole matrix. Returns whether
    every number of the matrix is printed on its cell (all rows on one page, and numbers shown).
    """
    pages = controls.pages_of(values.shape[0], head_views.rows_that_fit(*values.shape))
    shown = pages[0]
    if len(pages) > 1:
        shown = pages[st.selectbox(
            _("Rows shown ({n} in all, {k} at a time)").format(n=values.shape[0], k=len(pages[0])), range(len(pages)),
            format_func=rows_labels(pages).__getitem__, key=f"heads_{key}_rows", width=320,
            help=_("Drawing every row at once would slow the page down. Every column is drawn (so every head's slice "
                   "shows), and the colours use the whole matrix."),
        )]
    part = slice(shown.start, shown.stop)
    chart = head_views.head_matrix(
        values[part], rows[part], n_heads=n_heads, title=title, x_title=x_title, y_title=y_title,
        precision=controls.precision(), domain=heatmap.shared_domain(values),
    )
    charts.show_chart(chart)
    return len(pages) == 1 and chart.layout.show_text


def split_offer(cfg) -> None:
    """At the top, on a configuration of one head: the one action that shows several heads at work (a split that
    keeps every value, with a W_O that mixes the heads), or why no split fits these widths."""
    d_qk, d_kk, d_v = cfg.w_q.shape[1], cfg.w_k.shape[1], cfg.w_v.shape[1]
    split = [h for h in valid_head_counts(d_qk, d_v, d_kk) if 1 < h <= LIMITS.n_heads]
    identity = compute.is_identity(cfg.w_o)
    box = st.container(border=True)
    box.markdown(i18n.sentences(
        _("**Your configuration has 1 head**, so there is nothing to split yet.") if not identity else
        _("**Your configuration has 1 head and W_O = I** (the identity), so multi-head attention is plain attention "
          "here: the heads' concatenation and the output W_O projects are the same matrix."),
        "" if split else _("No head count above 1 divides these widths (W_Q and W_K have {d_qk} columns, W_V has "
                           "{d_v}); on Inputs & weights, give them widths with a common divisor (4 and 4, say) to "
                           "split them into heads.").format(
            d_qk=d_qk if d_qk == d_kk else f"{d_qk}, {d_kk}", d_v=d_v),
    ))
    if not split:
        return
    n = split[0]
    box.button(
        ngettext("Split into {n} head, with a W_O that mixes them", "Split into {n} heads, with a W_O that mixes them",
                 n).format(n=n) if identity else
        ngettext("Split into {n} head (your W_O kept)", "Split into {n} heads (your W_O kept)", n).format(n=n),
        key="heads_split", icon=":material/call_split:", on_click=split_heads, args=(n,),
    )
    box.caption(i18n.sentences(
        _("Every value of X, W_Q, W_K and W_V is kept: each head takes its own slice of their columns, d_k = {d_k} "
          "of W_Q and W_K and d_v = {d_v} of W_V.").format(d_k=d_kk // n, d_v=d_v // n),
        _("W_O becomes {init} (Randomise W_O in section 5 gives it back).").format(init=mixing_w_o_text())
        if identity else "",
        _("Undo in the sidebar takes the split back."),
    ))


grid_editor.pending_errors_banner(registry.MULTIHEAD, in_panel=in_panel)
if state.config().n_heads == 1:
    split_offer(state.config())
st.markdown(_(
    "Several heads attend **side by side**, each with its own slice of the weights. W_Q, W_K and W_V are "
    "cut by columns into `n_heads` equal slices; head h runs ordinary scaled dot-product attention on "
    "its slices; the head outputs are laid side by side and W_O mixes them into the output."
))
formula(rf"\mathrm{{head}}_h = \mathrm{{Attention}}\big({'Y' if state.config().cross else 'X'} W_Q^{{(h)}},\, "
        r"X W_K^{(h)},\, X W_V^{(h)}\big),\qquad"
        r"\mathrm{MultiHead}(X) = [\,\mathrm{head}_0 \mid \cdots \mid \mathrm{head}_{n-1}\,]\; W_O")

# ---- 1. how many heads ----------------------------------------------------------------------------
cfg = state.config()
st.header(_("1 · How many heads"))
d_qk, d_kk, d_v = cfg.w_q.shape[1], cfg.w_k.shape[1], cfg.w_v.shape[1]  # n_heads·d_q, n_heads·d_k, n_heads·d_v
same_qk = d_qk == d_kk
valid = [h for h in valid_head_counts(d_qk, d_v, d_kk) if h <= LIMITS.n_heads]
st.session_state.setdefault(WANTED, cfg.n_heads)
wanted = int(st.number_input(
    _("Number of heads (n_heads)"), min_value=1, max_value=LIMITS.n_heads, step=1, key=WANTED, width=240,
    help=(_("Must divide the {d_qk} columns of W_Q/W_K and the {d_v} columns of W_V; at most {most}.") if same_qk else
          _("Must divide the {d_qk} columns of W_Q, the {d_kk} of W_K and the {d_v} columns of W_V; at most {most}.")
          ).format(d_qk=d_qk, d_kk=d_kk, d_v=d_v, most=LIMITS.n_heads),
))
if wanted != cfg.n_heads and wanted in valid:
    if message := state.update_config(**state.with_heads(cfg, wanted)):
        st.error(text.md_escape(message), icon=":material/error:")
    cfg = state.config()
if wanted not in valid:
    nearest = sorted(sorted(valid, key=lambda h: (abs(h - wanted), h))[:2])
    fit = (_("Every head needs an equal slice of the columns: W_Q and W_K have {d_qk} columns ({d_qk} ÷ {n} = "
             "{r_qk}) and W_V has {d_v} ({d_v} ÷ {n} = {r_v}), so n_heads must divide both.") if same_qk else
           _("Every head needs an equal slice of the columns: W_Q has {d_qk} columns ({d_qk} ÷ {n} = {r_qk}), W_K "
             "{d_kk} ({d_kk} ÷ {n} = {r_kk}) and W_V has {d_v} ({d_v} ÷ {n} = {r_v}), so n_heads must divide all "
             "three.")).format(n=wanted, d_qk=d_qk, d_kk=d_kk, d_v=d_v, r_qk=f"{d_qk / wanted:.4g}",
                                r_kk=f"{d_kk / wanted:.4g}", r_v=f"{d_v / wanted:.4g}")
    near = (_("Nearest: {a}.").format(a=nearest[0]) if len(nearest) == 1 else
            _("Nearest: {a} or {b}.").format(a=nearest[0], b=nearest[1]))
    st.warning(
        i18n.sentences(
            _("**{n} heads do not fit.**").format(n=wanted), fit,
            _("Valid choices: {valid}.").format(valid=", ".join(map(str, valid))), near,
            ngettext("Still showing {n} head; or change the widths on Inputs & weights.",
                     "Still showing {n} heads; or change the widths on Inputs & weights.", cfg.n_heads
                     ).format(n=cfg.n_heads),
        ),
        icon=":material/warning:",
    )
    for col, h in zip(st.columns(len(nearest) + 4)[:len(nearest)], nearest, strict=True):
        col.button(ngettext("Use {n} head", "Use {n} heads", h).format(n=h), key=f"heads_use_{h}", on_click=use_heads,
                   args=(h,))
alike = {
    "none": N_("The configuration's scale ({scale}, d_k per head) and no mask apply to every head alike; change them "
               "on Scaling and Masking."),
    "causal": N_("The configuration's scale ({scale}, d_k per head) and the causal mask apply to every head alike; "
                 "change them on Scaling and Masking."),
    "padding": N_("The configuration's scale ({scale}, d_k per head) and the padding mask apply to every head alike; "
                  "change them on Scaling and Masking."),
    "custom": N_("The configuration's scale ({scale}, d_k per head) and the custom mask apply to every head alike; "
                 "change them on Scaling and Masking."),
}[cfg.mask_kind]
widths = [
    ngettext("**{n} head** (valid for these widths: **{valid}**)",
             "**{n} heads** (valid for these widths: **{valid}**)", cfg.n_heads
             ).format(n=cfg.n_heads, valid=", ".join(map(str, valid))),
    *([_("d_k per head **{d_k}** ({d_qk} columns of W_Q and W_K ÷ {n})").format(d_k=cfg.d_k, d_qk=d_qk,
                                                                               n=cfg.n_heads)] if same_qk else
      [_("d_q per head **{d_q}** ({d_qk} columns of W_Q ÷ {n})").format(d_q=cfg.d_q, d_qk=d_qk, n=cfg.n_heads),
       _("d_k per head **{d_k}** ({d_kk} columns of W_K ÷ {n})").format(d_k=cfg.d_k, d_kk=d_kk, n=cfg.n_heads)]),
    _("d_v per head **{d_v}** ({cols} columns of W_V ÷ {n})").format(d_v=cfg.d_v, cols=d_v, n=cfg.n_heads),
    *([_("d_a per head **{d_a}** ({cols} columns of W_1, W_2 ÷ {n})").format(d_a=cfg.d_a, cols=cfg.w_1.shape[1],
                                                                             n=cfg.n_heads)] if cfg.d_a else []),
    _("concat width n_heads·d_v **{width}**").format(width=cfg.n_heads * cfg.d_v),
]
score_note = {
    "dot": "",
    "general": N_("Each head scores with {formula}, using its own column slice of W_a (see Score functions); a change "
                  "of the head count keeps the values of those weights that still fit."),
    "additive": N_("Each head scores with {formula}, using its own column slice of W_1, W_2 and v_a (see Score "
                   "functions); a change of the head count keeps the values of those weights that still fit."),
}[cfg.score]
st.markdown(  # one element, not a row of metrics and a box: the browser redraws every element on every edit
    " · ".join(widths) + "  \n:material/info: " + i18n.sentences(
        _(alike).format(scale=text.scale_text(cfg)),
        _(score_note).format(formula=step_by_step.SCORE_TEXT[cfg.score]),
        _("The queries come from Y ({n_q} rows), the keys and values from X ({n_seq} rows).").format(
            n_q=cfg.n_q, n_seq=cfg.n_seq) if cfg.cross else "",
    )
)

# ---- 2. the weights, cut into heads ---------------------------------------------------------------
st.header(_("2 · W_Q, W_K, W_V cut into heads"))
st.caption(_("Each grey band is one head's column slice; head h uses columns h·d_k … (h+1)·d_k − 1 of W_Q and W_K "
             "and h·d_v … (h+1)·d_v − 1 of W_V. Edit them in the sidebar, under Edit the numbers.")
           if same_qk else
           _("Each grey band is one head's column slice; head h uses columns h·d_q … (h+1)·d_q − 1 of W_Q, "
             "h·d_k … (h+1)·d_k − 1 of W_K and h·d_v … (h+1)·d_v − 1 of W_V. Edit them in the sidebar, under "
             "Edit the numbers."))
label = controls.view_picker(_("Weight matrix shown"), list(WEIGHTS), key=WEIGHTS_SHOWN)  # only the chosen one drawn
name = WEIGHTS[label]
width = {"w_q": "d_k" if same_qk else "d_q", "w_k": "d_k", "w_v": "d_v"}[name]
w = cfg.matrix(name)
show_matrix(w, text.dim_labels(w.shape[0]), key=name, n_heads=cfg.n_heads,
            title=f"{label} · {w.shape[0]} × {w.shape[1]} = d_model × n_heads·{width}", y_title=_("input dimension"))
st.page_link(registry.INPUTS.file, label=_("Change the widths or randomise the weights on Inputs & weights"),
             icon=":material/edit:")

# ---- 3–7: one section at a time; only the chosen one runs (an edit of W_O redraws section 5 alone) ----


def per_head_section() -> None:
    cfg, trace = state.config(), compute.current_trace()
    queries, keys = text.query_labels(cfg), text.token_labels(cfg)
    st.caption(i18n.sentences(_("Attention weights of every head (row: query, column: key), on one shared colour scale "
                           "0 … 1."), _("The queries are Y's tokens, the keys X's.") if cfg.cross else ""))
    shown = head_views.tokens_that_fit(max(cfg.n_q, cfg.n_seq), cfg.n_heads)
    s_q, s_k = min(shown, cfg.n_q), min(shown, cfg.n_seq)
    charts.show_chart(head_views.head_weights(
        [t.weights[:s_q, :s_k] for t in trace.heads], queries[:s_q], keys=keys[:s_k], precision=controls.precision(),
    ))
    if (s_q, s_k) != (cfg.n_q, cfg.n_seq):
        st.caption((_("Drawing the first {s_q} of {n_q} queries and {s_k} of {n_k} keys of each head; Step by step "
                      "shows one head whole.") if cfg.cross else
                    _("Drawing the first {shown} of {n_k} tokens of each head; Step by step shows one head whole."))
                   .format(s_q=s_q, n_q=cfg.n_q, s_k=s_k, n_k=cfg.n_seq, shown=shown))
    st.segmented_control(_("Follow one head step by step"), list(range(cfg.n_heads)),
                         format_func=head_names(cfg.n_heads).__getitem__, required=True,
                         **state.bind(PICK, st.session_state[state.HEAD], pick_head))
    head = st.session_state[state.HEAD]
    q_cols, k_cols, v_cols = head_slice(head, cfg.d_q), head_slice(head, cfg.d_k), head_slice(head, cfg.d_v)
    st.caption((_("Head {head} uses {qk} of W_Q and W_K and {v} of W_V.") if q_cols == k_cols else
                _("Head {head} uses {q} of W_Q, {k} of W_K and {v} of W_V."))
               .format(head=head, qk=columns(k_cols), q=columns(q_cols), k=columns(k_cols), v=columns(v_cols)))
    if st.button(_("Open head {head} on Step by step").format(head=head), key="heads_open_steps",
                 icon=":material/stairs:"):
        st.switch_page(registry.STEPS.file)


def concat_section() -> None:
    cfg, trace = state.config(), compute.current_trace()
    n_rows, n_cols = trace.concat.shape
    n_q = "n_q" if cfg.cross else "n_seq"
    row_word = _("query") if cfg.cross else _("token")
    st.markdown(_("**concat** · shape {r} × {c} = [{n_q}, n_heads·d_v] = [{n}, {heads}·{d_v}]").format(
        r=n_rows, c=n_cols, n_q=n_q, n=cfg.n_q, heads=cfg.n_heads, d_v=cfg.d_v))
    st.caption((_("Head h's output ({r} × d_v = {r} × {d_v}) fills columns h·d_v … (h+1)·d_v − 1: column j comes "
                  "from head j ÷ {d_v} (rounded down).") if cfg.n_heads > 1 else
                _("With one head, concat is that head's output ({r} × {d_v}).")).format(r=n_rows, d_v=cfg.d_v))
    every_number = show_matrix(trace.concat, text.query_labels(cfg), key="concat", n_heads=cfg.n_heads,
                               title=_("concat = [head 0 | head 1 | …]"), y_title=row_word)
    if compute.is_identity(cfg.w_o):
        st.caption(_("W_O is the identity, so the output (section 5) is this same matrix: concat · I = concat."))
    if not every_number:
        head_block_view(cfg, trace, row_word)


def head_block_view(cfg, trace, row_word: str) -> None:
    """One head's block of concat, every number printed (the whole concat is too large to print them)."""
    st.markdown(_("**Read one head's numbers** · the heatmap above is too large to print every number; here is one "
                  "head's block of {r} × {d_v}, its columns wrapped onto lines.").format(r=trace.concat.shape[0],
                                                                                         d_v=cfg.d_v))
    if cfg.n_heads > 1:
        st.segmented_control(_("Head"), list(range(cfg.n_heads)), format_func=head_names(cfg.n_heads).__getitem__,
                             required=True,
                             **state.bind(BLOCK_HEAD, st.session_state[state.HEAD],
                                          state.copy_to(state.HEAD, BLOCK_HEAD)))
    head = min(st.session_state[state.HEAD], cfg.n_heads - 1)
    cols = head_slice(head, cfg.d_v)
    n_rows, labels = trace.concat.shape[0], text.query_labels(cfg)
    pages = controls.pages_of(n_rows, head_views.block_rows(n_rows, cfg.d_v))
    shown = pages[0]
    if len(pages) > 1:
        shown = pages[st.selectbox(
            _("Rows of head {head} shown ({n} in all, {k} at a time)").format(head=head, n=n_rows, k=len(pages[0])),
            range(len(pages)), format_func=rows_labels(pages).__getitem__, key="heads_block_rows", width=320,
        )]
    part = slice(shown.start, shown.stop)
    charts.show_chart(head_views.head_block(
        trace.concat[part, cols], labels[part], head=head, first_col=cols.start, y_title=row_word,
        precision=controls.precision(), domain=heatmap.shared_domain(trace.concat),
    ))
    st.caption(_("This is head {head}'s output, weights_{head} · V_{head}, exactly; Step by step shows how it is "
                 "made (with head {head} picked there).").format(head=head))


def project_section() -> None:
    w_o = state.config().w_o
    top, tools = st.columns([4, 1], vertical_alignment="bottom")
    top.markdown(_("**W_O** · shape {r} × {c} = [n_heads·d_v, d_out] · identity by default when square; row block h "
                   "multiplies head h's output.").format(r=w_o.shape[0], c=w_o.shape[1]))
    randomise.popover_of("w_o", "heads", where=tools, label=_("Randomise W_O"), init=MIXING_W_O[0],
                         seed=MIXING_W_O[1], width="stretch")
    with st.expander(_("Edit W_O"), expanded=w_o.size <= 64, key="heads_edit_w_o", on_change="rerun") as box:
        if box.open:
            grid_editor.matrix_editor("w_o")
    cfg, trace = state.config(), compute.current_trace()
    out, queries = trace.output, text.query_labels(cfg)
    if compute.is_identity(cfg.w_o):
        note, button = st.columns([4, 1], vertical_alignment="center")
        note.info(_("W_O is the identity: the output below is concat (section 4) unchanged, number for number, and "
                    "the heads' columns are not mixed."), icon=":material/info:")
        button.button(_("Mix the heads"), key="heads_mix_w_o", on_click=mix_w_o, width="stretch",
                      help=_("W_O becomes {init}; Undo in the sidebar takes it back.").format(init=mixing_w_o_text()))
    st.markdown(_("**output = concat · W_O** · shape {r} × {c} = [{n}, d_out]").format(
        r=out.shape[0], c=out.shape[1], n="n_q" if cfg.cross else "n_seq"))
    show_matrix(out, queries, key="output", title=_("output = concat · W_O"), x_title=_("output dimension"),
                y_title=_("query") if cfg.cross else _("token"))
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
        st.error(_("Single-head attention cannot be computed here: {error}").format(
            error=text.md_escape(i18n.error_text(err))), icon=":material/error:")
        st.stop()
    out, metrics = trace.output, []  # (label, value, help)
    if single is not None:  # the output if it has single-head attention's shape, else concat (before W_O)
        mine, label = (out, METRIC) if single.output.shape == out.shape else (trace.concat, CONCAT_METRIC)
        metrics.append((_(label), np.abs(mine - single.output).max(), None))
    if per_head:
        metrics.append((_("max |head {head}'s block of concat − attention on its slices|").format(head=head),
                        np.abs(trace.concat[:, v_cols] - one.output).max(),
                        _("Each head is plain attention on its own column slices of W_Q, W_K, W_V.")))
    places = st.columns(len(metrics)) if len(metrics) > 1 else [st] * len(metrics)
    for place, (label, value, why) in zip(places, metrics, strict=True):
        place.metric(label, f"{value:.3g}", width="content", help=why)
    if single is None:
        st.caption((_("The general score's weights hold one column slice per head: with {n} heads there is no "
                      "single-head attention on the whole of W_Q and W_K to compare the output with.")
                    if cfg.score == "general" else
                    _("The additive score's weights hold one column slice per head: with {n} heads there is no "
                      "single-head attention on the whole of W_Q and W_K to compare the output with.")
                    ).format(n=cfg.n_heads))
    elif single.output.shape != out.shape:
        st.caption(_(
            "The output is {r} × {c} ([{n}, d_out]: W_O turns the {concat} concatenated columns into {c}); "
            "single-head attention gives {r1} × {c1} ([{n}, n_heads·d_v]), so the two cannot be compared number for "
            "number. Compared instead: concat, the heads side by side before W_O, which has single-head attention's "
            "shape."
        ).format(r=out.shape[0], c=out.shape[1], n="n_q" if cfg.cross else "n_seq", concat=trace.concat.shape[1],
                 r1=single.output.shape[0], c1=single.output.shape[1]))


def shapes_section() -> None:
    shapes = head_views.shapes_table(state.config(), compute.current_trace())
    st.dataframe(shapes, hide_index=True, height=35 * (len(shapes) + 1) + 3)


def check_section() -> None:
    cfg, trace = state.config(), compute.current_trace()
    st.caption(_("Single-head attention on the whole of W_Q, W_K, W_V (as on Step by step with one head), computed "
                 "separately and compared with this page's output."))
    check_metrics(cfg, trace)
    is_identity = compute.is_identity(cfg.w_o)
    if cfg.n_heads == 1 and is_identity:
        st.success(_("One head and W_O = I: the multi-head output is exactly single-head attention."),
                   icon=":material/check_circle:")
    else:
        w_o = cfg.w_o.shape
        now = {  # (several heads, W_O: None the identity, True square, False not square)
            (True, None): N_("Now: {n} heads, so the outputs need not agree."),
            (False, True): N_("Now: W_O is not the identity, so the outputs need not agree."),
            (False, False): N_("Now: W_O is {r} × {c}, not the identity, so the outputs need not agree."),
            (True, True): N_("Now: {n} heads and W_O is not the identity, so the outputs need not agree."),
            (True, False): N_("Now: {n} heads and W_O is {r} × {c}, not the identity, so the outputs need not agree."),
        }[cfg.n_heads > 1, None if is_identity else w_o[0] == w_o[1]]
        st.markdown(_(now).format(n=cfg.n_heads, r=w_o[0], c=w_o[1]))
        st.button(_("Try it: 1 head and W_O = I"), key="heads_try_single", on_click=one_head_identity,
                  help=_("Sets the number of heads to 1 and replaces W_O by the identity (as wide as W_V)."))


SECTIONS = {  # the picker's values (kept in the session and the tests), shown translated
    N_("3 · Each head attends"): per_head_section,
    N_("4 · Concatenate the heads"): concat_section,
    N_("5 · Project with W_O"): project_section,
    N_("6 · Every shape"): shapes_section,
    N_("7 · Check: one head is plain attention"): check_section,
}
compute.current_trace()  # stops here with a message when the configuration cannot be computed
st.header(_("3–7 · From the heads to the output"))
SECTIONS[controls.view_picker(_("Section shown"), list(SECTIONS), key=SECTION_SHOWN)]()  # only the
# chosen one runs
