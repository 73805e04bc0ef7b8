"""The page registry: every page of the app, declared once.

The navigation (attn_ui.shell.frame), the page a link opens (attn_ui.views.share_ui), the page titles, the benchmarks
and
the tests (AppTest and e2e) all read :data:`PAGES`. A new page is one entry here and its file in ``pages/``;
the tests visit it without another edit.

Plain data: importing it imports no Streamlit (the e2e tests and benchmarks read it too).
"""

from __future__ import annotations

from dataclasses import dataclass

from attn_ui.app.i18n import N_


@dataclass(frozen=True)
class Page:
    """One page of the app.

    Attributes
    ----------
    name : str
        The page's file stem, its URL path (``/steps``) and the name a link (``?c=``) uses to open it.
    title : str
        Its entry in the sidebar, in English (marked for the catalogs: show it with ``i18n._(page.title)``).
    icon : str
        A Material icon (``:material/…:``).
    heading : str
        The title the page itself shows (defaults to ``title``).
    linkable : bool
        Whether a shared link may open on this page (Share & export offers it as a choice).
    """

    name: str
    title: str
    icon: str
    heading: str = ""
    linkable: bool = True

    @property
    def file(self) -> str:
        """The page's script, relative to the repository root (what st.Page and st.page_link take)."""
        return f"pages/{self.name}.py"

    @property
    def page_heading(self) -> str:
        return self.heading or self.title


OVERVIEW = Page("overview", N_("Overview"), ":material/home:", heading=N_("Self-Attention Explorer"))
LEARN = Page("learn", N_("Learn"), ":material/school:", heading=N_("Learn: predict, then check"), linkable=False)
INPUTS = Page("inputs", N_("Inputs & weights"), ":material/edit:")
STEPS = Page("steps", N_("Step by step"), ":material/stairs:")
SCALING = Page("scaling", N_("Scaling"), ":material/straighten:")
MASKING = Page("masking", N_("Masking"), ":material/visibility_off:")
MULTIHEAD = Page("multihead", N_("Multi-head"), ":material/view_column:", heading=N_("Multi-head attention"))
MODERN = Page("modern", N_("Modern attention"), ":material/bolt:",
              heading=N_("Modern attention: what today's LLMs change"))
SCORES = Page("scores", N_("Score functions"), ":material/functions:",
              heading=N_("Score functions and cross-attention"))
MODEL = Page("model", N_("A real model"), ":material/psychology:")
GENERATE = Page("generate", N_("A model that writes"), ":material/edit_note:")
TRANSLATE = Page("translate", N_("A model that translates"), ":material/translate:")
SHARE = Page("share", N_("Share & export"), ":material/share:")

#: every page, in sidebar order; the first is the default page (the app's root address)
PAGES: tuple[Page, ...] = (OVERVIEW, LEARN, INPUTS, STEPS, SCALING, MASKING, MULTIHEAD, MODERN, SCORES, MODEL,
                           GENERATE, TRANSLATE, SHARE)
DEFAULT = PAGES[0]


def by_name(name: str) -> Page | None:
    """The page a link or a URL path names ("steps"), or None.

    >>> by_name("steps").title, by_name("nowhere")
    ('Step by step', None)
    """
    return next((p for p in PAGES if p.name == name), None)
