"""The learner's state and what every page shares: the configuration, its setters and undo (state), the page registry
(registry), languages (i18n), the address bar (address), a configuration's origin checked where it comes in
(origins). Imports attn_ui.infra only.
"""
