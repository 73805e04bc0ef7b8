"""The frame around every page: navigation, the sidebar and its Edit the numbers panel, the router's last-line message
for an unforeseen error. May import every other subpackage of attn_ui; none imports it.
"""
