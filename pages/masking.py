"""masking page (to be built)."""

import streamlit as st

st.title("masking")
st.info("This page is being built.")
