"""What one step of a scripted student gets back from the server (harness/students/protocol.py fills it in)."""
from __future__ import annotations

from dataclasses import dataclass, field

from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

SUCCESS = (ForwardMsg.FINISHED_SUCCESSFULLY, ForwardMsg.FINISHED_FRAGMENT_RUN_SUCCESSFULLY)


class StepFailed(Exception):
    """The connection is unusable (closed, timed out): the session cannot go on."""


@dataclass
class StepResult:
    status: int | None = None  # ForwardMsg.ScriptFinishedStatus, None if it never finished
    seconds: float = 0.0
    bytes: int = 0
    messages: int = 0  # ForwardMsgs received (one websocket frame each)
    url_messages: int = 0  # of which page_info_changed: the whole query string, sent on each URL write
    charts: int = 0
    fragment_run: bool = False
    cached: int = 0  # messages the server sent as a reference to the client's message cache
    problems: list[str] = field(default_factory=list)  # exception elements, st.error alerts, page not found
    alerts: list[tuple[str, str]] = field(default_factory=list)  # (INFO / SUCCESS / WARNING, body) of other alerts
    metrics: dict[str, str] = field(default_factory=dict)  # st.metric's label -> its value as shown
    links: list[Link] = field(default_factory=list)  # st.page_link elements drawn
    marks: dict[str, float] = field(default_factory=dict)  # s from the step's start to the first HTML a watch matched


@dataclass(frozen=True)
class Link:
    """An st.page_link to a page of the app: a click switches page with its query string (the tour's Next)."""
    label: str
    page_hash: str
    query_string: str
    fragment_id: str = ""
