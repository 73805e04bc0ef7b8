"""Multi-head: cut W_Q, W_K, W_V into column slices, attend per head, concatenate, project with W_O."""


from functools import partial

import streamlit as st

from attn_core import (
    LIMITS,
    AttentionInputError,
    valid_head_counts,
)
from attn_ui.app import i18n, registry, state
from attn_ui.app.i18n import N_, _, ngettext
from attn_ui.shell import edit_panel, frame
from attn_ui.views import compute, multihead_views
from attn_ui.widgets import controls, grid_editor, text
from attn_ui.widgets.matrix_display import block_markdown, formula, heading_markdown, note_markdown

frame.page_start(registry.MULTIHEAD)
in_panel = edit_panel.sidebar(drawn_by_page=("w_o",))  # W_O's grid is in section 5, above what it changes
edit_panel.hint()

with frame.under_panel():  # on a phone right under the panel, where the value is fixed (above the first result)
    grid_editor.pending_errors_banner(registry.MULTIHEAD, in_panel=in_panel)
if state.config().n_heads == 1:
    multihead_views.split_offer(state.config())
formula(rf"\mathrm{{head}}_h = \mathrm{{Attention}}\big({'Y' if state.config().cross else 'X'} W_Q^{{(h)}},\, "
        r"X W_K^{(h)},\, X W_V^{(h)}\big),\qquad"
        r"\mathrm{MultiHead}(X) = [\,\mathrm{head}_0 \mid \cdots \mid \mathrm{head}_{n-1}\,]\; W_O",
        intro=_("Several heads attend **side by side**, each with its own slice of the weights. W_Q, W_K and W_V are "
                "cut by columns into `n_heads` equal slices; head h runs ordinary scaled dot-product attention on "
                "its slices; the head outputs are laid side by side and W_O mixes them into the output."))

# ---- 1. how many heads ----------------------------------------------------------------------------
cfg = state.config()
st.header(_("1 · How many heads"))
d_qk, d_kk, d_v = cfg.w_q.shape[1], cfg.w_k.shape[1], cfg.w_v.shape[1]  # n_heads·d_q, n_heads·d_k, n_heads·d_v
same_qk = d_qk == d_kk
grouped = multihead_views.grouped_head_counts(cfg)  # grouped-query heads: {n_heads: n_kv_heads} keeping the widths
valid = list(grouped) if grouped else [h for h in valid_head_counts(d_qk, d_v, d_kk) if h <= LIMITS.n_heads]
if cfg.rope is not None:  # RoPE turns pairs of features: every query and key head an even width
    valid = [h for h in valid if d_qk // h % 2 == 0 and d_kk // (grouped[h] if grouped else h) % 2 == 0]
st.session_state.setdefault(multihead_views.WANTED, float(cfg.n_heads))
typed = controls.whole_number_input(  # what is typed, as typed ("1e1" is 10), refused in words below
    _("Number of heads (n_heads)"), key=multihead_views.WANTED, width=240,
    help=_("Grouped-query heads: {valid}, which keep the widths and the group of {group} query heads per key/value "
           "head.").format(valid=", ".join(map(str, valid)), group=cfg.n_heads // cfg.kv_heads) if grouped else
    (_("Must divide the {d_qk} columns of W_Q/W_K and the {d_v} columns of W_V; at most {most}.") if same_qk else
          _("Must divide the {d_qk} columns of W_Q, the {d_kk} of W_K and the {d_v} columns of W_V; at most {most}.")
          ).format(d_qk=d_qk, d_kk=d_kk, d_v=d_v, most=LIMITS.n_heads),
)
try:
    wanted = multihead_views.typed_heads(typed)
except AttentionInputError as err:  # empty, not whole, under 1 or over the cap: said here, the heads kept
    wanted = cfg.n_heads
    st.warning(i18n.sentences(i18n.error_text(err), ngettext(
        "Still showing {n} head.", "Still showing {n} heads.", cfg.n_heads).format(n=cfg.n_heads)),
        icon=":material/warning:")
if wanted != cfg.n_heads and wanted in valid:
    if message := state.update_config(**multihead_views.heads_changes(cfg, wanted)):
        st.error(text.md_escape(message), icon=":material/error:")
    cfg = state.config()
if wanted not in valid:
    nearest = sorted(sorted(valid, key=lambda h: (abs(h - wanted), h))[:2])
    fit = _("With grouped-query attention each key/value head is shared by a group of {group} query heads, and W_K "
            "({d_kk} columns) and W_V ({d_v}) hold the key/value heads: a new head count keeps the group (n_kv_heads = "
            "n_heads ÷ {group}) and every width, so it must be a multiple of {group} that divides W_Q's {d_qk} "
            "columns into heads as wide as W_K's. To change the grouping, go to Modern attention.").format(
        group=cfg.n_heads // cfg.kv_heads, d_kk=d_kk, d_v=d_v, d_qk=d_qk) if grouped else ((
          _("Every head needs an equal slice of the columns: W_Q and W_K have {d_qk} columns ({d_qk} ÷ {n} = "
             "{r_qk}) and W_V has {d_v} ({d_v} ÷ {n} = {r_v}), so n_heads must divide both.") if same_qk else
           _("Every head needs an equal slice of the columns: W_Q has {d_qk} columns ({d_qk} ÷ {n} = {r_qk}), W_K "
             "{d_kk} ({d_kk} ÷ {n} = {r_kk}) and W_V has {d_v} ({d_v} ÷ {n} = {r_v}), so n_heads must divide all "
             "three.")).format(n=wanted, d_qk=d_qk, d_kk=d_kk, d_v=d_v, r_qk=f"{d_qk / wanted:.4g}",
                                r_kk=f"{d_kk / wanted:.4g}", r_v=f"{d_v / wanted:.4g}"))
    near = (_("Nearest: {a}.").format(a=nearest[0]) if len(nearest) == 1 else
            _("Nearest: {a} or {b}.").format(a=nearest[0], b=nearest[1]))
    st.warning(
        i18n.sentences(
            ngettext("**{n} head does not fit.**", "**{n} heads do not fit.**", wanted).format(n=wanted), fit,
            _("RoPE turns pairs of features, so each head of W_Q and W_K must also be an even width.")
            if cfg.rope is not None else "",
            _("Valid choices: {valid}.").format(valid=", ".join(map(str, valid))), near,
            ngettext("Still showing {n} head; or change the widths on Inputs & weights.",
                     "Still showing {n} heads; or change the widths on Inputs & weights.", cfg.n_heads
                     ).format(n=cfg.n_heads),
        ),
        icon=":material/warning:",
    )
    for col, h in zip(st.columns(len(nearest) + 4)[:len(nearest)], nearest, strict=True):
        col.button(ngettext("Use {n} head", "Use {n} heads", h).format(n=h), key=f"heads_use_{h}",
                   on_click=multihead_views.use_heads, args=(h,))
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
if grouped:
    widths[1:] = [ngettext("d_k per head **{d_k}** ({d_qk} columns of W_Q ÷ {n} query heads = {d_kk} columns of W_K "
                           "÷ {k} key/value head)",
                           "d_k per head **{d_k}** ({d_qk} columns of W_Q ÷ {n} query heads = {d_kk} columns of W_K "
                           "÷ {k} key/value heads)", cfg.kv_heads).format(d_k=cfg.d_k, d_qk=d_qk, n=cfg.n_heads,
                                                                          d_kk=d_kk, k=cfg.kv_heads),
                  ngettext("d_v per head **{d_v}** ({cols} columns of W_V ÷ {k} key/value head)",
                           "d_v per head **{d_v}** ({cols} columns of W_V ÷ {k} key/value heads)", cfg.kv_heads).format(
                      d_v=cfg.d_v, cols=d_v, k=cfg.kv_heads),
                  _("concat width n_heads·d_v **{width}**").format(width=cfg.n_heads * cfg.d_v)]
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
        _(score_note).format(formula=text.SCORE_TEXT[cfg.score]),
        _("The queries come from Y ({n_q} rows), the keys and values from X ({n_seq} rows).").format(
            n_q=cfg.n_q, n_seq=cfg.n_seq) if cfg.cross else "",
        multihead_views.options_text(cfg),
    )
)

# ---- 2. the weights, cut into heads ---------------------------------------------------------------
if not grouped:
    bands_note = i18n.sentences(
        _("Each grey band is one head's column slice; head h uses columns h·d_k … (h+1)·d_k − 1 of W_Q and W_K and "
          "h·d_v … (h+1)·d_v − 1 of W_V.") if same_qk else
        _("Each grey band is one head's column slice; head h uses columns h·d_q … (h+1)·d_q − 1 of W_Q, h·d_k … "
          "(h+1)·d_k − 1 of W_K and h·d_v … (h+1)·d_v − 1 of W_V."),
        _("Edit them above, under Edit the numbers.") if state.on_phone() else  # the panel is in the page there
        _("Edit them in the sidebar, under Edit the numbers."))
else:
    bands_note = _("W_K and W_V are cut into the {k} key/value heads' slices (g·d_k … (g+1)·d_k − 1), W_Q into the "
                   "{n} query heads'. Query head h reads key/value head h ÷ {group} (rounded down).").format(
        k=cfg.kv_heads, n=cfg.n_heads, group=cfg.n_heads // cfg.kv_heads)
st.markdown(block_markdown(heading_markdown(_("2 · W_Q, W_K, W_V cut into heads")), note_markdown(bands_note)))
label = controls.view_picker(_("Weight matrix shown"), list(multihead_views.WEIGHTS),  # only the chosen one drawn
                             key=multihead_views.WEIGHTS_SHOWN)
name = multihead_views.WEIGHTS[label]
width = {"w_q": "d_k" if same_qk else "d_q", "w_k": "d_k", "w_v": "d_v"}[name]
w = cfg.matrix(name)
bands, count = (cfg.kv_heads, "n_kv_heads") if grouped and name != "w_q" else (cfg.n_heads, "n_heads")
multihead_views.show_matrix(w, text.dim_labels(w.shape[0]), key=name, n_heads=bands,
            title=f"{label} · {w.shape[0]} × {w.shape[1]} = d_model × {count}·{width}", y_title=_("input dimension"))
st.page_link(registry.INPUTS.file, label=_("Change the widths or randomise the weights on Inputs & weights"),
             icon=":material/edit:")

# ---- 3–7: one section at a time; only the chosen one runs (an edit of W_O redraws section 5 alone) ----
trace = compute.current_trace()  # stops here with a message when the configuration cannot be computed
frame.also_under_panel(partial(  # on a phone, section 3's heads' weights: of several heads, the one followed there
    multihead_views.heads_weights, cfg, trace,
    head=None if cfg.n_heads == 1 else min(st.session_state[state.HEAD], cfg.n_heads - 1)))
st.header(_("3–7 · From the heads to the output"))
shown = controls.view_picker(_("Section shown"), list(multihead_views.SECTIONS), key=multihead_views.SECTION_SHOWN)
multihead_views.SECTIONS[shown]()  # only the chosen one runs
