"""A token label never reorders the text after it (issue 27): a label holding U+202E (RIGHT-TO-LEFT OVERRIDE) once
turned "Tokens (3): abc, ‮def, ghi" into "ihg ,fed ,cba". Wherever a label is put into text a learner reads (a
sentence, a caption, a table's header, a chart's labels and tooltips, a selector's options), it is isolated
(attn_ui.widgets.text.isolate); the configuration keeps it as typed. Hebrew and Arabic labels are isolated too, so
they are
drawn right to left without pulling the numbers and commas around them along.
"""

from __future__ import annotations

import unicodedata

import numpy as np
import pyarrow.ipc
from google.protobuf.json_format import MessageToDict
from streamlit.testing.v1 import AppTest

from attn_core import make_config
from attn_core.share import encode_link
from attn_ui.app import registry

from .apptools import APP, edit_cells, plain
from .test_words import chart_titles, proto_strings

RLO, FSI, PDI = "\u202e", "\u2068", "\u2069"  # RIGHT-TO-LEFT OVERRIDE; FIRST STRONG ISOLATE … POP DIRECTIONAL ISOLATE
LABELS = ("abc", f"{RLO}def", "ghi", "שלום", "a\u2069b\u2067c")  # an override; Hebrew; a stray PDI, an open RLI
X = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0], [0.5, -1.0], [2.0, 0.5]])
HOSTILE = make_config(list(LABELS), X, np.eye(2), np.eye(2), np.eye(2))
OPEN_ISOLATES, OPENERS = "\u2066\u2067\u2068", "\u202a\u202b\u202c\u202d\u202e"


def leak(text: str) -> str | None:
    """What in ``text`` would reorder the text after it, or None: a direction control or a right-to-left letter
    outside every isolate, a PDI that closes none, an isolate left open.

    >>> leak("abc, " + FSI + RLO + "def" + PDI + ", ghi") is None, leak("abc, " + RLO + "def")
    (True, 'U+202E outside an isolate')
    """
    depth = 0
    for ch in text:
        if ch in OPEN_ISOLATES:
            depth += 1
        elif ch == PDI:
            if not depth:
                return "a PDI that closes nothing"
            depth -= 1
        elif not depth and (ch in OPENERS or unicodedata.bidirectional(ch) in ("R", "AL")):
            return f"U+{ord(ch):04X} outside an isolate"
    return f"{depth} isolate(s) left open" if depth else None


def texts(at: AppTest) -> list[str]:
    """Every text the page shows a reader: its elements' words, tables' headers and row labels, charts' titles and
    data (their axis labels and tooltips). Left out: a grid's cells (each is drawn on its own, and the token grid
    shows each label as typed, to be edited) and code (Share & export's script, to be copied as it is: Python's
    repr writes a direction control as an escape, \\u202e)."""
    out: list[str] = []

    def walk(node) -> None:
        kind, proto = getattr(node, "type", ""), getattr(node, "proto", None)
        if kind == "code":
            pass
        elif kind == "dataframe":
            out.extend(str(v) for v in [*node.value.columns, *node.value.index])
        elif kind == "vega_lite_chart":
            out.extend(chart_titles(MessageToDict(proto)))
            for ds in proto.datasets:
                frame = pyarrow.ipc.open_stream(ds.data.data).read_all().to_pandas()
                out.extend(v for v in frame.to_numpy().ravel() if isinstance(v, str))
        elif proto is not None:
            out.extend(proto_strings(MessageToDict(proto)))
        for child in (getattr(node, "children", None) or {}).values():
            walk(child)

    walk(at._tree)
    return [plain(s) for s in out]


def opened() -> AppTest:
    """A fresh session opened by a link to the hostile labels."""
    at = AppTest.from_file(APP, default_timeout=120)
    at.query_params["c"] = encode_link(HOSTILE, None)
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.session_state["config"].tokens == LABELS  # the configuration keeps the labels as typed
    return at


def test_the_overview_lists_the_tokens_in_their_order():
    at = opened()
    (line,) = [line for m in at.markdown for line in m.value.splitlines() if "**Tokens** (5)" in line]
    isolated = f"abc, {FSI}{RLO}def{PDI}, ghi, {FSI}שלום{PDI}, {FSI}ab\u2067c{PDI}{PDI}"  # in the order they are
    assert plain(line) == f"- **Tokens** (5): {isolated}", ascii(line)


def test_no_page_lets_a_label_reorder_what_follows():
    at = opened()
    leaks, seen = [], 0
    for page in registry.PAGES:
        at.switch_page(page.file).run()
        assert not at.exception, (page.name, [e.value for e in at.exception])
        shown = texts(at)
        seen += sum(f"{RLO}def" in t for t in shown)
        leaks += [f"{page.name}: {why}: {t[:120]!r}" for t in shown if (why := leak(t))]
    assert not leaks, "\n".join(leaks)
    assert seen > 20  # the label is shown (and checked) in sentences, tables and charts


def test_a_lesson_name_in_a_link_is_isolated_in_its_message():
    at = AppTest.from_file(APP, default_timeout=60)
    at.query_params["lesson"] = f"{RLO}nope"
    at.run()
    (message,) = [w.value for w in at.warning if "does not exist" in w.value]
    assert leak(plain(message)) is None and f"{FSI}{RLO}nope{PDI}" in message, ascii(message)


def test_a_right_to_left_value_typed_in_a_cell_is_isolated_in_its_message():
    """A fresh reviewer typed "مرحبا" into X: the whole message was isolated, not the value, and its quotes and the
    comma after them were laid out with the Arabic ("column 0 is 'مرحبا',not a number."). The value is isolated with
    its quotes; the sentence around it stays as written."""
    at = AppTest.from_file(APP, default_timeout=60).run()
    at.switch_page(registry.INPUTS.file).run()
    edit_cells(at, "x", {0: {0: "مرحبا"}})
    said = [plain(e.value) for e in at.error if "not a number" in plain(e.value)]
    assert said and f"column 0 is {FSI}'مرحبا'{PDI}, not a number." in said[0], said
