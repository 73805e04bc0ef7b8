"""Overview: what self-attention is, the formula, the pipeline, and the current configuration."""

import streamlit as st

from attn_core import MATRIX_NAMES, SCORE_MATRICES, Config, config_mask
from attn_ui.app import registry, state
from attn_ui.app.i18n import N_, _, ngettext
from attn_ui.shell import frame
from attn_ui.views import compute
from attn_ui.widgets import grid_editor, text
from attn_ui.widgets.matrix_display import matrix_block

frame.page_start(registry.OVERVIEW)

#: the mask kinds in a word (the pipeline's mask stage), in English
MASK_WORDS = {"none": N_("none"), "causal": N_("causal"), "padding": N_("padding"), "custom": N_("custom")}


def pipeline(cfg: Config) -> list[tuple[str, str, registry.Page]]:
    """The stages of the configuration's attention: (label, shape or note, the page that shows it).

    The inputs are X, or X and Y with cross-attention; the score stage is the configuration's score function.
    """
    n_q, n_k = cfg.n_q, cfg.n_seq
    inputs = ("X, Y", f"{n_k}×{cfg.d_model}, {n_q}×{cfg.d_model}") if cfg.cross else ("X", f"{n_k}×{cfg.d_model}")
    qkv = (f"{n_q}×{cfg.d_q}, {n_k}×{cfg.d_k}, ×{cfg.d_v}" if cfg.cross or cfg.d_q != cfg.d_k
           else f"{n_k}×{cfg.d_k}, ×{cfg.d_v}")
    return [
        (*inputs, registry.INPUTS), ("Q, K, V", qkv, registry.STEPS),
        (text.SCORE_TEXT[cfg.score], f"{n_q}×{n_k}", registry.STEPS),
        ("÷ s", text.scale_text(cfg).split("=")[-1].strip(" ÷"), registry.SCALING),
        (_("mask"), _(MASK_WORDS[cfg.mask_kind]), registry.MASKING),
        ("softmax", _("rows sum to 1 or 0") if blocked_rows(cfg) else _("rows sum to 1"), registry.STEPS),
        ("· V", f"{n_q}×{cfg.d_v}", registry.STEPS),
        (_("output"), _("{shape} per head").format(shape=f"{n_q}×{cfg.d_v}"), registry.STEPS),
        (_("heads · W_O"), ngettext("{n} head → {shape}", "{n} heads → {shape}", cfg.n_heads).format(
            n=cfg.n_heads, shape=f"{n_q}×{cfg.d_out}"), registry.MULTIHEAD),
    ]


def blocked_rows(cfg: Config) -> bool:
    """Whether some query has every key masked (its weights are all 0: its row sums to 0, not 1)."""
    mask = config_mask(cfg)  # bool [n_q, n_seq] or None
    return mask is not None and not bool(mask.any(axis=1).all())


def pipeline_dot(cfg: Config) -> str:
    """Graphviz source of the pipeline X → Q, K, V → QKᵀ → ÷ s → mask → softmax → ·V → output → heads.

    No links inside the diagram: a plain link would reload the app and lose the session; the stages are linked
    with st.page_link below it instead.
    """
    stages = pipeline(cfg)
    nodes = "\n".join(f'  n{i} [label="{label}\\n{shape}"];' for i, (label, shape, _) in enumerate(stages))
    edges = " -> ".join(f"n{i}" for i in range(len(stages)))
    return (
        # close together (ranksep, nodesep, margin in inches): the nine boxes fit the main column at 1,400 px with
        # their 14 pt text still ≥ 12 px (spread out, the diagram was shrunk until its text was 9 px)
        "digraph { rankdir=LR; bgcolor=transparent; ranksep=0.22; nodesep=0.2; pad=0.05;\n"
        '  node [shape=box, style="rounded,filled", fillcolor="#eef3fb", color="#4c78a8", fontname="sans-serif",'
        ' fontsize=14, margin="0.08,0.04"];\n'
        '  edge [color="#808495"];\n'  # arrows a mid grey: visible on the light and on the dark background
        f"{nodes}\n  {edges};\n}}"
    )


cfg = state.config()
st.markdown(_(
    "Self-attention lets every token of a sequence look at every other token and take a weighted "
    "average of what they offer. Each token's input row is projected three ways: a **query** (what it "
    "looks for), a **key** (what it offers to be matched on) and a **value** (what it passes on). "
    "The dot product of a query with every key says how well they match; softmax turns those scores "
    "into weights that sum to 1; the output is the weighted sum of the values. "
    "Here you can type every number yourself and watch each step recompute."
))
# two short formulas, not one long line, the first a size smaller: each fits a phone's width (390 px)
st.latex(r"\footnotesize \mathrm{Attention}(Q, K, V) = "
         r"\mathrm{softmax}\!\left(\frac{Q K^\top}{\sqrt{d_k}} + M\right) V")
st.latex(r"Q = XW_Q,\quad K = XW_K,\quad V = XW_V")
scores = {"formula": text.SCORE_TEXT[cfg.score], "name": _(text.SCORE_NAMES[cfg.score])}
if cfg.cross and cfg.score != "dot":
    st.caption(_("Your configuration: cross-attention, Q = Y W_Q: the queries come from a second sequence Y, the keys "
                 "and values from X; scores {formula} ({name}) instead of QKᵀ.").format(**scores))
elif cfg.cross:
    st.caption(_("Your configuration: cross-attention, Q = Y W_Q: the queries come from a second sequence Y, the keys "
                 "and values from X."))
elif cfg.score != "dot":
    st.caption(_("Your configuration: scores {formula} ({name}) instead of QKᵀ.").format(**scores))
st.page_link(registry.LEARN.file, label=_("New to attention? Start with {page}").format(page=_(registry.LEARN.title)),
             icon=":material/school:", help=_("Guided lessons: predict, then check."))

st.header(_("The pipeline"))
st.graphviz_chart(pipeline_dot(cfg), width="stretch")
st.caption(_("Open the page that shows a stage:"))
links = st.container(horizontal=True, gap="small")  # wraps into rows on a narrow screen
for label, _shape, page in pipeline(cfg):
    links.page_link(page.file, label=label, help=_("Open the page that shows this stage."), width="content")

st.header(_("Current configuration"))
grid_editor.pending_errors_banner()
mask_text = {"none": _("none"), "causal": _("causal (each token sees itself and earlier ones)"),
             "padding": ngettext("padding ({n} padding token)", "padding ({n} padding tokens)",
                                 int(sum(cfg.is_pad))).format(n=int(sum(cfg.is_pad))),
             "custom": _("custom")}[cfg.mask_kind]
qk = (f"**W_Q, W_K**: {cfg.d_model} × {cfg.w_q.shape[1]}" if cfg.w_q.shape == cfg.w_k.shape else
      f"**W_Q**: {cfg.d_model} × {cfg.w_q.shape[1]} · **W_K**: {cfg.d_model} × {cfg.w_k.shape[1]}")
score_weights = " · ".join(f"**{MATRIX_NAMES[n]}**: {cfg.matrix(n).shape[0]} × {cfg.matrix(n).shape[1]}"
                           for n in SCORE_MATRICES[cfg.score])
widths = f"d_q = {cfg.d_q}, d_k = {cfg.d_k}" if cfg.d_q != cfg.d_k else f"d_k = {cfg.d_k}"
heads = _("- **Heads**: {n} ({widths}, d_v = {d_v} per head)").format(
    n=cfg.n_heads, widths=widths + (f", d_a = {cfg.d_a}" if cfg.d_a else ""), d_v=cfg.d_v)
modern = text.modern_options(cfg)  # Modern attention's options, the weights below computed with them
window = _("window {w}").format(w=cfg.window) if cfg.window is not None else ""
tokens = ", ".join(map(text.md_escape, cfg.tokens))
st.markdown("\n".join(filter(None, [
    (_("- **Tokens** ({n} of X: the keys and values): {tokens}") if cfg.cross else
     _("- **Tokens** ({n}): {tokens}")).format(n=cfg.n_seq, tokens=tokens),
    _("- **Query tokens** ({n} of Y): {tokens}").format(
        n=cfg.n_q, tokens=", ".join(map(text.md_escape, cfg.query_tokens))) if cfg.cross else "",
    f"- **X**: {cfg.n_seq} × {cfg.d_model}{f' · **Y**: {cfg.n_q} × {cfg.d_model}' if cfg.cross else ''} · {qk} · "
    f"**W_V**: {cfg.d_model} × {cfg.w_v.shape[1]} · **W_O**: {cfg.w_o.shape[0]} × {cfg.d_out}",
    _("- **Score function**: {name}, {formula}").format(**scores) + (f" · {score_weights}" if score_weights else ""),
    heads,
    _("- **Modern attention**: {options}").format(options=", ".join(modern)) if modern else "",
    _("- **Scale**: {scale}").format(scale=text.scale_text(cfg)),
    _("- **Mask**: {mask}").format(mask=" · ".join(filter(None, [mask_text, window]))),
])))
st.page_link(registry.INPUTS.file, label=_("Edit the inputs and weights"), icon=":material/edit:")

st.header(_("The attention weights"))
trace = compute.current_trace()  # shows a message instead when the configuration cannot be computed
first = trace.heads[0]
matrix_block(
    _("Attention weights of head 0 (of {n})").format(n=cfg.n_heads) if cfg.n_heads > 1 else _("Attention weights"),
    "", first.weights, text.query_labels(cfg), text.token_labels(cfg), kind="weights", y_title=_("query"),
    x_title=_("key"), key="overview_weights_chart",
    masked=None if first.mask is None else ~first.mask,
    note=(_("Row i: how much query i attends to each key (each row sums to 1, or to 0 when every key is masked). "
            "Every step that leads here is on {page}.") if blocked_rows(cfg) else
          _("Row i: how much query i attends to each key (each row sums to 1). Every step that leads here is on "
            "{page}.")).format(page=_(registry.STEPS.title)),
)
st.page_link(registry.STEPS.file, label=_("See how every weight is computed"), icon=":material/stairs:")

# ---- where the examples come from: the tutorials' titles stay as they are (titles of other works) --------------
st.header(_("Sources"))
st.caption(_("The worked examples and the presets come from five tutorials. The other pages call each by the short "
             "name in bold."))
pages = {"scaling": _(registry.SCALING.title), "masking": _(registry.MASKING.title), "steps": _(registry.STEPS.title)}
st.markdown("\n".join(_(item).format(**pages) for item in [
    N_("- **The Chinese tutorial**: “Self Attention cacultate with numpy” (in Chinese; “Self-attention calculated "
       "with NumPy”), on GitHub as p208p2002/Self-Attention-cacultate-with-numpy. Its three inputs and W_Q, W_K, "
       "W_V are the first preset; it divides the scores by √(number of tokens), compared with √d_k on {scaling}."),
    N_("- **The Korean blog post**: “\\[Attention-Series\\] 1. Self-Attention” (in Korean; “Attention series, "
       "part 1: self-attention”). Its sentence “slow but steady wins the race” is a preset, and its softmax "
       "subtracts the row maximum first ({masking})."),
    N_("- **The Korean Python tutorial**: “(Python) The Attention Mechanism” (in Korean; “The attention mechanism, "
       "in Python”). The same three inputs, scores divided by 1 ({scaling}), and 8 heads of 64 columns joined into "
       "512 (the preset of 8 heads); its last step, translating English to French, suggests the cross-attention "
       "preset."),
    N_("- **The English notebook**: “Transformer” (in English), a Jupyter notebook. Its four tokens “My name is "
       "Kishor” with a causal mask are a preset; its variances show why scores are divided by √d_k ({scaling})."),
    N_("- **The English illustrated tutorial**: “Self Attention” (in English), worked in PyTorch. The same three "
       "inputs without scaling are a preset; its weighted values (“alignment vectors”) summed into each output are "
       "on {steps}."),
]))
