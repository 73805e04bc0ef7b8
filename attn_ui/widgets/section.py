"""A section's header and the paragraphs under it, drawn as one element.

Every element is a message Streamlit builds, hashes and sends, and the browser renders on its own (≈ 0.2 ms on the
server, ≈ 1.5 ms in the browser: bench/RESULTS.md, issue 37); a header and the text under it are one.
"""

from __future__ import annotations

import streamlit as st


def header(title: str, *paragraphs: str) -> None:
    """``st.header(title)`` followed by ``st.markdown`` of each non-empty paragraph, as one element that looks the
    same: Streamlit's header draws the first line of its body as the heading (its anchor made from that line alone)
    and the lines after it as Markdown under it, in the same element.

    ``title`` is one line (Markdown); the paragraphs are Markdown, the caller's words (translated, labels escaped).
    """
    text = "\n\n".join(p for p in paragraphs if p)
    st.header(f"{title}\n{text}" if text else title)
