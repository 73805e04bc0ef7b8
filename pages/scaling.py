"""scaling page (to be built)."""

import streamlit as st

st.title("scaling")
st.info("This page is being built.")
