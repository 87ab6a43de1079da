"""Streamlit's own websocket protocol as one browser tab speaks it (Streamlit 1.67), for the scripted students of
bench/load.py and bench/tour_load.py.

A Session is a client of `/_stcore/stream` built from the protobufs in the streamlit package:
  * HTTP first: GET the page, `/_stcore/health` and `/_stcore/host-config` (cookies kept: the `_streamlit_xsrf`
    cookie, and a proxy's sticky-session cookie), then the websocket with the subprotocols `streamlit, <xsrf
    cookie>`, the `Origin` of the page and the cookies;
  * BackMsg.rerun_script with a ClientState: the URL's query string, the page (first run: page_name = url path,
    no hash; then the page_script_hash the server named in ForwardMsg.navigation), context_info, the hashes of
    the cached messages, and the value of every widget it has drawn (the one the user moved updated), with
    `fragment_id` when that widget lives in an `st.fragment`;
  * ForwardMsg handling: widgets from every Delta's new_element, the URL from page_info_changed, the message
    cache (messages marked cacheable are kept and later sent as ref_hash), script_finished ending a step;
  * a page switch as a click in the sidebar: the new page's page_script_hash, page_name "", the query string
    emptied; a click on an st.page_link (the tour's Next): the same with the link's query string;
  * a button's click: its trigger_value with that one rerun; the timer of an st.fragment(run_every=) (auto_rerun,
    cleared by a whole run, a page change, stop_auto_rerun): that fragment's rerun marked is_auto_rerun.
"""
from __future__ import annotations

import asyncio
import contextlib
import time
from dataclasses import replace
from urllib.parse import urlsplit

from google.protobuf.message import DecodeError
from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
from websockets.asyncio.client import connect as ws_connect
from websockets.exceptions import WebSocketException

from harness.students.http import USER_AGENT, http_get
from harness.students.results import SUCCESS, Link, StepFailed, StepResult
from harness.students.widgets import CHART_COMPONENT, Widget, add_widget_states, drawn_widget, moved, slider_of


class Session:
    """One browser tab's worth of Streamlit protocol: connect, rerun, move a widget, switch page."""

    def __init__(self, url: str, timeout: float = 60.0):
        parts = urlsplit(url if "://" in url else "http://" + url)
        self.host, self.port = parts.hostname or "127.0.0.1", parts.port or 80
        self.base = parts.path.rstrip("/")  # a base URL path, e.g. behind a proxy at /attnviz
        self.origin = f"http://{self.host}:{self.port}"
        self.timeout = timeout
        self.cookies: dict[str, str] = {}
        self.ws = None
        self.query_string = ""
        self.page_hash = ""  # the page the server says we are on (ForwardMsg.navigation / new_session)
        self.main_hash = ""
        self.pages: dict[str, str] = {}  # url_pathname -> page_script_hash
        self.navigated = False  # an st.navigation app: its navigation messages hold the url paths
        self.widgets: dict[str, Widget] = {}
        self.cache: dict[str, list] = {}  # hash -> [ForwardMsg, run count when last used, fragment id]
        self.run_count = 0  # finished runs, for the cache's ages
        self.max_age = 2  # the server's global.maxCachedMessageAge, from new_session
        self.page_path = ""
        self.links: list[Link] = []  # the page links on the page now
        self.auto_reruns: dict[str, float] = {}  # fragment id -> s: the browser's run_every timers
        self.watch: dict = {}  # name -> test of an st.html body: a step's marks[name], s to the first that matches
        self._step_start = 0.0

    async def connect(self, path: str = "", query: str = "") -> float:
        """What the browser does before the websocket: the page, health, host-config; then the socket."""
        start = time.perf_counter()
        self.query_string = query
        self.page_path = path
        target = f"{self.base}/{path}" + (f"?{query}" if query else "")
        status, _ = await http_get(self.host, self.port, target, self.cookies, self.timeout)
        if status != 200:
            raise StepFailed(f"GET {target} answered {status}")
        for endpoint in ("_stcore/health", "_stcore/host-config"):
            status, _ = await http_get(self.host, self.port, f"{self.base}/{endpoint}", self.cookies, self.timeout)
            if status != 200:
                raise StepFailed(f"GET /{endpoint} answered {status}")
        xsrf = self.cookies.get("_streamlit_xsrf", "PLACEHOLDER_AUTH_TOKEN")
        headers = {"Cookie": "; ".join(f"{k}={v}" for k, v in self.cookies.items())} if self.cookies else {}
        self.ws = await ws_connect(
            f"ws://{self.host}:{self.port}{self.base}/_stcore/stream", subprotocols=["streamlit", xsrf],
            origin=self.origin, additional_headers=headers, user_agent_header=USER_AGENT, max_size=None,
            open_timeout=self.timeout)
        return time.perf_counter() - start

    async def close(self) -> None:
        if self.ws is not None:
            with contextlib.suppress(Exception):
                await self.ws.close()
            self.ws = None

    # -- the three things a user does

    async def open(self) -> StepResult:
        """The first run, as on page load: no page hash yet, the page named by its url path."""
        return await self._rerun(page_hash="", page_name=self.page_path, widgets={})

    async def set_widget(self, key: str, value) -> StepResult:
        """The user changes the widget whose id ends with -key: a rerun (of its fragment, if it is in one)."""
        widget = self.find(key)
        if widget is None:
            raise LookupError(f"no widget with key {key!r} on the page")
        self.widgets[widget.id] = replace(widget, value=value)  # the frontend holds the new value
        return await self._rerun(page_hash=self.page_hash, page_name="", widgets=dict(self.widgets),
                                 fragment_id=widget.fragment_id)

    async def move_slider(self, key: str, value: int) -> StepResult:
        """The user moves the slider bound to ?key= (Streamlit's, or a chart's own: load_widgets.slider_of)."""
        found = slider_of(self.widgets, key)
        if found is None:
            raise LookupError(f"no slider for {key!r} on the page")
        widget = self.widgets[found[0].id] = moved(found[0], key, value)
        return await self._rerun(page_hash=self.page_hash, page_name="", widgets=dict(self.widgets),
                                 fragment_id=widget.fragment_id)

    async def switch_page(self, url_path: str, query: str = "") -> StepResult:
        """A click on the page in the sidebar (the query string emptied), or on an st.page_link to it with `query`."""
        page_hash = self.pages.get(url_path)
        if page_hash is None:
            raise LookupError(f"no page at url path {url_path!r} (pages: {sorted(self.pages)})")
        return await self._go(page_hash, query)

    async def follow(self, label_start: str) -> StepResult:
        """A click on the page link whose label starts with `label_start` (the tour's "Next: ...")."""
        link = self.link(label_start)
        if link is None:
            raise LookupError(f"no page link {label_start!r} on the page ({[k.label for k in self.links]})")
        return await self._go(link.page_hash, link.query_string)

    def link(self, label_start: str) -> Link | None:
        """The first page link on the page whose label starts with `label_start`."""
        return next((link for link in self.links if link.label.startswith(label_start)), None)

    def path_of(self, page_hash: str) -> str:
        """The url path of a page of the app ("" for the default page at /)."""
        return next((path for path, h in self.pages.items() if h == page_hash and path), "")

    async def _go(self, page_hash: str, query: str) -> StepResult:
        """A page change as the frontend makes it: its timers cleared, the main script's widgets kept."""
        self.query_string, self.auto_reruns, self.page_path = query, {}, self.path_of(page_hash)
        kept = {i: w for i, w in self.widgets.items() if w.script_hash == self.main_hash}
        return await self._rerun(page_hash=page_hash, page_name="", widgets=kept)

    async def click(self, label: str) -> StepResult:
        """A click on the button shown as `label` (or keyed `label`): its trigger goes with this one rerun."""
        button = next((w for w in self.widgets.values() if w.kind == "button"
                       and (w.label == label or w.id.endswith("-" + label))), None)
        if button is None or button.disabled:
            raise LookupError(f"no {'enabled ' if button else ''}button {label!r} on the page")
        return await self._rerun(page_hash=self.page_hash, page_name="",
                                 widgets={**self.widgets, button.id: replace(button, value=True)},
                                 fragment_id=button.fragment_id)

    async def auto_rerun(self, fragment_id: str) -> StepResult:
        """What the browser's timer sends for a fragment drawn with run_every (ForwardMsg.auto_rerun)."""
        if fragment_id not in self.auto_reruns:
            raise LookupError(f"no auto-rerun timer for fragment {fragment_id!r}")
        return await self._rerun(page_hash=self.page_hash, page_name="", widgets=dict(self.widgets),
                                 fragment_id=fragment_id, auto=True)

    def find(self, key: str) -> Widget | None:
        """The widget whose user key is `key` (Streamlit's ids end with it: $$ID-<hash>-<key>)."""
        return next((widget for widget in self.widgets.values() if widget.id.endswith("-" + key)), None)

    # -- the protocol

    async def _rerun(self, page_hash: str, page_name: str, widgets: dict[str, Widget],
                     fragment_id: str = "", auto: bool = False) -> StepResult:
        back = BackMsg()
        state = back.rerun_script
        state.query_string, state.page_script_hash, state.page_name = self.query_string, page_hash, page_name
        state.fragment_id, state.is_auto_rerun = fragment_id, auto
        state.cached_message_hashes.extend(self.cache)
        info = state.context_info
        info.timezone, info.timezone_offset, info.locale = "UTC", 0, "en-US"
        info.url = f"{self.origin}{self.base}/{self.page_path}" + (f"?{self.query_string}" if self.query_string else "")
        info.is_embedded, info.color_scheme = False, "light"
        add_widget_states(state, widgets.values())
        result = StepResult()
        seen: dict[str, Widget] = {}
        start = self._step_start = time.perf_counter()
        try:
            await self.ws.send(back.SerializeToString())
            async with asyncio.timeout(self.timeout):
                while True:
                    raw = await self.ws.recv(decode=False)
                    result.bytes += len(raw)
                    result.messages += 1
                    if self._handle(raw, result, seen):
                        break
        except TimeoutError:
            result.seconds = time.perf_counter() - start
            raise StepFailed(f"no script_finished within {self.timeout:g} s") from None
        except (OSError, WebSocketException, DecodeError) as e:  # the socket closed, the server went away
            raise StepFailed(f"connection lost: {type(e).__name__}: {e}") from None
        result.seconds = time.perf_counter() - start
        # The frontend drops the state of widgets that the finished run did not draw (a fragment run: of that
        # fragment only), and ages its message cache.
        if result.fragment_run:
            gone = {i for i, w in self.widgets.items() if w.fragment_id == fragment_id and i not in seen}
            self.widgets = {i: w for i, w in self.widgets.items() if i not in gone} | seen
            self.links = [k for k in self.links if k.fragment_id != fragment_id] + result.links
        elif result.status in SUCCESS:
            self.widgets, self.links = seen, result.links
        self._age_cache(fragment_id if result.fragment_run else "")
        return result

    def _handle(self, raw: bytes, result: StepResult, seen: dict[str, Widget]) -> bool:
        """One ForwardMsg; True when it ends the step (a final script_finished)."""
        msg = ForwardMsg()
        msg.ParseFromString(raw)
        kind = msg.WhichOneof("type")
        if kind == "ref_hash":  # a message we cached: the server sent its hash only
            entry = self.cache.get(msg.ref_hash)
            if entry is None:
                result.problems.append(f"cached message {msg.ref_hash} missing")
                return False
            entry[1] = self.run_count
            ref, msg = msg, ForwardMsg()
            msg.CopyFrom(entry[0])
            msg.metadata.CopyFrom(ref.metadata)
            kind = msg.WhichOneof("type")
            result.cached += 1
        elif msg.metadata.cacheable and msg.hash and msg.hash not in self.cache:
            self.cache[msg.hash] = [msg, self.run_count, msg.delta.fragment_id]
        if kind == "delta" and msg.delta.WhichOneof("type") == "new_element":
            self._element(msg, result, seen)
        elif kind == "new_session":
            if not msg.metadata.run.fragment_ids:  # a whole run: the browser clears its timers
                self.auto_reruns = {}
            self.main_hash = msg.new_session.main_script_hash
            self.max_age = msg.new_session.config.max_cached_message_age or 2
            if msg.new_session.app_pages:
                self.page_hash = msg.new_session.page_script_hash
                if not self.navigated:  # st.navigation's url paths win: new_session names pages by their titles
                    self._pages(msg.new_session.app_pages)
        elif kind == "navigation":
            self.page_hash = msg.navigation.page_script_hash
            self.navigated = True
            self._pages(msg.navigation.app_pages)
        elif kind == "page_info_changed":
            self.query_string = msg.page_info_changed.query_string
            result.url_messages += 1
        elif kind == "auto_rerun":
            self.auto_reruns[msg.auto_rerun.fragment_id] = msg.auto_rerun.interval
        elif kind == "stop_auto_rerun":
            for fragment in msg.stop_auto_rerun.fragment_ids:
                self.auto_reruns.pop(fragment, None)
        elif kind == "page_not_found":
            result.problems.append(f"page not found: {msg.page_not_found.page_name!r}")
        elif kind == "session_event" and msg.session_event.WhichOneof("type") == "script_compilation_exception":
            error = msg.session_event.script_compilation_exception
            result.problems.append(f"script compilation error: {error.type}: {error.message}")
        elif kind == "script_finished":
            if msg.script_finished == ForwardMsg.FINISHED_EARLY_FOR_RERUN:
                return False  # st.rerun() in the script: its next run follows
            result.status = msg.script_finished
            result.fragment_run = msg.script_finished == ForwardMsg.FINISHED_FRAGMENT_RUN_SUCCESSFULLY
            return True
        return False

    def _element(self, msg, result: StepResult, seen: dict[str, Widget]) -> None:
        element = msg.delta.new_element
        kind = element.WhichOneof("type")
        if kind == "exception":
            e = element.exception
            result.problems.append(f"exception in the page: {e.type + ': ' if e.type else ''}{e.message[:300]}")
        elif kind == "alert" and element.alert.format == element.alert.ERROR:
            result.problems.append(f"st.error: {element.alert.body[:200]}")
        elif kind == "alert":
            result.alerts.append((element.alert.Format.Name(element.alert.format), element.alert.body))
        elif kind == "metric":
            result.metrics[element.metric.label] = element.metric.body
        elif kind == "html":
            for name, matches in self.watch.items():
                if name not in result.marks and matches(element.html.body):
                    result.marks[name] = time.perf_counter() - self._step_start
        elif kind == "page_link" and not element.page_link.external:
            link = element.page_link
            result.links.append(Link(link.label, link.page_script_hash, link.query_string, msg.delta.fragment_id))
        elif kind == "plotly_chart" or (kind == "bidi_component"
                                        and element.bidi_component.component_name == CHART_COMPONENT):
            result.charts += 1
        widget = drawn_widget(msg, self.widgets)
        if widget is not None:
            seen[widget.id] = self.widgets[widget.id] = widget

    def _pages(self, app_pages) -> None:
        self.pages = {p.url_pathname: p.page_script_hash for p in app_pages}
        for p in app_pages:
            if p.is_default:
                self.pages[""] = p.page_script_hash

    def _age_cache(self, fragment_id: str) -> None:
        """As the frontend's ForwardMsgCache: entries unused for more than max_age runs are dropped."""
        self.run_count += 1
        for key, (_, last, frag) in list(self.cache.items()):
            if fragment_id and frag != fragment_id:
                continue
            if self.run_count - last > self.max_age:
                del self.cache[key]
