"""A page made of parts (the Translate page, the Language model page): ?part= picks one, drawn in a fragment so that
a slider in it reruns only it; the part that writes word by word reruns by itself while it plays."""
import importlib

import streamlit as st

from views.widgets import link_writes
from views.widgets.next_word import PLAY_EVERY


def show_part(parts: dict, part: str, writing: str, playing_key: str, shared) -> None:
    """Draw a page's part (parts: ?part= -> (label, module with section(shared))) in a fragment, so that a slider in it
    reruns only it; the writing part (`writing`) reruns by itself every PLAY_EVERY seconds while it plays."""
    if part != writing:
        st.session_state[playing_key] = False
    (_playing if st.session_state.get(playing_key) else _part)(parts[part][1], shared)


def _section(module: str, shared) -> None:
    importlib.import_module(module).section(shared)


_part = link_writes.fragment(_section)
_playing = link_writes.fragment(_section, run_every=PLAY_EVERY)  # the same part, rerun every step while playing
