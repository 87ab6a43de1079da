"""Lecture mode (?lecture=1, or the sidebar's toggle): each page's main chart first and whole on a 1280x720
projector, with 20 px ticks; the page's controls in the sidebar.

on() says whether it is on; toggle() draws the switch; css() is the page's CSS (a slim header, no caption); controls()
gives a page the places for its controls: columns above the chart normally, the sidebar in lecture mode;
figure() makes a chart's figure readable on a projector (viz.lecture).
"""
import contextlib

import streamlit as st

from locales import _
from views.widgets import state
from viz.contrast import readable
from viz.lecture import for_projector
from viz.spec import FigureSpec, figure_dicts

NAME = "lecture"
# The viewport of a 1280x720 projector (or 1920x1080 at 150 %) is 720 CSS px tall; above the chart are the app's
# header band (3.5 rem) and the page's title: a chart of this height ends above the bottom edge.
CHART_HEIGHT = 480
_CSS = """<style>
[data-testid="stMainBlockContainer"] {padding-top: 3.5rem; padding-bottom: 1rem;}
[data-testid="stMainBlockContainer"] h1 {font-size: 1.75rem; padding: 0 0 0.25rem 0;}
[data-testid="stMainBlockContainer"] [data-testid="stCaptionContainer"]:first-of-type {display: none;}
[data-testid="stSidebar"] {font-size: 1.1rem;}
</style>"""


def on() -> bool:
    """Lecture mode, as the sidebar's toggle (or the link) set it for this session."""
    return bool(state.kept(NAME) if NAME not in st.session_state else st.session_state[NAME])


def toggle(container=None) -> bool:
    container = container or st.sidebar
    return state.toggle(_("Lecture mode"), "lecture", False, container=container,
                        help=_("For a projector: the main chart first and whole on a 1280×720 screen, large ticks, "
                               "the page's controls here in the sidebar."))


def css() -> str:
    """The page's CSS in lecture mode (a slim header, no caption); nothing otherwise."""
    return _CSS if on() else ""


def place():
    """Where a group of controls goes in lecture mode (a place in the sidebar); None otherwise, so that a page writes
    `lecture.place() or <its own place>` and makes its own only when it is used."""
    return st.sidebar.container() if on() else None


def charts_row(spec: int | list) -> list:
    """Places for charts side by side: st.columns(spec), or in lecture mode one after the other, each the whole
    width (a half-width map on a projector is too small to read, and the numbers in its cells would overlap)."""
    return [st.container()] * (spec if isinstance(spec, int) else len(spec)) if on() else list(st.columns(spec))


def controls(spec, **kwargs) -> list:
    """Places for a row of controls: st.columns(spec) above the chart, or in lecture mode one sidebar place each."""
    if not on():
        return list(st.columns(spec, **kwargs))
    n = spec if isinstance(spec, int) else len(spec)
    return [st.sidebar.container() for _slot in range(n)]


def sidebar():
    """A block whose controls go to the sidebar in lecture mode (with lecture.sidebar(): ...), else in place."""
    return st.sidebar if on() else contextlib.nullcontext()


def figure(fig, height: int | None = None) -> dict | FigureSpec:
    """fig (a go.Figure, a viz FigureSpec or a figure dict) as drawn: its text in a grey a student can read
    (viz.contrast), and for a projector in lecture mode, `height` px tall (default CHART_HEIGHT). A dict for a dict,
    else a FigureSpec (st.plotly_chart takes it without checking every property again)."""
    drawn = readable(figure_dicts(fig))
    if on():
        drawn = for_projector(drawn, height or CHART_HEIGHT)
    return drawn if isinstance(fig, dict) else FigureSpec(drawn["data"], drawn["layout"])


def one_at_a_time(count: int, label: str) -> int:
    """In lecture mode: which of `count` parts of a long page to show (1-based), with Previous / Next in the
    sidebar, bound to ?stage=; 0 (all of them) otherwise."""
    if not on():
        return 0

    def move(by: int) -> None:
        st.session_state["stage"] = min(count, max(1, st.session_state.get("stage", 1) + by))

    back, forward = st.sidebar.columns(2)
    back.button(_("Previous"), icon=":material/arrow_back:", on_click=move, args=(-1,), width="stretch")
    forward.button(_("Next"), icon=":material/arrow_forward:", on_click=move, args=(1,), width="stretch")
    return state.int_slider(label, "stage", 1, count, 1, container=st.sidebar)
