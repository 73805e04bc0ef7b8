"""Streamlit's floor: one data_editor grid and one number derived from it, nothing else.

bench/app.py and bench/browser.py time it beside the app. ``?rows=R&cols=C`` sets the grid's size
(default 3 × 4, seed 000's X); the number is the sum of the grid's cells.

    .venv/bin/python -m streamlit run bench/floor_app.py
"""

import numpy as np
import pandas as pd
import streamlit as st

rows = int(st.query_params.get("rows", 3))
cols = int(st.query_params.get("cols", 4))
start = pd.DataFrame(np.arange(rows * cols, dtype=float).reshape(rows, cols) / 10,
                     columns=[str(j) for j in range(cols)])
grid = st.data_editor(start, key="floor_grid", num_rows="fixed")
st.write(f"sum = {grid.to_numpy().sum():.4f}")
