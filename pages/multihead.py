"""multihead page (to be built)."""

import streamlit as st

st.title("multihead")
st.info("This page is being built.")
