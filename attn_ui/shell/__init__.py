"""attn_ui.shell."""
