"""attn_ui: the Streamlit glue between attn_core and the pages (state, editors, charts, layout)."""
