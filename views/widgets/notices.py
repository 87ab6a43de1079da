"""What a page says it ignored or changed (a bad value in the link, a text cut or cleaned): said once, where the page
shows its notices."""
import streamlit as st

_NOTICES = "_notices"


def notice(message: str) -> None:
    """Say message once with the next show_notices(): a page that runs two passes of one text (the masks page)
    notices what they share once."""
    notices = st.session_state.setdefault(_NOTICES, [])
    if message not in notices:
        notices.append(message)


def show_notices() -> None:
    """Show (once) what was ignored or changed, e.g. a bad value in the link."""
    for message in st.session_state.pop(_NOTICES, []):
        st.warning(message, icon=":material/warning:")
