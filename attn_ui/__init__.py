"""attn_ui: the Streamlit glue between attn_core, attn_models and the pages, in subpackages by role (infra, app,
widgets, views, lessons, shell): ARCHITECTURE.md says who imports whom and where a change goes."""
