"""The example page of docs/architecture.md, verbatim: what a new page is (tests/views/test_registry.py adds it to the
registry)."""
import numpy as np
import streamlit as st

from locales import _
from views.shell.frame import Page
from views.widgets import state


def view(page: Page) -> None:
    layer = state.int_slider(_("Layer"), "layer", 0, page.run.num_layers - 1, 0)  # bound to ?layer=
    p = page.run.attentions[layer]  # (heads, T, T), read-only, shared by every session
    st.bar_chart(-(p * np.log(p + 1e-12)).sum(-1).mean(-1))  # mean entropy per head
