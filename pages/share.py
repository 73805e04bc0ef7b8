"""Share & export: a permalink, the configuration as JSON (out and in), every matrix as CSV, NumPy code.

The files themselves (JSON, CSV, the script) are code and data and stay in English; the page around them is
translated.
"""

import streamlit as st

from attn_core import LIMITS, AttentionInputError
from attn_ui.app import i18n, registry, state
from attn_ui.app.i18n import _
from attn_ui.shell import frame
from attn_ui.views import compute, share_ui
from attn_ui.widgets import text

frame.page_start(registry.SHARE)

cfg = state.config()
st.markdown(_(
    "Send someone exactly what you see: a **link** holds the whole configuration (tokens, X, W_Q, W_K, W_V, "
    "W_O, heads, scale and mask, and Y and the score function's weights when used) and the page to open. The "
    "**JSON file** holds the same, for configurations too large for a link and for keeping your work. **CSV** "
    "tables and a **NumPy script** take the numbers elsewhere."
))

share_ui.pending_edits_warning()

# ---- permalink ----------------------------------------------------------------------------------------
st.header(_("Link"), anchor=False)
titles = {p.name: p.title for p in registry.PAGES if p.linkable}  # English, N_-marked in attn_ui.app.registry
page = share_ui.choice(st, _("The link opens on"), list(titles), key="share_link_page", default=registry.STEPS.name,
                       format_func=i18n.option_labels(titles))
share_ui.link_block(cfg, page, key="share_link", offer_json=False)  # the JSON download is just below
st.caption(_("This link follows your configuration; a copied link keeps the numbers it was made with. "
             "**Share this** in the sidebar makes a link to whichever page you are on."))

# ---- JSON ---------------------------------------------------------------------------------------------
st.header(_("Configuration file (JSON)"), anchor=False)
share_ui.import_result()
left, right = st.columns(2)
with left:
    st.caption(_("Everything in a readable JSON file (schema version 1, one matrix row per line)."))
    share_ui.json_download(cfg, key="share_json")
with right, st.container(key=share_ui.UPLOADER_BOX):
    st.file_uploader(
        _("Load a configuration"), type=["json"], key=share_ui.uploader_key(), on_change=share_ui.import_file,
        help=_("A JSON file saved here, at most {most:,} bytes. A file that is not valid leaves "
               "your configuration as it is.").format(most=LIMITS.file_bytes),
    )
    if words := share_ui.uploader_words():  # the uploader's own texts in the learner's language
        st.html(f"<style>{words}</style>")

# ---- CSV ----------------------------------------------------------------------------------------------
st.header(_("Tables (CSV)"), anchor=False)
try:
    share_ui.csv_downloads(cfg, compute.trace(cfg))
except AttentionInputError as err:
    st.error(_("The intermediates cannot be computed, so only the inputs can be saved (as JSON): {error}").format(
        error=text.md_escape(i18n.error_text(err))), icon=":material/error:")

# ---- NumPy --------------------------------------------------------------------------------------------
st.header(_("NumPy code"), anchor=False)
st.caption(_("A standalone script (numpy only) that rebuilds this configuration and prints every intermediate "
             "in a parseable form: `## <name> <rows> <cols>`, then one line of exact values per row."))
share_ui.code_block(cfg)
