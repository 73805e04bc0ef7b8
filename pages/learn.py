"""Learn: guided lessons. Each sets up a configuration and asks a question; the learner commits a prediction, then
the app computes the answer on the lesson's numbers, shows them, explains, and offers to try it in the explorer."""

import streamlit as st

import attn_models
from attn_core import MATRIX_NAMES
from attn_ui import (
    charts,
    controls,
    frame,
    head_views,
    heatmap,
    lesson_ui,
    lesson_views,
    lessons,
    registry,
    state,
    text,
)
from attn_ui.matrix_display import matrix_block

frame.page_start(registry.LEARN)

PICK = "learn_pick"  # selectbox: the lesson open

if notice := state.pop_notice():
    st.warning(text.md_escape(notice), icon=":material/link_off:")
controls.precision_control("learn", st.sidebar)
precision = controls.precision()
n_lessons = len(lessons.LESSONS)

st.markdown(
    f"{n_lessons} short lessons, one idea each. Read the setup, commit a prediction, then check it: the app computes "
    "the answer on the lesson's own numbers, shows them and explains. **Try it yourself** then loads those numbers "
    "into the explorer and opens the page that shows them; **Undo** in the sidebar brings your own numbers back."
)

# ---- the course: progress and the lesson open --------------------------------------------------------------------
answered, right = lesson_ui.progress()
st.progress(answered / n_lessons, text=f"{answered} of {n_lessons} lessons answered, {right} right")
lesson = lesson_ui.current()
at = lessons.index_of(lesson.key)
titles = [f"{i + 1}. {x.title}" for i, x in enumerate(lessons.LESSONS)]  # fixed: the browser keeps a shown label
st.selectbox("Lesson", list(range(n_lessons)), width=520, format_func=titles.__getitem__,
             **state.bind(PICK, at, lambda: lesson_ui.open_lesson(lessons.LESSONS[st.session_state[PICK]].key)))
with st.expander("All lessons and how you did"):
    st.markdown(text.md_table(["lesson", "your answer"], [[t, lesson_ui.status(x.key)]
                                                          for t, x in zip(titles, lessons.LESSONS, strict=True)]))
lesson_ui.keep_in_address_bar(lesson)
try:
    w = lesson_ui.worked(lesson)  # the configuration, its attention trace and the answer, computed by attn_core
except attn_models.ModelError as err:  # a model lesson without its model (no network and no cached copy)
    st.header(f"{at + 1}. {lesson.title}")
    st.warning(text.md_escape(str(err)), icon=":material/cloud_off:")
    st.info("This lesson looks inside a pretrained model, and its weights cannot be read here. Skip it: the other "
            "lessons need nothing but this app.", icon=":material/info:")
    st.divider()
    lesson_ui.move_on(lesson)
    st.stop()
facts = w.solution.facts


def fill(template: str) -> str:
    return lessons.fill(template, facts, precision)


st.header(f"{at + 1}. {lesson.title}")
st.caption(f"Lesson {at + 1} of {n_lessons} · {lesson_ui.status(lesson.key)}")
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
                         y_title="token" if name == "x" else "row", x_title="column")

st.markdown(f"**{fill(lesson.question)}**")
attempt = lesson_ui.shown_attempt(lesson.key)

# ---- predict ----------------------------------------------------------------------------------------------------
if attempt is None:
    guess = lesson_ui.prediction(w, precision)
    st.button("Check my answer", key=lesson_ui.CHECK, icon=":material/check:",
              disabled=guess is None, on_click=lesson_ui.commit)

# ---- reveal -----------------------------------------------------------------------------------------------------
else:
    guess, is_right = attempt
    answer = lessons.answer_text(w, w.solution.answer, precision)
    if is_right:
        st.success(f"**Right.** The answer is {answer}.", icon=":material/check_circle:")
    else:
        st.error(f"**Not quite.** You said {lessons.answer_text(w, guess, precision)}; the answer is {answer}.",
                 icon=":material/cancel:")

    st.markdown("**The numbers**, computed on this lesson's configuration:")
    st.markdown(text.md_table(["what", "value"], [[what, lessons.show(facts[name], precision)]
                                              for what, name in w.solution.numbers]))
    matrices = [v for v in w.solution.views if isinstance(v, lessons.MatrixView)]
    signed = heatmap.shared_domain(*(v.values for v in matrices if v.kind == "signed"))  # one scale: comparable
    places = controls.side_by_side([max(heatmap.heatmap_width(v.values, list(v.rows), precision),
                                        7 * len(v.title) + 100) for v in matrices])  # room for the title line
    for place, v in zip(places, matrices, strict=True):
        with place:
            if v.n_heads > 1:  # the heads' column slices marked
                st.markdown(f"**{v.title}** · shape {v.values.shape[0]} × {v.values.shape[1]}")
                charts.show_chart(head_views.head_matrix(v.values, list(v.rows), n_heads=v.n_heads, title="",
                                                         y_title=v.y_title, x_title=v.x_title,
                                                         precision=precision))
            else:
                matrix_block(v.title, "", v.values, list(v.rows), list(v.cols), kind=v.kind, y_title=v.y_title,
                             x_title=v.x_title, masked=v.masked, domain=signed if v.kind == "signed" else None)
    for v in w.solution.views:
        if isinstance(v, lessons.BarsView):
            charts.show_chart(lesson_views.bars(v.title, v.categories, v.series, y_title=v.y_title,
                                                precision=precision, stacked=v.stacked))
    st.markdown(fill(lesson.explanation))

    row = st.container(horizontal=True)
    if row.button(f"Try it yourself on {lesson.page.title}", key="learn_try",
                  icon=":material/play_arrow:"):
        lesson_ui.try_it(w)
    row.button("Try again", key="learn_retry", icon=":material/replay:", on_click=lesson_ui.retry)
    st.caption(f"**Try it yourself** loads this lesson's numbers into the explorer. There: {fill(lesson.hint)}")

# ---- move on ----------------------------------------------------------------------------------------------------
st.divider()
lesson_ui.move_on(lesson)
