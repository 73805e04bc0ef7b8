"""attn_ui.infra."""
