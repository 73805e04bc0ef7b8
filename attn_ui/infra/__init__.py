"""The server: what every visitor shares and how it is bounded. The one byte budget of every cache and the fair compute
slots (budget), the operator's ATTN_* settings (settings), closed tabs' sessions shut down (sessions), malloc giving
freed memory back (memory), and everything the app needs from Streamlit without a public API (st_internals). Imports
nothing else of attn_ui.
"""
