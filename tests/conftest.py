"""Options shared by the whole suite, and its two tiers.

``bash .ci/dev test`` (the README's command) runs the quick tier, ``-m "not full"``: every core, model and AppTest test
and a browser walk through every page (tests/e2e/test_pages.py). ``bash .ci/dev full`` runs the rest, ``-m full``:
the full matrices (every page × preset × language in AppTest, the fuzz's later sessions) and every other browser
test (themes, languages, axe-core, the long flows). ``.ci/run`` runs both.
"""

import os

import pytest

#: every chart spec the suite builds is checked against the Vega-Lite schema (a server skips the check:
#: attn_ui.widgets.charts.CHECK_ENV); set before any test runs, inherited by the servers the browser tests start
os.environ["ATTN_CHECK_CHARTS"] = "1"

#: the only browser tests of the quick tier: one walk through every page, photographed (the smoke test)
QUICK_E2E = ("tests/e2e/test_pages.py",)


def pytest_collection_modifyitems(config, items):
    """Every browser test but the smoke walk belongs to the full tier."""
    for item in items:
        path = item.path.as_posix()
        if "/tests/e2e/" in path and not path.endswith(QUICK_E2E):
            item.add_marker(pytest.mark.full)


def pytest_addoption(parser):
    parser.addoption(
        "--fuzz-sessions", type=int, default=12,
        help="random AppTest sessions in tests/app/test_fuzz.py (the full run uses 500: bash .ci/dev fuzz)",
    )

