"""attn_ui.app."""
