"""Words for a learner: no page speaks in the project's internal names.

Every page of the registry is visited with every preset loaded, and everything it shows a reader is collected:
titles, headers, Markdown, captions, LaTeX, messages, the labels, help texts and shown options of widgets, page links,
expanders, tables and the titles inside charts (axes, legends, tooltips). None of it may name a tutorial by its file
number ("seed 003"), a preset by its id ("seed004_unscaled"), or a code identifier as prose ("k_d",
"query_representations", "np.tril"); code blocks (the NumPy script on Share & export) are code and left out.

The tutorials are credited once, in the Sources section at the end of Overview: each by its title and language.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import fields

import pytest
from google.protobuf.json_format import MessageToDict
from streamlit.testing.v1 import AppTest

from attn_core import PRESETS
from attn_ui import lessons
from attn_ui.app import registry, state
from attn_ui.views import model_views

from .apptools import APP, notes, plain

# what a learner has never seen: the tutorials' file numbers, preset ids, code identifiers written as prose
INTERNAL = [
    re.compile(r"\bseeds? ?0\d\d\b", re.IGNORECASE),
    re.compile(r"\bseed ?0\d\d\b", re.IGNORECASE),  # "seed000", "seed 003"
    re.compile(r"\bSeed 00"),
    re.compile(r"\bk_d\b"),
    re.compile(r"query_representations"),
    *(re.compile(rf"\b{re.escape(key)}\b") for key in PRESETS if not key.isalpha()),  # not "additive": a word
]
NOT_IN_PROSE = re.compile(r"np\.tril")  # allowed in code, not in the words around it
CODE_SPAN = re.compile(r"`[^`]*`")

# proto fields that are no text a reader sees (ids, addresses, data, styling)
SKIP_FIELDS = {"id", "formId", "data", "page", "pageScriptHash", "icon", "datasets", "arrowData", "styles", "spec",
               "theme", "useContainerWidth", "width", "height", "url", "fragmentId", "deltaPath"}


@pytest.fixture(autouse=True)
def folders_allowed(monkeypatch):
    """These tests name checkpoint folders (made here, or all-MiniLM-L6-v2's): the operator's switch on."""
    monkeypatch.setenv("ATTN_ALLOW_FOLDERS", "1")


def proto_strings(value, key: str = "") -> Iterator[str]:
    """Every string in a proto's dict form, but under the fields a reader never sees."""
    if key in SKIP_FIELDS or key.endswith("Id"):
        return
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for k, v in value.items():
            yield from proto_strings(v, k)
    elif isinstance(value, list):
        for v in value:
            yield from proto_strings(v, key)


def chart_titles(spec) -> Iterator[str]:
    """The titles a Vega-Lite chart shows: the chart's, its axes', legends' and tooltips' (and any description)."""
    if isinstance(spec, dict):
        for k, v in spec.items():
            if k in ("title", "description", "text") and isinstance(v, str | list):
                yield from ([v] if isinstance(v, str) else [s for s in v if isinstance(s, str)])
            else:
                yield from chart_titles(v)
    elif isinstance(spec, list):
        for v in spec:
            yield from chart_titles(v)


def shown(at: AppTest) -> list[str]:
    """All the text the app shows a reader, code blocks left out."""
    out: list[str] = []

    def walk(node) -> None:
        kind = getattr(node, "type", "")
        proto = getattr(node, "proto", None)
        if kind == "code":
            pass  # code is code (the NumPy script, a snippet to copy)
        elif kind == "dataframe":
            frame = node.value
            out.extend(str(c) for c in frame.columns)
            out.extend(str(i) for i in frame.index)
            out.extend(str(v) for v in frame.to_numpy().ravel() if isinstance(v, str))
        elif kind == "vega_lite_chart":
            spec = json.loads(proto.spec)
            out.extend(chart_titles(spec))
        elif proto is not None:
            out.extend(proto_strings(MessageToDict(proto)))
            if kind == "graphviz_chart":
                out.extend(re.findall(r'label="([^"]*)"', proto.spec))
        children = getattr(node, "children", None)
        if isinstance(children, dict):
            for child in children.values():
                walk(child)

    walk(at._tree)
    return [plain(s) for s in out if s.strip()]


def internal_names(texts: list[str]) -> list[str]:
    """The texts that name something a learner has never seen, each with what it names."""
    bad = []
    for t in texts:
        found = [m.group(0) for rx in INTERNAL for m in [rx.search(t)] if m]
        if m := NOT_IN_PROSE.search(CODE_SPAN.sub("", t)):
            found.append(m.group(0))
        if found:
            bad.append(f"{found}: {t[:300]!r}")
    return bad


def app_with(preset: str) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=120).run()
    at.switch_page(registry.INPUTS.file).run()
    at.selectbox(key="inputs_preset").set_value(preset).run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.session_state[state.PRESET] == preset
    return at


@pytest.mark.parametrize("preset", [p if p == "seed000" else pytest.param(p, marks=pytest.mark.full) for p in PRESETS])
def test_no_page_names_internal_things(preset: str):  # seed000 in the quick tier, every other preset in the full
    at = app_with(preset)
    bad = {}
    for page in registry.PAGES:
        at.switch_page(page.file).run()
        assert not at.exception, (page.name, [e.value for e in at.exception])
        if found := internal_names(shown(at)):
            bad[page.name] = found
    assert not bad, json.dumps(bad, indent=1, ensure_ascii=False)


MASK_WORDS = {  # how the Masking caption starts for each mask, and words that say how the mask is made
    "none": ("No mask:", "matrix of ones"),
    "causal": ("Causal:", "lower triangle"),
    "padding": ("Padding:", "column j is 0 in every row"),
    "custom": ("Custom:", "ticked in the grid"),
}


@pytest.mark.parametrize("preset", ["seed000", "cross_translation"])
def test_masking_says_how_each_mask_is_built(preset: str):
    """The caption under the boolean mask describes the mask chosen (NumPy only as code), in words a learner reads."""
    at = app_with(preset)
    at.switch_page(registry.MASKING.file).run()
    kinds = at.radio(key="masking_kind").options
    assert ("causal" in kinds) != PRESETS[preset].build().cross
    for kind in kinds:
        at.radio(key="masking_kind").set_value(kind).run()
        if kind == "padding":
            at.multiselect(key="masking_pad").set_value([0]).run()
        assert not at.exception, (kind, [e.value for e in at.exception])
        start, words = MASK_WORDS[kind]
        (caption,) = [plain(c) for c in notes(at) if plain(c).startswith("1 = may attend")]
        assert f"masked. {start}" in caption and words in caption, (kind, caption)
        assert ("np.tril" in caption) == (kind == "causal"), (kind, caption)
        assert not internal_names(shown(at)), kind


def test_a_real_model_reads_as_words(tmp_path):
    """A real model with a tiny checkpoint (no network): its text names nothing internal either."""
    from .. import tiny_bert

    at = AppTest.from_file(APP, default_timeout=120)
    at.session_state[model_views.SOURCE] = str(tiny_bert.build(tmp_path))
    at.run()
    at.switch_page(registry.MODEL.file).run()
    assert not at.exception, [e.value for e in at.exception]
    assert not internal_names(shown(at))


def test_the_preset_choices_read_as_words():
    """The Preset selectbox shows each preset's title and source; its notes show under it."""
    at = app_with(next(iter(PRESETS)))
    box = at.selectbox(key="inputs_preset")
    assert len(box.options) == len(PRESETS)
    assert not internal_names(list(box.options))
    for p in PRESETS.values():
        assert not internal_names([p.title, p.source, p.note]), p.key


def test_lessons_read_as_words():
    """Every lesson's words (setup, question, answers, explanation, hint) and the titles of what it shows."""
    texts = []
    for lesson in lessons.LESSONS:
        texts += [getattr(lesson, f.name) for f in fields(lesson) if isinstance(getattr(lesson, f.name), str)
                  and f.name not in ("key", "preset")]
        if isinstance(lesson.ask, lessons.Choice):
            texts += list(lesson.ask.options)
        if not lesson.needs_model:
            sol = lessons.solved(lesson.key, None).solution
            texts += [v.title for v in sol.views] + [what for what, _ in sol.numbers]
    assert not internal_names(texts)


# ---- the Sources section on Overview --------------------------------------------------------------------------

TUTORIALS = {  # a title as it is written in the tutorial, and its language
    "Self Attention cacultate with numpy": "Chinese",
    "[Attention-Series] 1. Self-Attention": "Korean",
    "(Python) The Attention Mechanism": "Korean",
    "Transformer": "English",
    "Self Attention": "English",
}


def sources(at: AppTest) -> list[str]:
    """The Sources list on Overview: one Markdown line per tutorial."""
    heads = [h for h in [*at.subheader, *at.header] if h.value == "Sources"]
    assert len(heads) == 1, "one Sources section"
    block = next(m.value for m in at.markdown if m.value.lstrip().startswith("- ") and "tutorial" in m.value.lower()
                 and "Chinese" in m.value)
    return [plain(line) for line in block.splitlines() if line.startswith("- ")]


def test_sources_name_each_tutorial_and_its_language(app: AppTest):
    lines = sources(app)
    assert len(lines) == len(TUTORIALS)
    for (title, language), line in zip(TUTORIALS.items(), lines, strict=True):
        assert f"“{title}”" in line, (title, line)
        assert language in line, (language, line)
    assert not internal_names(lines)


def test_sources_only_on_overview():
    """One Sources section: no other page has one."""
    at = AppTest.from_file(APP, default_timeout=120).run()
    for page in registry.PAGES[1:]:
        at.switch_page(page.file).run()
        assert not [h for h in [*at.subheader, *at.header] if h.value == "Sources"], page.name
