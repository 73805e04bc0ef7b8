"""The language catalogs (issue 18): complete, in step with the code, compiled, and no text bypasses them.

Every text the app shows is marked in the code (``_``, ``N_``, ``ngettext``: attn_ui/app/i18n.py); Babel extracts
the marks the way ``bash .ci/dev i18n`` does, and each language's catalog must translate every one of them,
keep its placeholders, formulas and links, and be compiled (the app reads the ``.mo``). A second check reads
the code itself: no literal English goes to a Streamlit text call, a widget's label or help, or a chart title
without passing through the translation function.
"""

from __future__ import annotations

import ast
import gettext
import re
from functools import cache

import pytest
from babel.messages.extract import extract_from_file
from babel.messages.pofile import read_po

from attn_core import N_, SCORE_WORDS, AttentionInputError
from attn_ui.app import i18n

from .test_no_unsafe_calls import ROOT, python_files  # the app's own code: attn_core, attn_models, attn_ui, pages

KEYWORDS = {"_": None, "N_": None, "ngettext": (1, 2)}
LANGS = [code for code in i18n.LANGUAGES if code != i18n.DEFAULT]

PLACEHOLDER = re.compile(r"(?<![_^\\A-Za-z{])\{[A-Za-z_]\w*(?:![rsa])?(?::[^{}]*)?\}")  # {n}, {v!r}, {x:.4f}; not LaTeX
LINK_TARGET = re.compile(r"\]\(([^)\s]+)\)")
LATEX = re.compile(r"\$\$.+?\$\$|\$[^$]+\$", re.S)


@cache
def marked() -> dict[str | tuple[str, str], str]:
    """Every message id marked in the code -> where (file:line)."""
    ids = {}
    for path in python_files():
        for lineno, msg, _comments, _context in extract_from_file("python", str(path), keywords=KEYWORDS):
            ids.setdefault(msg, f"{path.relative_to(ROOT)}:{lineno}")
    return ids


@cache
def po(lang: str):
    with (i18n.LOCALE_DIR / lang / "LC_MESSAGES" / f"{i18n.DOMAIN}.po").open("rb") as f:
        return read_po(f)


def test_the_code_marks_texts_and_every_language_has_a_catalog():
    assert len(marked()) > 500  # the whole app: pages, lessons, presets, messages
    assert {"en", "zh", "ko"} <= set(i18n.LANGUAGES) and i18n.DEFAULT == "en"
    for lang in LANGS:
        assert po(lang).locale is not None and str(po(lang).locale).startswith(lang)


@pytest.mark.parametrize("lang", LANGS)
def test_every_message_has_a_translation(lang):
    catalog = po(lang)
    missing, empty = [], []
    for msg, where in marked().items():
        entry = catalog.get(msg[0] if isinstance(msg, tuple) else msg)
        if entry is None:
            missing.append(f"{where}: {msg!r}")
        elif not all(entry.string if isinstance(entry.string, tuple) else [entry.string]):
            empty.append(f"{where}: {msg!r}")
    assert not missing, f"{len(missing)} message ids not in the {lang} catalog (bash .ci/dev i18n):\n" + "\n".join(
        missing[:20])
    assert not empty, f"{len(empty)} empty translations in {lang}:\n" + "\n".join(empty[:20])


@pytest.mark.parametrize("lang", LANGS)
def test_no_stale_or_fuzzy_entries(lang):
    ids = {m[0] if isinstance(m, tuple) else m for m in marked()}
    stale = [m.id for m in po(lang) if m.id and (m.id[0] if isinstance(m.id, tuple) else m.id) not in ids]
    fuzzy = [m.id for m in po(lang) if m.id and m.fuzzy]
    assert not stale, f"{lang}: entries no text in the code uses any more: {stale[:10]}"
    assert not fuzzy, f"{lang}: fuzzy entries (a guess, not a translation): {fuzzy[:10]}"


@pytest.mark.parametrize("lang", LANGS)
def test_translations_keep_placeholders_formulas_and_links(lang):
    wrong = []
    for m in po(lang):
        if not m.id:
            continue
        source = m.id[0] if isinstance(m.id, tuple) else m.id
        for text in m.string if isinstance(m.string, tuple) else [m.string]:
            if sorted(PLACEHOLDER.findall(source)) != sorted(PLACEHOLDER.findall(text)):
                wrong.append(f"placeholders: {source!r} -> {text!r}")
            if sorted(LATEX.findall(source)) != sorted(LATEX.findall(text)):
                wrong.append(f"formulas: {source!r} -> {text!r}")
            if sorted(LINK_TARGET.findall(source)) != sorted(LINK_TARGET.findall(text)):
                wrong.append(f"links: {source!r} -> {text!r}")
    assert not wrong, "\n".join(wrong[:20])


@pytest.mark.parametrize("lang", LANGS)
def test_compiled_catalog_says_what_the_po_says(lang):
    with (i18n.LOCALE_DIR / lang / "LC_MESSAGES" / f"{i18n.DOMAIN}.mo").open("rb") as f:
        compiled = gettext.GNUTranslations(f)
    for m in po(lang):
        if not m.id:
            continue
        if isinstance(m.id, tuple):
            assert compiled.ngettext(m.id[0], m.id[1], 2) == m.string[0], m.id
        else:
            assert compiled.gettext(m.id) == m.string, f"{lang}: .mo is out of date (bash .ci/dev i18n): {m.id!r}"


def test_an_error_is_shown_in_the_language_with_marked_words_translated_and_the_learners_text_never(monkeypatch):
    """error_text translates the template and the values marked with N_ (attn_core.Words), never a plain value:
    a token labelled "dot" or a cell holding "additive" stays what the learner typed."""
    monkeypatch.setattr(i18n, "language", lambda: "zh")
    marked = AttentionInputError(N_("{name}: the {score} score function needs {needs}."), name="W_a",
                                 score=SCORE_WORDS["general"], needs="W_a")
    assert str(marked) == "W_a: the general score function needs W_a."  # English as before
    assert i18n.error_text(marked) == "W_a：通用评分函数需要 W_a。"
    typed = AttentionInputError(N_("{name}: cell ({i}, {j}) is {v!r}, not a number."), name="X", i=0, j=1,
                                v="additive", matrix="X", cell=(0, 1))
    shown = i18n.error_text(typed)
    assert "'additive'" in shown and "加性" not in shown and shown != str(typed)
    assert i18n.filled(N_("dimensions changed"), {}) == i18n.catalog("zh").gettext("dimensions changed")


def test_catalog_lookup_in_each_language():
    assert i18n.catalog("zh").gettext("Undo") != "Undo" != i18n.catalog("ko").gettext("Undo")
    assert i18n.catalog("en").gettext("Undo") == "Undo"
    assert i18n._("Undo") == "Undo"  # outside a Streamlit run: English


# ---- no text bypasses the translation function ------------------------------------------------------------

#: Streamlit calls whose positional arguments are text a learner reads
TEXT_CALLS = {
    "title", "header", "subheader", "markdown", "caption", "text", "write", "info", "warning", "error", "success",
    "toast", "button", "download_button", "link_button", "page_link", "checkbox", "toggle", "radio", "selectbox",
    "multiselect", "select_slider", "slider", "number_input", "text_input", "text_area", "segmented_control",
    "pills", "expander", "popover", "tabs", "metric", "form_submit_button", "spinner", "status",
    "file_uploader", "help", "badge", "set_page_config", "matrix_block", "notify", "latex", "formula",
}
#: calls whose positional arguments are LaTeX (matrix_block's second: the formula)
FORMULA_CALLS = {"latex", "formula"}
#: keyword arguments that are text a learner reads, whatever the call
TEXT_KEYWORDS = {"label", "help", "placeholder", "caption", "title", "subtitle", "page_title", "body",
                 "description", "what", "show_spinner"}
#: words that may stand in an argument untranslated: matrix and dimension names, symbols, units
NOT_WORDS = {
    "X", "Y", "Q", "K", "V", "W_Q", "W_K", "W_V", "W_O", "W_a", "W_1", "W_2", "v_a", "QK", "d_k", "d_v", "d_q",
    "d_model", "n_heads", "n_seq", "n_y", "softmax", "tanh", "CSV", "JSON", "NumPy", "PyTorch", "BERT", "CLS", "SEP",
    "PAD", "concat", "√d_k", "ms", "MB", "KiB", "MiB", "x", "sqrt", "mathrm", "top", "cdot", "frac", "qquad",
    "text", "operatorname", "quad", "left", "right", "begin", "end", "bmatrix", "ldots", "cdots", "in", "R",
}
WORD = re.compile(r"[A-Za-z][A-Za-z_']*")
FIELD = re.compile(r"^\w+:[NOQT]$")  # an Altair field ("description:N"), not a text


def _words(text: str) -> list[str]:
    """The words of a literal a learner would read: without formulas, icons, code spans, and markup."""
    text = LATEX.sub(" ", text)
    text = re.sub(r":material/[a-z_]+:|`[^`]*`|\\[A-Za-z]+|https?://\S+|&[a-z]+;", " ", text)
    if FIELD.match(text):
        return []
    return [w for w in WORD.findall(text) if w not in NOT_WORDS and len(w) > 1 and not re.match(r"^[a-z]_", w)]


def _literal_text(node: ast.AST) -> str | None:
    """The text of a literal string argument (an f-string's literal parts), else None (a variable, a call)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        return " ".join(v.value for v in node.values if isinstance(v, ast.Constant))
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        return " ".join(t for t in (_literal_text(node.left), _literal_text(node.right)) if t)
    return None


def _is_logger_call(node: ast.Call) -> bool:
    """Whether the call is a logger's (``_LOG.info(...)``, ``log.warning(...)``): the server's log, which no learner
    reads and which stays in English."""
    receiver = node.func.value if isinstance(node.func, ast.Attribute) else None
    return isinstance(receiver, ast.Name) and re.fullmatch(r"_?(log|logger|LOG|LOGGER)", receiver.id) is not None


def untranslated(source: str, filename: str = "<source>") -> list[str]:
    """Every literal English text given to a Streamlit text call, a label, a help or a title, as 'file:line: text'."""
    found = []
    for node in ast.walk(ast.parse(source, filename=filename)):
        if not isinstance(node, ast.Call):
            continue
        name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
        if name in KEYWORDS or _is_logger_call(node):
            continue
        args = list(node.args) if name in TEXT_CALLS else []
        args += [kw.value for kw in node.keywords if kw.arg in TEXT_KEYWORDS]
        if name in {"Title", "Axis", "Legend", "Header"}:  # Altair's titles and legends
            args += list(node.args)
        formulas = list(node.args) if name in FORMULA_CALLS else list(node.args[1:2]) if name == "matrix_block" else []
        for arg in args:
            text = _literal_text(arg)
            if arg in formulas:  # LaTeX: only the words in its \text{...} are read as words
                text = " ".join(re.findall(r"\\text\{([^}]*)\}", text or "")) or None
            if text is not None and _words(text):
                found.append(f"{filename}:{arg.lineno}: {text[:80]!r}")
    return found


def test_the_source_check_finds_what_it_should():
    assert untranslated('st.caption("Hello there")') and untranslated('st.button(f"Undo: {what}")')
    assert untranslated('alt.X("col:O", title="key")') and untranslated('matrix_block(f"{n} weights", x)')
    assert not untranslated('st.caption(_("Hello there"))') and not untranslated('st.latex(r"QK^\\top")')
    assert untranslated('st.latex(r"S \\quad \\text{where query } i \\text{ may not attend}")')
    assert not untranslated('st.markdown(f"$W_Q$ {x}")') and not untranslated('st.title(page)')
    assert not untranslated('st.button(_("Undo: {what}").format(what=w))')
    assert not untranslated('_LOG.info("session %s shut down", sid)') and not untranslated('log.warning("odd")')
    assert untranslated('st.info("Shut down")') and untranslated('box.warning("Shut down")')


def test_no_user_facing_text_bypasses_the_translation_function():
    found = []
    for path in python_files():
        if path.parts[-2] in {"attn_core", "attn_models"}:  # no Streamlit there; their messages: error_text
            continue
        found += untranslated(path.read_text(), str(path.relative_to(ROOT)))
    assert not found, f"{len(found)} texts shown without _():\n" + "\n".join(found[:40])
