"""attn_ui.widgets."""
