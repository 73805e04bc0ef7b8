"""Self-Attention Explorer: the router (page config, state, navigation: attn_ui/shell/frame.py), then the page (its
unforeseen errors a message, not a traceback: frame.run)."""

from attn_ui.infra import memory, sessions
from attn_ui.shell import frame

memory.limit_malloc()  # once per process: large freed blocks go back to the system (attn_ui/infra/memory.py)
# once per process: a closed tab's session is shut down, its uploads freed (attn_ui/infra/sessions.py)
sessions.install()
frame.run(frame.navigation())
