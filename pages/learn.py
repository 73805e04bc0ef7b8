"""Learn: guided lessons. Each sets up a configuration and asks a question; the learner commits a prediction, then
the app computes the answer on the lesson's numbers, shows them, explains, and offers to try it in the explorer."""

import contextlib

import streamlit as st

import attn_models
from attn_core import MATRIX_NAMES
from attn_ui import lessons
from attn_ui.app import i18n, registry, state
from attn_ui.app.i18n import _
from attn_ui.lessons import lesson_ui, lesson_views
from attn_ui.shell import frame
from attn_ui.views import multihead_views
from attn_ui.widgets import charts, controls, heatmap, text
from attn_ui.widgets.matrix_display import matrix_block

frame.page_start(registry.LEARN)

PICK = "learn_pick"  # selectbox: the lesson open

controls.precision_control("learn", st.sidebar)
precision = controls.precision()
n_lessons = len(lessons.LESSONS)

st.markdown(
    _("{n} short lessons, one idea each. Read the setup, commit a prediction, then check it: the app computes "
      "the answer on the lesson's own numbers, shows them and explains. **Try it yourself** then loads those numbers "
      "into the explorer and opens the page that shows them; **Undo** in the sidebar brings your own numbers back."
      ).format(n=n_lessons)
)

# ---- the course: progress and the lesson open --------------------------------------------------------------------
answered, right = lesson_ui.progress()
st.progress(answered / n_lessons, text=_("{answered} of {n} lessons answered, {right} right").format(
    answered=answered, n=n_lessons, right=right))
lesson = lesson_ui.current()
at = lessons.index_of(lesson.key)
titles = [f"{i + 1}. {_(x.title)}" for i, x in enumerate(lessons.LESSONS)]  # made now: format_func runs later too
st.selectbox(_("Lesson"), list(range(n_lessons)), width=520, format_func=titles.__getitem__,
             **state.bind(PICK, at, lambda: lesson_ui.open_lesson(lessons.LESSONS[st.session_state[PICK]].key)))
lesson_ui.lesson_list(titles)
lesson_ui.keep_in_address_bar(lesson)
model = None
try:
    model = lesson_ui.model_for(lesson)  # None, or the model a model lesson reads
    with st.spinner(_("Running the model for this lesson …"), show_time=True) if model is not None else (
            contextlib.nullcontext()):
        w = lessons.solved(lesson.key, model)  # the configuration, its attention trace and the answer (attn_core)
except attn_models.ModelError as err:  # a model lesson without its model (no network and no cached copy), or with
    st.header(f"{at + 1}. {_(lesson.title)}")  # one of another kind than it needs (a masked-LM, a sentence encoder)
    unread = model is None and not isinstance(err, attn_models.KindError)  # else: read, of another kind
    st.warning(text.md_escape(i18n.error_text(err)), icon=":material/cloud_off:" if unread else
               ":material/swap_horiz:")
    if unread:
        st.info(_("This lesson looks inside a pretrained model, and its weights cannot be read here. Skip it: the "
                  "other lessons need nothing but this app."), icon=":material/info:")
    else:
        where = {"causal": registry.GENERATE, "translator": registry.TRANSLATE}.get(lesson.family, registry.MODEL)
        st.info(_("Name such a model on {page} and come back, or skip this lesson: the other lessons need nothing but "
                  "this app.").format(page=_(where.title)), icon=":material/info:")
    st.divider()
    lesson_ui.move_on(lesson)
    st.stop()
facts = lessons.localized(w.solution.facts, _)  # the facts that are words, in the learner's language


def fill(template: str) -> str:
    """A lesson's text (a marked English template) in the learner's language, its facts filled in."""
    return lessons.fill(_(template), facts, precision, _)


def width_of(title: str) -> int:
    """About how many 7 px characters a title line needs (a CJK character takes two)."""
    return sum(2 if ord(c) >= 0x2E80 else 1 for c in title)


st.header(f"{at + 1}. {_(lesson.title)}")
st.caption(_("Lesson {at} of {n} · {status}").format(at=at + 1, n=n_lessons, status=lesson_ui.status(lesson.key)))
st.markdown(fill(lesson.setup))
if lesson.shows:
    cfg = w.config
    mats = [cfg.matrix(name) for name in lesson.shows]
    rows = [text.token_labels(cfg) if name == "x" else text.dim_labels(m.shape[0]) for name, m in zip(
        lesson.shows, mats, strict=True)]
    places = controls.side_by_side([heatmap.heatmap_width(m, r, precision) for m, r in zip(mats, rows, strict=True)])
    for place, name, m, r in zip(places, lesson.shows, mats, rows, strict=True):
        with place:
            matrix_block(MATRIX_NAMES[name], "", m, r, text.dim_labels(m.shape[1]),
                         y_title=_("token") if name == "x" else _("row"), x_title=_("column"))

st.markdown(f"**{fill(lesson.question)}**")
attempt = lesson_ui.shown_attempt(lesson.key)

# ---- predict ----------------------------------------------------------------------------------------------------
if attempt is None:
    lesson_ui.prediction(w, precision)  # the widgets and Check my answer, in a form: one click checks

# ---- reveal -----------------------------------------------------------------------------------------------------
else:
    guess, is_right = attempt
    answer = lessons.answer_text(w, w.solution.answer, precision, _)
    if is_right:
        st.success(_("**Right.** The answer is {answer}.").format(answer=answer), icon=":material/check_circle:")
    else:
        st.error(_("**Not quite.** You said {guess}; the answer is {answer}.").format(
            guess=lessons.answer_text(w, guess, precision, _), answer=answer), icon=":material/cancel:")

    st.markdown(_("**The numbers**, computed on this lesson's configuration:"))
    st.markdown(text.md_table([_("what"), _("value")], [[fill(what), lessons.show(facts[name], precision, _)]
                                                        for what, name in w.solution.numbers]))
    matrices = [v for v in w.solution.views if isinstance(v, lessons.MatrixView)]
    view_titles = [fill(v.title) for v in matrices]
    signed = heatmap.shared_domain(*(v.values for v in matrices if v.kind == "signed"))  # one scale: comparable
    places = controls.side_by_side([max(heatmap.heatmap_width(v.values, list(v.rows), precision),
                                        7 * width_of(title) + 100)  # room for the title line
                                    for v, title in zip(matrices, view_titles, strict=True)])
    for place, v, title in zip(places, matrices, view_titles, strict=True):
        with place:
            if v.n_heads > 1:  # the heads' column slices marked
                st.markdown(_("**{title}** · shape {rows} × {cols}").format(title=title, rows=v.values.shape[0],
                                                                             cols=v.values.shape[1]))
                charts.show_chart(multihead_views.head_matrix(v.values, list(v.rows), n_heads=v.n_heads, title="",
                                                         y_title=_(v.y_title), x_title=_(v.x_title),
                                                         precision=precision))
            else:
                matrix_block(title, "", v.values, list(v.rows), list(v.cols), kind=v.kind, y_title=_(v.y_title),
                             x_title=_(v.x_title), masked=v.masked, domain=signed if v.kind == "signed" else None)
    for v in w.solution.views:
        if isinstance(v, lessons.BarsView):
            categories = (tuple(_(v.category_label).format(category=c) for c in v.categories) if v.category_label
                          else v.categories)
            charts.show_chart(lesson_views.bars(fill(v.title), categories,
                                                tuple((_(name), values) for name, values in v.series),
                                                y_title=_(v.y_title), precision=precision, stacked=v.stacked))
    st.markdown(fill(lesson.explanation))

    row = st.container(horizontal=True)
    if row.button(_("Try it yourself on {page}").format(page=_(lesson.page.title)), key="learn_try",
                  icon=":material/play_arrow:"):
        lesson_ui.try_it(w)
    row.button(_("Try again"), key="learn_retry", icon=":material/replay:", on_click=lesson_ui.retry)
    st.caption(_("**Try it yourself** loads this lesson's numbers into the explorer. There: {hint}").format(
        hint=fill(lesson.hint)))

# ---- move on ----------------------------------------------------------------------------------------------------
st.divider()
lesson_ui.move_on(lesson)
