"""Light and dark, and a phone: the app follows the browser's colour scheme, and reads at 390 px.

- In dark (prefers-color-scheme: dark; .streamlit/config.toml configures [theme.light] and [theme.dark], so the
  app follows the system setting), the page background is dark, and each number written on a heatmap cell
  contrasts with its cell (read from the SVG's computed colours: attn_ui.widgets.heatmap.cell_ink picks black or white
  per
  cell); the charts' axis labels are light.
- At 390 × 844 (is_mobile), no page is wider than the viewport: ``scrollWidth <= innerWidth``, and no element
  sticks out past its right edge, except inside containers that scroll on purpose (grids, charts, code, formulas);
  a chart's own box fits the screen and scrolls sideways (attn_ui.shell.frame: a wider chart was cut off at the edge).
"""

from __future__ import annotations

import pytest
from playwright.sync_api import Browser

from . import helpers
from .helpers import APP_IDLE, CHART, VIEWPORT, chart_after, goto_page, open_app, watch_runs

pytestmark = pytest.mark.e2e

PHONE = {"width": 390, "height": 844}

#: WCAG contrast of two "rgb(r, g, b)" strings
CONTRAST_JS = """
const lum = c => { const v = c.match(/[\\d.]+/g).slice(0, 3).map(Number).map(x => x / 255)
    .map(x => x <= 0.03928 ? x / 12.92 : ((x + 0.055) / 1.055) ** 2.4);
    return 0.2126 * v[0] + 0.7152 * v[1] + 0.0722 * v[2]; };
const contrast = (a, b) => { const [x, y] = [lum(a), lum(b)].sort((p, q) => q - p); return (x + 0.05) / (y + 0.05); };
"""


@pytest.fixture
def dark_page(browser: Browser, app_server: str):
    context = browser.new_context(viewport=VIEWPORT, color_scheme="dark")
    context.set_default_timeout(20_000)
    page = context.new_page()
    watch_runs(page)
    open_app(page, app_server)
    try:
        yield page
    finally:
        context.close()


def test_dark_background_and_legible_heatmap_cells(dark_page):
    page = dark_page
    goto_page(page, "Step by step")
    background = page.evaluate("getComputedStyle(document.querySelector('[data-testid=stApp]')).backgroundColor")
    assert page.evaluate(f"() => {{ {CONTRAST_JS} return lum({background!r}); }}") < 0.05, background
    chart = chart_after(page, "Weights")
    chart.locator("g.mark-text text").first.wait_for()
    # each number lies over the rect mark whose box holds its centre
    pairs = chart.evaluate(f"""c => {{ {CONTRAST_JS}
        const rects = [...c.querySelectorAll('g.mark-rect path')].map(e => [e, e.getBoundingClientRect()]);
        return [...c.querySelectorAll('g.mark-text text')].map(t => {{
            const b = t.getBoundingClientRect(), x = b.x + b.width / 2, y = b.y + b.height / 2;
            const [cell] = rects.find(([, r]) => r.left <= x && x <= r.right && r.top <= y && y <= r.bottom) || [null];
            const ink = getComputedStyle(t).fill, fill = cell ? getComputedStyle(cell).fill : "none";
            return [t.textContent, ink, fill, cell ? contrast(ink, fill) : 0];
        }});
    }}""")
    pairs = [p for p in pairs if p[2] != "none"]  # numbers beside the cells (none today) have no cell
    assert len(pairs) >= 4, pairs
    weak = [p for p in pairs if p[3] < 4.5]
    assert not weak, f"numbers that do not contrast 4.5:1 with their cell (text, ink, fill, ratio): {weak}"
    inks = {p[1] for p in pairs}
    assert inks <= {"rgb(0, 0, 0)", "rgb(255, 255, 255)"}, inks
    # the axes' labels follow the theme: light on the dark page
    label = chart.locator("g.role-axis-label text").first
    ink = label.evaluate("e => getComputedStyle(e).fill")
    assert page.evaluate(f"() => {{ {CONTRAST_JS} return contrast({ink!r}, {background!r}); }}") >= 4.5, ink


#: elements sticking out past the viewport's right edge, outside containers that scroll on purpose
OVERFLOW_JS = """() => {
    const scrolls = '[data-testid="stDataFrame"], [data-testid="stVegaLiteChart"], [data-testid="stGraphVizChart"], '
        + '[data-testid="stCode"], pre, '
        + '.katex-display, [data-testid="stTable"], [data-testid="stHorizontalBlock"] [data-testid="stDataFrame"]';
    const w = window.innerWidth, out = [];
    for (const e of document.querySelectorAll('[data-testid="stMain"] *')) {
        if (e.closest(scrolls)) continue;
        if (e.matches('[data-testid="stSlider"] input')) continue;  // the thumb's invisible input, 20 px wide
        // KaTeX's MathML copy for screen readers is clipped to nothing and never drawn; it keeps the width of a
        // formula the browser wrapped at its "=" (the drawn copy wraps)
        if (e.closest('.katex-mathml')) continue;
        const r = e.getBoundingClientRect();
        const id = e.closest('[data-testid]')?.dataset.testid;
        if (r.width && r.right > w + 1) out.push(`${e.tagName.toLowerCase()} in ${id} right=${Math.round(r.right)}: `
            + `${(e.textContent || e.getAttribute('aria-label') || '').trim().slice(0, 40)}`);
    }
    // a chart fits the screen and scrolls sideways in its own box; the pipeline diagram is not shrunk to a strip
    // (one side by side with others may stand a few pixels into the gap beside it, within the screen)
    const cut = e => e.getBoundingClientRect().right > w + 1
        || (getComputedStyle(e).overflowX !== 'auto' && !e.closest('[data-testid="stHorizontalBlock"]'))
        || (e.dataset.testid === 'stGraphVizChart' && e.querySelector('svg').getBoundingClientRect().height < 40);
    const charts = [...document.querySelectorAll('[data-testid="stVegaLiteChart"], [data-testid="stGraphVizChart"]')]
        .filter(cut).map(e => `${e.dataset.testid} ${e.getAttribute('aria-label') || ''} `
                              + `right=${Math.round(e.getBoundingClientRect().right)}`);
    const links = [...document.querySelectorAll('[data-testid="stMain"] [data-testid="stPageLink-NavLink"] span')]
        .filter(e => e.scrollWidth > e.clientWidth + 1)  // a label cut at its box's edge
        .map(e => `page link cut: ${e.textContent.trim().slice(0, 40)}`);
    return {scrollWidth: document.documentElement.scrollWidth, innerWidth: w,
            out: [...out, ...charts, ...links].slice(0, 8)};
}"""


@pytest.mark.parametrize("entry", helpers.registry.PAGES, ids=lambda p: p.name)
def test_phone_has_no_horizontal_overflow(browser: Browser, app_server: str, entry):
    context = browser.new_context(viewport=PHONE, is_mobile=True, has_touch=True)
    context.set_default_timeout(20_000)
    try:
        page = context.new_page()
        watch_runs(page)
        open_app(page, f"{app_server}/{entry.name}")  # the sidebar is closed on a phone: open by address
        page.wait_for_selector(APP_IDLE)
        if page.locator(CHART).count():
            page.locator(CHART).first.locator("svg, canvas").first.wait_for()
        found = page.evaluate(OVERFLOW_JS)
        assert found["scrollWidth"] <= found["innerWidth"], f"{entry.title} is wider than a phone: {found}"
        assert not found["out"], f"{entry.title}: elements past the right edge at 390 px: {found['out']}"
    finally:
        context.close()
