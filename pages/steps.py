"""steps page (to be built)."""

import streamlit as st

st.title("steps")
st.info("This page is being built.")
