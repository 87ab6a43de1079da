"""Download buttons whose file is built on click, and which say so on the page when building it fails.

Streamlit runs a download's callable when the button is clicked, on a server thread outside the page script: it
cannot write to the page, an exception it raises reaches only the server log, and the browser shows a generic
"Failed to generate file for download" under the button for five seconds, without the reason. The click also
reruns the page, and the button's on_click runs first in that rerun, in the page's thread. So on_click waits
for this click's file and, if it could not be built, leaves a message that the button draws below itself.
"""
import threading
from collections.abc import Callable

import streamlit as st

STARTS_WITHIN = 5.0  # s: the browser asks for the file as it sends the click; past this it is not coming
BUILDS_WITHIN = 300.0  # s: the longest the rerun waits for the file (the whole trace of a long text and big model)
_FAILED = "_download_failed"  # session state: {file name: message} of the download that just failed


class LazyFile:
    """The callable a download button is given: build() on click, remembering whether it failed."""

    def __init__(self, build: Callable[[], bytes], file_name: str):
        self._build, self.file_name = build, file_name
        self._started, self._finished = threading.Event(), threading.Event()
        self.failure: str | None = None

    def __call__(self) -> bytes:
        """On Streamlit's thread, when the button is clicked. Re-raises: no half-made file is downloaded."""
        self.failure = None
        self._finished.clear()
        self._started.set()
        try:
            return self._build()
        except Exception as e:
            # The type only: the message may name server paths. Streamlit logs the traceback.
            self.failure = (f"{self.file_name} could not be made ({type(e).__name__}), so nothing was downloaded. "
                            "The server's log has the details.")
            raise
        finally:
            self._finished.set()

    def wait(self, starts_within: float = STARTS_WITHIN, builds_within: float = BUILDS_WITHIN) -> str | None:
        """The failure of the build this click started, once it ended; None if it worked or never came."""
        if self._started.wait(starts_within) and self._finished.wait(builds_within):
            return self.failure
        return None


def _after_click(file: LazyFile) -> None:
    """on_click: at the start of the rerun the click causes, before the page is drawn again."""
    failure = file.wait()
    if failure is not None:
        st.session_state[_FAILED] = {file.file_name: failure}


def button(label: str, build: Callable[[], bytes], file_name: str, mime: str, container=None) -> None:
    """st.download_button of build() (called on click, not on every run), and below it, after a click whose
    file could not be built, the reason."""
    container = container or st
    file = LazyFile(build, file_name)
    container.download_button(label, file, file_name=file_name, mime=mime, on_click=_after_click, args=(file,))
    failure = st.session_state.get(_FAILED, {}).pop(file_name, None)
    if failure is not None:
        container.error(failure, icon=":material/error:")
