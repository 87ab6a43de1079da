"""The link as a whole, checked once per session: parameters no page reads, and parameters given twice, each said
as a notice (shown as typed, never as Markdown), never an error."""
import streamlit as st

from locales import _, ngettext
from views.shell.markdown import code
from views.shell.registry import link_keys
from views.widgets.cleaning import cut
from views.widgets.notices import notice

_LINK_CHECKED = "_link_checked"


def check_link() -> None:
    """On a session's first run: say which parameters of the link no page reads, and which are given twice."""
    if st.session_state.get(_LINK_CHECKED):
        return
    st.session_state[_LINK_CHECKED] = True
    keys = link_keys()
    unknown = [name for name in st.query_params if name not in keys]
    if unknown:
        names = ", ".join(code(cut(name)) for name in unknown[:5])
        more = len(unknown) - 5
        if more > 0:
            names = ngettext("{names} and {n} more", "{names} and {n} more", more).format(names=names, n=more)
        notice(ngettext("Ignored {names} in the link: no page of this app reads it.",
                        "Ignored {names} in the link: no page of this app reads them.", len(unknown)).format(
            names=names))
    for name in sorted(keys.intersection(st.query_params)):
        values = st.query_params.get_all(name)
        if len(values) > 1:
            notice(_("{name} is given {n} times in the link: the last one, {value}, is used.").format(
                name=code(name), n=len(values), value=code(cut(values[-1]))))
