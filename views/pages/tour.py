"""The Tour page: every stop of the guided tour (views/shell/tour_stops.py), in the tutorials' order, with its link."""
import streamlit as st

from locales import _
from views.shell.language import resolve
from views.shell.navigation import link_to
from views.shell.tour_stops import STOPS, link, query_params


def view(page) -> None:
    """The Tour page: every stop, in the tutorials' order, with its link."""
    lang = resolve()
    st.page_link(link_to(STOPS[0].path), label=_("Start the tour"), icon=":material/play_arrow:",
                 query_params=query_params(1, lang))
    for k, stop in enumerate(STOPS, start=1):
        with st.container(border=True):
            st.page_link(link_to(stop.path), label=_("{k}. {title}").format(k=k, title=_(stop.title)),
                         query_params=query_params(k, lang))
            st.markdown(_(stop.text))
            st.code(link(k, lang), language=None, wrap_lines=True)
