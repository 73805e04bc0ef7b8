"""share page (to be built)."""

import streamlit as st

st.title("share")
st.info("This page is being built.")
