"""Self-Attention Explorer: the router (page config, state, navigation: attn_ui/frame.py), then the page."""

from attn_ui import frame, memory

memory.limit_malloc()  # once per process: large freed blocks go back to the system (attn_ui/memory.py)
frame.navigation().run()
