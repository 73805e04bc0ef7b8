"""Options shared by the whole suite."""


def pytest_addoption(parser):
    parser.addoption(
        "--fuzz-sessions", type=int, default=12,
        help="random AppTest sessions in tests/app/test_fuzz.py (the full run uses 500: bash .ci/dev fuzz)",
    )


def pytest_collection_modifyitems(config, items):
    """Under pytest-xdist with ``--dist loadgroup`` (``bash .ci/dev test``'s default), the browser tests run one at
    a time on one worker while the other runs the rest: two Chromiums at once on a 2-core machine make the timing
    of a click race the app's own rerun (tests/e2e/test_grid_edits.py), and each worker would start its own server."""
    import pytest

    for item in items:
        if item.get_closest_marker("e2e"):
            item.add_marker(pytest.mark.xdist_group("e2e"))
