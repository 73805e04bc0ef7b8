"""attn_ui.views."""
