"""Options shared by the whole suite."""


def pytest_addoption(parser):
    parser.addoption(
        "--fuzz-sessions", type=int, default=12,
        help="random AppTest sessions in tests/app/test_fuzz.py (the full run uses 500: bash .ci/dev fuzz)",
    )

