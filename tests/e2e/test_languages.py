"""Chinese and Korean in Chromium (issue 18): a ?lang= link, the sidebar's picker, every page, real glyphs.

- A ``?lang=ko`` link opens the app in Korean (the page's title, the sidebar's page links, ``<html lang>``).
- The picker (English · 中文 · 한국어) switches the language with one rerun; the learner then walks every page by
  its translated sidebar link, and the choice stays (and is in the address).
- The glyphs are real: Chinese and Korean text drawn in the app's own font gives a different picture for two
  different characters (a missing font draws the same empty box, "tofu", for both).
- Longer labels do not overflow: at 390 px no page in Chinese or Korean is wider than the phone.
"""

from __future__ import annotations

import pytest
from playwright.sync_api import Browser, Page, expect

from attn_ui.app import i18n, registry

from .helpers import APP_IDLE, CHART, expect_rerun, goto_page, open_app, wait_for_app, watch_runs
from .test_themes import OVERFLOW_JS, PHONE

pytestmark = pytest.mark.e2e

#: two characters of each language's script: with a font, they are drawn differently; without, as the same box
GLYPHS = {"zh": ("注", "权"), "ko": ("어", "텐")}
LANGS = [code for code in i18n.LANGUAGES if code != i18n.DEFAULT]
GLYPHS_JS = """([a, b]) => {
    const font = getComputedStyle(document.querySelector('[data-testid="stMarkdownContainer"]') || document.body);
    const draw = ch => {
        const c = document.createElement('canvas'); c.width = c.height = 48;
        const g = c.getContext('2d'); g.font = `32px ${font.fontFamily}`; g.fillText(ch, 4, 36);
        return Array.from(g.getImageData(0, 0, 48, 48).data).join(',');
    };
    const blank = draw(' ');
    return {differ: draw(a) !== draw(b), inked: draw(a) !== blank && draw(b) !== blank};
}"""


def tr(lang: str, text: str) -> str:
    return i18n.catalog(lang).gettext(text)


def heading(page: Page) -> str:
    return page.locator('[data-testid="stMain"] h1').first.inner_text().strip()


def picker_choice(page: Page, name: str):
    return page.locator('[data-testid="stSidebar"] [data-testid="stButtonGroup"] button').filter(has_text=name)


def test_a_lang_link_opens_in_korean(page: Page, app_server: str):
    open_app(page, f"{app_server}/steps?lang=ko")
    assert heading(page) == tr("ko", registry.STEPS.page_heading)
    links = page.locator('[data-testid="stSidebarNav"] [data-testid="stSidebarNavLink"]')
    expect(links.filter(has_text=tr("ko", registry.SHARE.title))).to_have_count(1)
    assert "lang=ko" in page.url
    assert page.evaluate("document.documentElement.lang") == "ko"  # voices, glyph forms, line breaks
    assert page.evaluate("getComputedStyle(document.querySelector('h1')).wordBreak") == "keep-all"  # between words


@pytest.mark.parametrize("lang", LANGS)
def test_switch_and_walk_every_page(page: Page, app_server: str, lang: str):
    open_app(page, app_server)
    assert heading(page) == registry.OVERVIEW.page_heading  # English first (the browser here asks for en-US)
    with expect_rerun(page):
        picker_choice(page, i18n.LANGUAGES[lang]).click()
    assert heading(page) == tr(lang, registry.OVERVIEW.page_heading)
    assert f"lang={lang}" in page.url
    glyphs = page.evaluate(GLYPHS_JS, list(GLYPHS[lang]))
    assert glyphs == {"differ": True, "inked": True}, f"{lang}: no font draws these characters (tofu): {glyphs}"
    for entry in registry.PAGES[1:]:
        goto_page(page, tr(lang, entry.title))
        wait_for_app(page)
        assert heading(page) == tr(lang, entry.page_heading), entry.name
        assert page.evaluate("document.documentElement.lang") == i18n.tag(lang), entry.name
        expect(picker_choice(page, i18n.LANGUAGES[lang])).to_have_attribute("aria-checked", "true")


@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("entry", registry.PAGES, ids=lambda p: p.name)
def test_longer_labels_fit_a_phone(browser: Browser, app_server: str, lang: str, entry):
    context = browser.new_context(viewport=PHONE, is_mobile=True, has_touch=True)
    context.set_default_timeout(20_000)
    try:
        page = context.new_page()
        watch_runs(page)
        open_app(page, f"{app_server}/{'' if entry is registry.DEFAULT else entry.name}?lang={lang}")
        page.wait_for_selector(APP_IDLE)
        if page.locator(CHART).count():
            page.locator(CHART).first.locator("svg, canvas").first.wait_for()
        assert heading(page) == tr(lang, entry.page_heading)
        found = page.evaluate(OVERFLOW_JS)
        assert found["scrollWidth"] <= found["innerWidth"], f"{entry.name} in {lang} is wider than a phone: {found}"
        assert not found["out"], f"{entry.name} in {lang}: elements past the right edge at 390 px: {found['out']}"
    finally:
        context.close()


UPLOADER_TEXTS_JS = """() => {
    const zone = document.querySelector('[data-testid="stFileUploaderDropzone"]');
    const after = (el) => getComputedStyle(el, '::after').content.replace(/^"|"$/g, '');
    const button = zone.querySelector('button [data-testid="stMarkdownContainer"] p');
    const line = zone.querySelector('[data-testid="stFileUploaderDropzoneInstructions"] span');
    return {button: [after(button), button.getBoundingClientRect().width],
            line: [after(line), line.getBoundingClientRect().width], text: zone.innerText};
}"""


@pytest.mark.parametrize("lang", LANGS)
def test_the_uploaders_own_texts_are_in_the_learners_language(page: Page, app_server: str, lang: str):
    """Share & export's uploader said "Upload" and "40MB per file • JSON" in English on a Chinese or Korean page
    (Streamlit's texts, with no setting): its words are written over in the learner's language, where Streamlit's
    were, and take room (the button's and the line's widths are the translation's)."""
    open_app(page, f"{app_server}/{registry.SHARE.name}?lang={lang}")
    shown = page.evaluate(UPLOADER_TEXTS_JS)
    assert shown["button"][0] == tr(lang, "Upload") and shown["button"][1] > 10, shown
    assert shown["line"][0] == tr(lang, "{mb} MB per file · JSON").format(mb=40) and shown["line"][1] > 40, shown
    open_app(page, f"{app_server}/{registry.SHARE.name}?lang=en")  # English: Streamlit's own words, as they are
    assert page.evaluate(UPLOADER_TEXTS_JS)["button"][0] == "none"
