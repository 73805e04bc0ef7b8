"""Self-Attention Explorer: the router (page config, state, navigation: attn_ui/frame.py), then the page (its
unforeseen errors a message, not a traceback: frame.run)."""

from attn_ui import frame, memory, sessions

memory.limit_malloc()  # once per process: large freed blocks go back to the system (attn_ui/memory.py)
sessions.install()  # once per process: a closed tab's session is shut down, its uploads freed (attn_ui/sessions.py)
frame.run(frame.navigation())
