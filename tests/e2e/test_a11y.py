"""Accessibility: axe-core finds no serious or critical WCAG 2 A/AA violation on any page, in light and in dark,
in English and in Chinese and Korean (the page's ``lang`` then says so: axe checks it is valid).

axe-core (the axe.min.js bundled by the ``axe-playwright-python`` package) runs in the page with the rules tagged
wcag2a, wcag2aa, wcag21a, wcag21aa. One browser context per theme (the app follows the browser's colour scheme:
both themes are configured in .streamlit/config.toml), walking every page of attn_ui.app.registry.PAGES in one session
as a learner would; each page is then one test, so a failure names its page and theme.

One correction to axe: ``scrollable-region-focusable`` is meant for regions that scroll by more than 13 px (axe's
own threshold), but axe 4.12 memoises its scroll test by element alone, so an earlier rule's call without the
threshold decides: a KaTeX formula whose hidden MathML pokes 2 px out of its box was reported. Such nodes are
measured again here and kept only if they scroll by more than 13 px.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page

from attn_ui.app import i18n

from .helpers import APP_IDLE, PAGE_TITLES, VIEWPORT, goto_page, watch_runs

pytestmark = pytest.mark.e2e

#: (colour scheme, language) of each session walked: both themes in English, then each other language once
SESSIONS = (("light", "en"), ("dark", "en"), ("light", "zh"), ("dark", "ko"))
TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]
BLOCKING = ("serious", "critical")
SCROLL_SLACK_PX = 13  # axe's threshold for a scrollable region

RUN_AXE = """async ([tags, slack]) => {
    const result = await axe.run(document, {runOnly: {type: "tag", values: tags}, resultTypes: ["violations"]});
    const scrolls = sel => {
        const e = document.querySelector(sel);
        return !e || e.scrollWidth - e.clientWidth > slack || e.scrollHeight - e.clientHeight > slack;
    };
    return result.violations.map(v => ({
        id: v.id, impact: v.impact, help: v.help,
        nodes: v.nodes
            .filter(n => v.id !== "scrollable-region-focusable" || n.target.length > 1 || scrolls(n.target[0]))
            .map(n => ({target: n.target.join(" >>> "), summary: (n.failureSummary || "").replace(/\\s+/g, " ")})),
    })).filter(v => v.nodes.length);
}"""


def axe_script() -> Path:
    """axe.min.js as the axe-playwright-python package bundles it (a test dependency: .ci/dev)."""
    axe_playwright_python = pytest.importorskip(
        "axe_playwright_python", reason="pip install axe-playwright-python (it bundles axe-core)")
    return Path(axe_playwright_python.__file__).parent / "axe.min.js"


def run_axe(page: Page) -> list[dict]:
    """The WCAG 2 A/AA violations axe finds on the page as it is now: [{id, impact, help, nodes}]."""
    if not page.evaluate("typeof window.axe !== 'undefined'"):
        page.add_script_tag(path=str(axe_script()))
    return page.evaluate(RUN_AXE, [TAGS, SCROLL_SLACK_PX])


@pytest.fixture(scope="module")
def violations(browser: Browser, app_server: str) -> Iterator[dict[tuple[tuple[str, str], str], list[dict]]]:
    """{((theme, language), page title): violations}: one context per session, every page visited in it."""
    axe_script()
    found: dict[tuple[tuple[str, str], str], list[dict]] = {}
    for theme, lang in SESSIONS:
        context = browser.new_context(viewport=VIEWPORT, color_scheme=theme)
        context.set_default_timeout(20_000)
        try:
            page = context.new_page()
            watch_runs(page)
            page.goto(f"{app_server}/?lang={lang}")
            page.wait_for_selector(APP_IDLE)
            dark = page.evaluate(DARK_BACKGROUND)
            assert dark == (theme == "dark"), f"the app did not follow the browser's {theme} colour scheme"
            for title in PAGE_TITLES:
                goto_page(page, i18n.catalog(lang).gettext(title))  # the sidebar's link, in the session's language
                page.wait_for_timeout(300)  # charts draw after the run
                found[(theme, lang), title] = run_axe(page)
        finally:
            context.close()
    yield found


#: whether the app's background is dark (its luminance below one half)
DARK_BACKGROUND = """() => {
    const [r, g, b] = getComputedStyle(document.querySelector('[data-testid="stApp"]')).backgroundColor
        .match(/[\\d.]+/g).map(Number);
    return 0.2126 * r + 0.7152 * g + 0.0722 * b < 128;
}"""


def report(found: list[dict]) -> str:
    lines = []
    for v in found:
        lines.append(f"{v['impact']} {v['id']} ({len(v['nodes'])}): {v['help']}")
        lines.extend(f"    {n['target']}\n        {n['summary'][:300]}" for n in v["nodes"][:6])
        if len(v["nodes"]) > 6:
            lines.append(f"    ... and {len(v['nodes']) - 6} more")
    return "\n".join(lines)


@pytest.mark.parametrize("session", SESSIONS, ids="-".join)
@pytest.mark.parametrize("title", PAGE_TITLES)
def test_no_serious_violation(violations, session, title):
    blocking = [v for v in violations[session, title] if v["impact"] in BLOCKING]
    assert not blocking, f"axe on {title} ({session}): serious or critical WCAG 2 A/AA violations\n{report(blocking)}"
