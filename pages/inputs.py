"""inputs page (to be built)."""

import streamlit as st

st.title("inputs")
st.info("This page is being built.")
