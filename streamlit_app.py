"""Self-Attention Explorer: the router (page config, state, navigation: attn_ui/frame.py), then the page."""

from attn_ui import frame

frame.navigation().run()
