"""Self-Attention Explorer: the router (page config, state, navigation)."""

import streamlit as st

from attn_ui import layout, share_ui, state

st.set_page_config(page_title="Self-Attention Explorer", page_icon=":material/center_focus_strong:", layout="wide")
state.init()
pg = st.navigation([
    st.Page(layout.OVERVIEW, title="Overview", icon=":material/home:", default=True),
    st.Page(layout.INPUTS, title="Inputs & weights", icon=":material/edit:"),
    st.Page(layout.STEPS, title="Step by step", icon=":material/stairs:"),
    st.Page(layout.SCALING, title="Scaling", icon=":material/straighten:"),
    st.Page(layout.MASKING, title="Masking", icon=":material/visibility_off:"),
    st.Page(layout.MULTIHEAD, title="Multi-head", icon=":material/view_column:"),
    st.Page(layout.SHARE, title="Share & export", icon=":material/share:"),
])
layout.follow_deep_link()  # a page Streamlit first ran without this router
share_ui.apply_query_params(pg)  # a ?c= permalink: once per session; may switch to its page
share_ui.sidebar(pg)
pg.run()
