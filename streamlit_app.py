"""Self-Attention Explorer: the router (page config, state, navigation)."""

import streamlit as st

from attn_ui import layout, state

st.set_page_config(page_title="Self-Attention Explorer", page_icon="🔍", layout="wide")
state.init()
pg = st.navigation([
    st.Page(layout.OVERVIEW, title="Overview", icon="🏠", default=True),
    st.Page(layout.INPUTS, title="Inputs & weights", icon="✏️"),
    st.Page(layout.STEPS, title="Step by step", icon="🪜"),
    st.Page(layout.SCALING, title="Scaling", icon="📏"),
    st.Page(layout.MASKING, title="Masking", icon="🎭"),
    st.Page(layout.MULTIHEAD, title="Multi-head", icon="🧩"),
    st.Page(layout.SHARE, title="Share & export", icon="🔗"),
])
pg.run()
