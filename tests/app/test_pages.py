"""Every page in the registry (attn_ui/app/registry.py) opens through the router with no exception and shows its title.

A page added to the registry is visited here without another edit.
"""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

from attn_ui.app import registry

from .apptools import APP


@pytest.mark.parametrize("page", registry.PAGES, ids=lambda p: p.name)
def test_every_page_opens_through_the_router(page: registry.Page):
    at = AppTest.from_file(APP, default_timeout=60).run()
    assert not at.exception
    at.switch_page(page.file).run()
    assert not at.exception
    assert at.title[0].value.startswith(page.page_heading)
