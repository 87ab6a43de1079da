"""A class of students as Streamlit's own websocket protocol: many sessions from one process.

Each session is a client of `/_stcore/stream` built from the protobufs in the streamlit package, and does
what the browser's frontend does (Streamlit 1.67):
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
    emptied (the frontend keeps only embed parameters) and only the widgets of the main script.

Session script (issue 5): arrive within --ramp s, open the page with its own sentence (?text=), move the layer
slider, move the head slider, type a new sentence, open the all-heads page, disconnect; think time uniform in
--think between actions, none with --burst.

    .venv/bin/python bench/load.py --spawn app --sessions 40            # the app, a server of its own
    .venv/bin/python bench/load.py --spawn floor --sessions 40 --burst  # the bare-Streamlit floor (bench/floor)
    .venv/bin/python bench/load.py --url http://127.0.0.1:8080/ --pid 101 102 --json out.json
    .venv/bin/python bench/load.py --spawn app --query "model=random&d_model=768&heads=12&layers=12&d_ff=3072"
                                        # every student on a bert-base-sized model (the app's random model)

--server-arg=--server.foo=bar and --server-env NAME=VALUE go to a spawned server. Exit code 1 on any error.
"""
from __future__ import annotations

import argparse
import asyncio
import concurrent.futures
import contextlib
import json
import math
import os
import random
import sys
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from urllib.parse import urlencode, urlsplit

from google.protobuf.message import DecodeError
from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
from websockets.asyncio.client import connect as ws_connect
from websockets.exceptions import WebSocketException

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # run as a script: bench/ is on the path, not the repository
    sys.path.insert(0, str(ROOT))
from bench.servers import spawn  # noqa: E402

APPS = {"app": ROOT / "app.py", "floor": ROOT / "bench" / "floor" / "app.py"}
STEPS = ("open", "layer", "head", "sentence", "all_heads")
CHART_STEPS = ("open", "sentence", "all_heads")  # steps whose page must draw a plotly chart
SUCCESS = (ForwardMsg.FINISHED_SUCCESSFULLY, ForwardMsg.FINISHED_FRAGMENT_RUN_SUCCESSFULLY)
USER_AGENT = "attnviz-load/1 (Streamlit websocket protocol)"
CLK_TCK = os.sysconf("SC_CLK_TCK")

# Plain English words, each one word-piece token of the default model's (uncased BERT) vocabulary.
WORDS = """the a one two three some every many few old young small big tall short long quick slow happy sad
bright dark warm cold green red blue white black brown quiet loud gentle clever tired hungry busy cat dog bird
fish horse cow sheep mouse lion tiger bear fox rabbit boy girl man woman child teacher student doctor farmer king
queen friend mother father sister brother house school garden river mountain forest city village street road
bridge park market table chair book letter song story picture window door tree flower apple bread water milk
coffee tea sat ran walked jumped found saw read wrote sang played watched opened closed carried bought sold made
took gave left kept held built painted cooked cleaned visited followed on in under over near behind beside
across through into from with without after before during and but because while when then so yet today
yesterday morning evening night summer winter spring always never often slowly quickly quietly""".split()


def make_sentence(rng: random.Random, tokens: int = 30) -> str:
    """About `tokens` word pieces for the default model: [CLS], tokens - 3 words, '.', [SEP]."""
    words = [rng.choice(WORDS) for _ in range(max(1, tokens - 3))]
    return " ".join(words).capitalize() + "."


# --------------------------------------------------------------------------------------------- HTTP (stdlib)

async def http_get(host: str, port: int, target: str, cookies: dict[str, str], timeout: float = 30,
                   headers: dict[str, str] | None = None) -> tuple[int, bytes]:
    """GET with HTTP/1.1 over asyncio; Set-Cookie goes into `cookies`. Returns (status, body incl. headers)."""
    async with asyncio.timeout(timeout):
        reader, writer = await asyncio.open_connection(host, port)
        try:
            lines = [f"GET {target} HTTP/1.1", f"Host: {host}:{port}", f"User-Agent: {USER_AGENT}", "Accept: */*",
                     "Connection: close"] + [f"{k}: {v}" for k, v in (headers or {}).items()]
            if cookies:
                lines.append("Cookie: " + "; ".join(f"{k}={v}" for k, v in cookies.items()))
            writer.write(("\r\n".join(lines) + "\r\n\r\n").encode("latin-1"))
            await writer.drain()
            raw = await reader.read()
        finally:
            writer.close()
            with contextlib.suppress(Exception):
                await writer.wait_closed()
    head = raw.split(b"\r\n\r\n", 1)[0].decode("latin-1").split("\r\n")
    status = int(head[0].split()[1]) if head and len(head[0].split()) > 1 else 0
    for line in head[1:]:
        name, _, value = line.partition(":")
        if name.strip().lower() == "set-cookie":
            key, _, val = value.strip().split(";", 1)[0].partition("=")
            cookies[key.strip()] = val.strip()
    return status, raw


# ------------------------------------------------------------------------------------- the protocol client

class StepFailed(Exception):
    """The connection is unusable (closed, timed out): the session cannot go on."""


@dataclass
class Widget:
    id: str
    kind: str  # the Element oneof name: slider, text_area, checkbox, radio, selectbox, button_group, ...
    value_type: str  # the WidgetState oneof: double_array_value, string_value, bool_value, string_array_value
    value: object
    fragment_id: str  # "" outside any st.fragment
    script_hash: str  # metadata.active_script_hash: the page (or main) script that drew it
    low: float = 0.0  # a slider's range
    high: float = 0.0


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


def _widget(element, kind: str, old: Widget | None) -> tuple[str, object] | None:
    """(value_type, value) the frontend keeps for this widget: the server's value when it sets one (set_value),
    else the value already held, else the widget's default. None: not a value-holding widget."""
    p = getattr(element, kind)
    keep = old.value if old is not None else None
    if kind == "slider":
        return "double_array_value", list(p.value) if p.set_value else keep or list(p.default)
    if kind in ("text_area", "text_input"):
        return "string_value", p.value if p.set_value else keep if keep is not None else p.default
    if kind == "checkbox":
        return "bool_value", p.value if p.set_value else keep if keep is not None else p.default
    if kind in ("radio", "selectbox"):
        default = p.options[p.default] if p.HasField("default") and p.default < len(p.options) else None
        value = p.raw_value if p.set_value and p.HasField("raw_value") else keep if keep is not None else default
        return ("string_value", value) if value is not None else None
    if kind == "button_group":
        default = [p.options[i].content for i in p.default if i < len(p.options)]
        return "string_array_value", list(p.raw_values) if p.set_value else keep if keep is not None else default
    return None


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
        self.widgets[widget.id] = Widget(**{**asdict(widget), "value": value})  # the frontend holds the new value
        return await self._rerun(page_hash=self.page_hash, page_name="", widgets=dict(self.widgets),
                                 fragment_id=widget.fragment_id)

    async def switch_page(self, url_path: str) -> StepResult:
        """A click on the page in the sidebar: the new page's hash, the query string emptied, main-script widgets."""
        page_hash = self.pages.get(url_path)
        if page_hash is None:
            raise LookupError(f"no page at url path {url_path!r} (pages: {sorted(self.pages)})")
        self.query_string = ""
        kept = {i: w for i, w in self.widgets.items() if w.script_hash == self.main_hash}
        return await self._rerun(page_hash=page_hash, page_name="", widgets=kept)

    def find(self, key: str) -> Widget | None:
        """The widget whose user key is `key` (Streamlit's ids end with it: $$ID-<hash>-<key>)."""
        for widget in self.widgets.values():
            if widget.id.endswith("-" + key):
                return widget
        return None

    # -- the protocol

    async def _rerun(self, page_hash: str, page_name: str, widgets: dict[str, Widget],
                     fragment_id: str = "") -> StepResult:
        back = BackMsg()
        state = back.rerun_script
        state.query_string = self.query_string
        state.page_script_hash = page_hash
        state.page_name = page_name
        state.fragment_id = fragment_id
        state.cached_message_hashes.extend(self.cache)
        info = state.context_info
        info.timezone, info.timezone_offset, info.locale = "UTC", 0, "en-US"
        info.url = f"{self.origin}{self.base}/{self.page_path}" + (f"?{self.query_string}" if self.query_string else "")
        info.is_embedded, info.color_scheme = False, "light"
        for widget in widgets.values():
            ws = state.widget_states.widgets.add()
            ws.id = widget.id
            if widget.value_type == "double_array_value":
                ws.double_array_value.data.extend(widget.value)
            elif widget.value_type == "string_array_value":
                ws.string_array_value.data.extend(widget.value)
            else:
                setattr(ws, widget.value_type, widget.value)
        result = StepResult()
        seen: dict[str, Widget] = {}
        start = time.perf_counter()
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
        elif result.status in SUCCESS:
            self.widgets = seen
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
        elif kind == "plotly_chart":
            result.charts += 1
        widget_id = getattr(getattr(element, kind), "id", "") if kind else ""
        if not widget_id or getattr(getattr(element, kind), "form_id", ""):
            return
        held = _widget(element, kind, self.widgets.get(widget_id))
        if held is None:
            return
        p = getattr(element, kind)
        seen[widget_id] = Widget(widget_id, kind, held[0], held[1], msg.delta.fragment_id,
                                 msg.metadata.active_script_hash, getattr(p, "min", 0.0), getattr(p, "max", 0.0))
        self.widgets[widget_id] = seen[widget_id]

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


# ------------------------------------------------------------------------------------------ the student

@dataclass
class StepRecord:
    session: int
    kind: str
    ok: bool
    ms: float
    bytes: int
    charts: int
    fragment_run: bool
    cached: int = 0
    messages: int = 0
    value: object = None  # what the step set (slider value, sentence)
    query_string: str = ""  # the URL's query string after the step, as the browser would show it
    url_messages: int = 0  # page_info_changed messages in the step


@dataclass
class ErrorRecord:
    session: int
    step: str
    message: str


@dataclass
class SessionOutcome:
    index: int
    steps: list[StepRecord] = field(default_factory=list)
    errors: list[ErrorRecord] = field(default_factory=list)
    connect_ms: float | None = None

    @property
    def completed(self) -> bool:
        """Every step of the script done, without error."""
        return [s.kind for s in self.steps if s.ok] == list(STEPS) and not self.errors


class Gauge:
    """How many sessions have their websocket open now, and at most."""

    def __init__(self):
        self.now = self.peak = 0

    def add(self, n: int) -> None:
        self.now += n
        self.peak = max(self.peak, self.now)


async def student(index: int, url: str, rng: random.Random, start_at: float, think: tuple[float, float],
                  burst: bool, timeout: float, tokens: int, default_text: bool = False,
                  gauge: Gauge | None = None, query: str = "") -> SessionOutcome:
    """One student: arrive, open with a sentence, layer, head, new sentence, all heads, leave."""
    out = SessionOutcome(index)
    first, second = make_sentence(rng, tokens), make_sentence(rng, tokens)
    pauses = iter([0.0 if burst else rng.uniform(*think) for _ in STEPS[1:]])
    await asyncio.sleep(max(0.0, start_at - time.perf_counter()))
    session = Session(url, timeout)
    gauge = gauge or Gauge()

    async def step(kind: str, action, value=None) -> bool:
        """Run one action and record it; False when the session cannot go on."""
        try:
            result = await action()
        except LookupError as e:  # the page lacks the widget or the page: an error, the next step may work
            out.errors.append(ErrorRecord(index, kind, str(e)))
            return True
        except StepFailed as e:
            out.errors.append(ErrorRecord(index, kind, str(e)))
            out.steps.append(StepRecord(index, kind, False, math.nan, 0, 0, False, 0, 0, value, session.query_string))
            return False
        problems = list(result.problems)
        if result.status not in SUCCESS:
            problems.append(f"script_finished {ForwardMsg.ScriptFinishedStatus.Name(result.status)}")
        if kind in CHART_STEPS and result.charts == 0:
            problems.append("no plotly chart on the page")
        out.errors.extend(ErrorRecord(index, kind, p) for p in problems)
        out.steps.append(StepRecord(index, kind, not problems, result.seconds * 1000, result.bytes, result.charts,
                                    result.fragment_run, result.cached, result.messages, value,
                                    session.query_string, result.url_messages))
        return True

    def move(key: str):
        """The slider `key` to another of its values, chosen from what the page shows now."""
        widget = session.find(key)
        if widget is None:
            raise LookupError(f"no widget with key {key!r} on the page")
        current = int(widget.value[0]) if widget.value else int(widget.low)
        choices = [v for v in range(int(widget.low), int(widget.high) + 1) if v != current] or [current]
        return rng.choice(choices)

    try:
        try:
            opened = "&".join(filter(None, ["" if default_text else urlencode({"text": first}), query]))
            out.connect_ms = 1000 * await session.connect("", opened)
        except (OSError, TimeoutError, WebSocketException, StepFailed) as e:  # refused, reset, a bad status
            out.errors.append(ErrorRecord(index, "connect", f"connection failed: {type(e).__name__}: {e}"))
            return out
        gauge.add(1)
        if not await step("open", session.open):
            return out
        for key in ("layer", "head"):
            await asyncio.sleep(next(pauses))
            try:
                value = move(key)
            except LookupError as e:
                out.errors.append(ErrorRecord(index, key, str(e)))
                continue
            if not await step(key, lambda key=key, value=value: session.set_widget(key, [float(value)]), value):
                return out
        await asyncio.sleep(next(pauses))
        if not await step("sentence", lambda: session.set_widget("text", second), second):
            return out
        await asyncio.sleep(next(pauses))
        await step("all_heads", lambda: session.switch_page("all-heads"))
    finally:
        if session.ws is not None:
            gauge.add(-1)
        await session.close()
    return out


# ------------------------------------------------------------------------------- server processes: CPU, RSS

def _children() -> dict[int, list[int]]:
    tree: dict[int, list[int]] = {}
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            try:
                stat = Path(entry.path, "stat").read_text()
            except OSError:
                continue
            ppid = int(stat.rsplit(")", 1)[1].split()[1])
            tree.setdefault(ppid, []).append(int(entry.name))
    return tree


def process_tree(pids: Sequence[int]) -> list[int]:
    """The given processes and every live descendant."""
    tree, out, todo = _children(), [], list(pids)
    while todo:
        pid = todo.pop()
        if pid not in out:
            out.append(pid)
            todo.extend(tree.get(pid, []))
    return out


def cpu_seconds(pid: int) -> float:
    """utime + stime of the process, plus those of its waited-for children (cutime + cstime)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return sum(int(fields[i]) for i in (11, 12, 13, 14)) / CLK_TCK  # fields 14-17 of proc(5)


def rss_bytes(pid: int) -> int:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


class Meter:
    """CPU seconds and RSS of the server processes (each with its descendants)."""

    def __init__(self, pids: Sequence[int]):
        self.pids = list(pids)
        self.peak = 0

    def cpu(self) -> dict[int, float]:
        """CPU seconds so far of each given process (with its descendants)."""
        return {pid: sum(cpu_seconds(p) for p in process_tree([pid])) for pid in self.pids}

    def rss(self) -> dict[int, int]:
        """RSS bytes now of each given process (with its descendants); the peak of their sum is kept."""
        value = {pid: sum(rss_bytes(p) for p in process_tree([pid])) for pid in self.pids}
        self.peak = max(self.peak, sum(value.values()))
        return value

    async def sample(self, every: float = 0.25) -> None:
        while True:
            self.rss()
            await asyncio.sleep(every)


async def active_sessions(url: str | None) -> int | None:
    """The server's own gauge of sessions with an open websocket (/_stcore/metrics)."""
    if url is None:
        return None
    parts = urlsplit(url)
    try:
        _, raw = await http_get(parts.hostname, parts.port or 80,
                                parts.path.rstrip("/") + "/_stcore/metrics?families=active_sessions", {}, 10)
    except (OSError, TimeoutError):
        return None
    for line in raw.decode("utf-8", "replace").splitlines():
        if line.startswith("active_sessions "):
            return int(float(line.split()[1]))
    return None


# ------------------------------------------------------------------------------------------- the server

def run_sync(make_coroutine):
    """asyncio.run(make_coroutine()), in a thread of its own when this thread already runs an event loop
    (e.g. under Playwright's sync API in the same pytest process)."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(make_coroutine())
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        return pool.submit(lambda: asyncio.run(make_coroutine())).result()


# ------------------------------------------------------------------------------------------- the report

def percentile(values: Sequence[float], q: float) -> float:
    """Linear interpolation between closest ranks (numpy's default)."""
    if not values:
        return math.nan
    v = sorted(values)
    pos = (len(v) - 1) * q / 100
    lo, hi = math.floor(pos), math.ceil(pos)
    return v[lo] + (v[hi] - v[lo]) * (pos - lo)


@dataclass
class Report:
    target: str
    sessions: int
    settings: dict
    outcomes: list[SessionOutcome]
    wall_s: float
    server_cpu_s: float | None = None  # all measured processes together
    server_cpu_by_pid: dict = field(default_factory=dict)
    rss_mb_by_pid: dict = field(default_factory=dict)  # at the end of the load
    client_cpu_s: float = 0.0
    rss_mb: dict = field(default_factory=dict)  # before, peak, end, after_disconnect
    active_sessions: dict = field(default_factory=dict)  # before, end, after_disconnect (the server's gauge)
    peak_connected: int = 0  # sessions with an open websocket at once, as the client counted them
    warmup_errors: list[ErrorRecord] = field(default_factory=list)

    @property
    def steps(self) -> list[StepRecord]:
        return [s for o in self.outcomes for s in o.steps]

    @property
    def errors(self) -> list[ErrorRecord]:
        return self.warmup_errors + [e for o in self.outcomes for e in o.errors]

    @property
    def completed(self) -> int:
        return sum(o.completed for o in self.outcomes)

    def by_step(self) -> dict[str, dict]:
        rows = {}
        connects = [o.connect_ms for o in self.outcomes if o.connect_ms is not None]
        if connects:
            rows["connect"] = {"n": len(connects), "p50_ms": percentile(connects, 50),
                               "p95_ms": percentile(connects, 95), "max_ms": max(connects), "mean_kb": None}
        for kind in STEPS:
            done = [s for s in self.steps if s.kind == kind and not math.isnan(s.ms)]
            ms = [s.ms for s in done]
            rows[kind] = {"n": len(done), "p50_ms": percentile(ms, 50), "p95_ms": percentile(ms, 95),
                          "max_ms": max(ms) if ms else math.nan,
                          "mean_kb": sum(s.bytes for s in done) / len(done) / 1024 if done else math.nan,
                          "mean_messages": sum(s.messages for s in done) / len(done) if done else math.nan,
                          "fragment_runs": sum(s.fragment_run for s in done)}
        return rows

    def to_dict(self) -> dict:
        return {"target": self.target, "sessions": self.sessions, "settings": self.settings,
                "completed_sessions": self.completed, "steps": len(self.steps), "errors": len(self.errors),
                "wall_s": self.wall_s, "server_cpu_s": self.server_cpu_s,
                "server_cpu_s_per_session": self.server_cpu_s / self.sessions if self.server_cpu_s is not None
                and self.sessions else None,
                "server_cpu_s_by_pid": self.server_cpu_by_pid, "rss_mb_end_by_pid": self.rss_mb_by_pid,
                "client_cpu_s": self.client_cpu_s, "rss_mb": self.rss_mb, "active_sessions": self.active_sessions,
                "peak_connected": self.peak_connected,
                "by_step": self.by_step(), "error_list": [asdict(e) for e in self.errors],
                "sessions_detail": [asdict(o) | {"completed": o.completed} for o in self.outcomes]}

    def table(self, first_errors: int = 8) -> str:
        s = self.settings
        think = "none (burst)" if s["burst"] else f"{s['think'][0]:g}-{s['think'][1]:g} s"
        lines = [(f"{self.target}: {self.sessions} sessions, ramp {s['ramp']:g} s, think {think}, seed {s['seed']}, "
                  f"~{s['tokens']}-token sentences" + (f", opened with ?{s['query']}" if s.get("query") else "")),
                 f"{'step':<10} {'n':>4} {'p50 ms':>8} {'p95 ms':>8} {'max ms':>8} {'mean KB':>8} {'msgs':>5}  "
                 "fragment runs"]
        for kind, r in self.by_step().items():
            kb = "" if r["mean_kb"] is None else f"{r['mean_kb']:.1f}"
            frag = "" if "fragment_runs" not in r else str(r["fragment_runs"])
            msgs = "" if "mean_messages" not in r else f"{r['mean_messages']:.0f}"
            lines.append(f"{kind:<10} {r['n']:>4} {r['p50_ms']:>8.0f} {r['p95_ms']:>8.0f} {r['max_ms']:>8.0f} "
                         f"{kb:>8} {msgs:>5}  {frag}")
        lines.append(f"sessions {self.sessions} ({self.completed} completed every step, at most "
                     f"{self.peak_connected} connected at once), steps {len(self.steps)}, errors {len(self.errors)}, "
                     f"wall {self.wall_s:.1f} s")
        if self.server_cpu_s is not None:
            lines.append(f"server CPU {self.server_cpu_s:.1f} s ({self.server_cpu_s / max(1, self.sessions):.2f} s "
                         f"per session); client CPU {self.client_cpu_s:.1f} s (this process, same machine)")
        else:
            lines.append(f"server CPU: not measured (no --pid); client CPU {self.client_cpu_s:.1f} s")
        if self.rss_mb:
            r = self.rss_mb
            lines.append("server RSS MB: " + ", ".join(f"{k.replace('_', ' ')} {v:.0f}" for k, v in r.items()))
        if len(self.server_cpu_by_pid) > 1:
            lines.append("per process: " + ", ".join(
                f"pid {pid} CPU {cpu:.1f} s RSS {self.rss_mb_by_pid[pid]:.0f} MB"
                for pid, cpu in self.server_cpu_by_pid.items()))
        if any(v is not None for v in self.active_sessions.values()):
            lines.append("server active sessions: " + ", ".join(
                f"{k.replace('_', ' ')} {'?' if v is None else v}" for k, v in self.active_sessions.items()))
        for e in self.errors[:first_errors]:
            lines.append(f"  error: session {e.session} step {e.step}: {e.message}")
        if len(self.errors) > first_errors:
            lines.append(f"  ... and {len(self.errors) - first_errors} more errors")
        return "\n".join(lines)


# ------------------------------------------------------------------------------------------- the run

async def _run(url: str, sessions: int, ramp: float, think: tuple[float, float], burst: bool, seed: int,
               timeout: float, tokens: int, pids: Sequence[int], warmup: int, settle: float | None,
               session_ttl: float | None, target: str, query: str) -> Report:
    settings = {"url": url, "ramp": ramp, "think": list(think), "burst": burst, "seed": seed, "timeout": timeout,
                "tokens": tokens, "warmup": warmup, "pids": list(pids), "query": query}
    warm = [await student(-1 - i, url, random.Random(f"warmup-{seed}-{i}"), 0, think, True, timeout, tokens,
                          default_text=True, query=query) for i in range(warmup)]
    meter = Meter(pids) if pids else None
    report = Report(target, sessions, settings, [], 0.0, warmup_errors=[e for o in warm for e in o.errors])
    # the server's own session gauge; behind a proxy with several replicas it would be one replica's only
    gauge_url = url if len(pids) <= 1 else None
    report.active_sessions["before"] = await active_sessions(gauge_url)
    cpu0, client0 = (meter.cpu() if meter else None), time.process_time()
    if meter:
        report.rss_mb["before"] = sum(meter.rss().values()) / 2**20
        meter.peak = 0
        sampler = asyncio.create_task(meter.sample())
    start = time.perf_counter()
    rngs = [random.Random(f"{seed}-{i}") for i in range(sessions)]
    arrivals = [rng.uniform(0, ramp) for rng in rngs]
    gauge = Gauge()
    report.outcomes = list(await asyncio.gather(*(
        student(i, url, rngs[i], start + arrivals[i], think, burst, timeout, tokens, gauge=gauge, query=query)
        for i in range(sessions))))
    report.peak_connected = gauge.peak
    report.wall_s = time.perf_counter() - start
    report.client_cpu_s = time.process_time() - client0
    report.active_sessions["end"] = await active_sessions(gauge_url)
    if meter:
        cpu1, end_rss = meter.cpu(), meter.rss()
        report.server_cpu_by_pid = {pid: cpu1[pid] - cpu0[pid] for pid in pids}
        report.server_cpu_s = sum(report.server_cpu_by_pid.values())
        report.rss_mb_by_pid = {pid: rss / 2**20 for pid, rss in end_rss.items()}
        sampler.cancel()
        report.rss_mb["peak"] = meter.peak / 2**20
        report.rss_mb["end"] = sum(end_rss.values()) / 2**20
    if settle is None:
        return report
    # Disconnected sessions stay in Streamlit's session storage for server.disconnectedSessionTTL and are
    # reaped lazily, on the storage's next write: wait the TTL out, then connect and leave once (a write).
    await asyncio.sleep(max(settle, (session_ttl or 0) + 1))
    probe = Session(url, timeout)
    with contextlib.suppress(Exception):
        await probe.connect()
    await probe.close()
    await asyncio.sleep(2)
    report.active_sessions["after_disconnect"] = await active_sessions(gauge_url)
    if meter:
        report.rss_mb["after_disconnect"] = sum(meter.rss().values()) / 2**20
    return report


def run_load(url: str, sessions: int = 8, ramp: float = 10.0, think: tuple[float, float] = (0.0, 6.0),
             burst: bool = False, seed: int = 0, timeout: float = 60.0, tokens: int = 30,
             pids: Sequence[int] = (), warmup: int = 1, settle: float | None = 3.0,
             session_ttl: float | None = None, target: str | None = None, query: str = "") -> Report:
    """Drive `sessions` students against the Streamlit server at `url`; measure `pids` (CPU, RSS) if given.

    warmup: sessions run first (default sentence, no think time) so that imports and the model load are paid
    before the measurement; settle: seconds after the last session before the after-disconnect figures (at
    least session_ttl + 1 when the server's server.disconnectedSessionTTL is known), None: no such figures;
    query: more URL parameters every session opens with (e.g. another model: "model=random&d_model=768")."""
    return run_sync(lambda: _run(url, sessions, ramp, tuple(think), burst, seed, timeout, tokens, pids, warmup,
                                 settle, session_ttl, target or url, query))


def _no_nan(value):
    """NaN (a step that never finished, an empty column) as null: strict JSON has no NaN."""
    if isinstance(value, float) and math.isnan(value):
        return None
    if isinstance(value, dict):
        return {k: _no_nan(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_no_nan(v) for v in value]
    return value


def _behind_proxy(args, kwargs) -> Report:
    """--replicas N: N spawned servers behind nginx (deploy/nginx.conf, sticky sessions); each replica is warmed
    up directly (through the proxy a warm-up session lands on one replica only), then the load goes through nginx."""
    from bench.proxy import Proxy

    env = dict(kv.split("=", 1) for kv in args.server_env)
    with contextlib.ExitStack() as stack:
        servers = [stack.enter_context(spawn(APPS[args.spawn], extra_args=args.server_arg, env=env,
                                             session_ttl=args.session_ttl)) for _ in range(args.replicas)]
        proxy = Proxy([urlsplit(s.url).netloc for s in servers])
        stack.callback(proxy.stop)
        proxy.wait()
        for server in servers:
            for _ in range(kwargs["warmup"]):
                run_load(server.url, sessions=1, ramp=0, think=(0, 0), burst=True, warmup=0, settle=None,
                         seed=args.seed, timeout=args.timeout, tokens=args.tokens, query=args.query)
        pids = [s.pid for s in servers]
        report = run_load(proxy.url + "/", pids=pids, session_ttl=args.session_ttl,
                          target=f"{args.replicas} x {args.spawn} behind nginx (pids {pids}, {proxy.url}/)",
                          **{**kwargs, "warmup": 0})
        for server in servers:
            if server.proc.poll() is not None:
                report.warmup_errors.append(ErrorRecord(-1, "server", f"exited with {server.proc.returncode}"))
        return report


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    where = parser.add_mutually_exclusive_group(required=True)
    where.add_argument("--spawn", choices=sorted(APPS), help="start this app's server (a free port on 127.0.0.1)")
    where.add_argument("--url", help="a running server (or a proxy in front of replicas)")
    parser.add_argument("--pid", type=int, nargs="*", default=[], help="server processes to measure with --url")
    parser.add_argument("--replicas", type=int, default=1,
                        help="with --spawn: this many servers behind Debian's nginx with deploy/nginx.conf")
    parser.add_argument("--sessions", type=int, default=40)
    parser.add_argument("--ramp", type=float, default=10.0, help="sessions arrive uniformly within this many s")
    parser.add_argument("--think", type=float, nargs=2, default=(0.0, 6.0), metavar=("MIN", "MAX"))
    parser.add_argument("--burst", action="store_true", help="no think time between actions")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--timeout", type=float, default=60.0, help="seconds per step")
    parser.add_argument("--tokens", type=int, default=30, help="word pieces per sentence (default model)")
    parser.add_argument("--query", default="", help="more URL parameters each student opens the page with, e.g. "
                        "a bert-base-sized model: model=random&d_model=768&heads=12&layers=12&d_ff=3072")
    parser.add_argument("--warmup", type=int, default=1, help="unmeasured sessions first (model load, imports)")
    parser.add_argument("--settle", type=float, default=3.0, help="s after the load before after-disconnect figures")
    parser.add_argument("--server-arg", action="append", default=[], help="passed to streamlit run (use =)")
    parser.add_argument("--server-env", action="append", default=[], metavar="NAME=VALUE")
    parser.add_argument("--session-ttl", type=int, default=2, help="server.disconnectedSessionTTL when spawning")
    parser.add_argument("--json", help="write everything to this file")
    args = parser.parse_args(argv)
    kwargs = {"sessions": args.sessions, "ramp": args.ramp, "think": tuple(args.think), "burst": args.burst,
              "seed": args.seed, "timeout": args.timeout, "tokens": args.tokens, "warmup": args.warmup,
              "settle": args.settle, "query": args.query}
    if args.spawn and args.replicas > 1:
        report = _behind_proxy(args, kwargs)
    elif args.spawn:
        env = dict(kv.split("=", 1) for kv in args.server_env)
        with spawn(APPS[args.spawn], extra_args=args.server_arg, env=env, session_ttl=args.session_ttl) as server:
            report = run_load(server.url, pids=[server.pid], session_ttl=args.session_ttl,
                              target=f"{args.spawn} (spawned, pid {server.pid}, {server.url})", **kwargs)
            if server.proc.poll() is not None:
                report.warmup_errors.append(ErrorRecord(-1, "server", f"exited with {server.proc.returncode}"))
    else:
        report = run_load(args.url, pids=args.pid, target=f"{args.url} (pids {args.pid or 'not given'})", **kwargs)
    print(report.table())
    if args.json:
        Path(args.json).write_text(json.dumps(_no_nan(report.to_dict()), indent=1, default=str))
    return 1 if report.errors else 0


if __name__ == "__main__":
    sys.exit(main())
