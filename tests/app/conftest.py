"""Fixtures for the AppTest suite (helpers live in apptools.py)."""

import pytest
from streamlit.testing.v1 import AppTest

from .apptools import new_app


@pytest.fixture
def app() -> AppTest:
    return new_app()
