"""One module of views per page, with its widget keys and the cached computations it shows (the explorer's trace:
compute). Imports attn_ui.infra, app and widgets.
"""
