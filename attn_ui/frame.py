"""The frame around every page: page config, session state, navigation, permalink, share control.

The router (streamlit_app.py) runs it and then the chosen page. A page runs it too when Streamlit
ran that page on its own: while no run in the process has called st.navigation, Streamlit's legacy
support for a ``pages/`` folder runs the file named by the URL without the router (a first request
straight to /steps on a fresh server; and every AppTest run, which resets that state).
"""

from __future__ import annotations

import streamlit as st
from streamlit.navigation.page import StreamlitPage
from streamlit.runtime.pages_manager import PagesManager

from . import editor, layout, share_ui, state


def navigation() -> StreamlitPage:
    """Set up the session and the sidebar; return the page to run."""
    st.set_page_config(page_title="Self-Attention Explorer", page_icon=":material/center_focus_strong:",
                       layout="wide")
    state.init()
    editor.commit_pending()  # an edit sent with a page switch still counts
    pg = st.navigation([
        st.Page(layout.OVERVIEW, title="Overview", icon=":material/home:", default=True),
        st.Page(layout.INPUTS, title="Inputs & weights", icon=":material/edit:"),
        st.Page(layout.STEPS, title="Step by step", icon=":material/stairs:"),
        st.Page(layout.SCALING, title="Scaling", icon=":material/straighten:"),
        st.Page(layout.MASKING, title="Masking", icon=":material/visibility_off:"),
        st.Page(layout.MULTIHEAD, title="Multi-head", icon=":material/view_column:"),
        st.Page(layout.SHARE, title="Share & export", icon=":material/share:"),
    ])
    share_ui.apply_query_params(pg)  # a ?c= permalink: once per session; may switch to its page
    share_ui.sidebar(pg)
    return pg


def page_start() -> None:
    """The first line of every page: the frame, unless the router has just drawn it."""
    if getattr(PagesManager, "uses_pages_directory", False):  # run without the router (see module doc)
        navigation()
