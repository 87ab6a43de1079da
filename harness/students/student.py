"""One student of bench/load.py's class: arrive within the ramp, open the heatmap with a sentence of their own
(?text=), move the layer slider, move the head slider, type a new sentence, open the all-heads page, leave; think
time uniform in `think` between actions, none in a burst. Every step is recorded; every problem is an error."""
from __future__ import annotations

import asyncio
import contextvars
import math
import random
import time
from dataclasses import dataclass, field
from urllib.parse import urlencode

from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
from websockets.exceptions import WebSocketException

from harness.students.protocol import Session
from harness.students.results import SUCCESS, StepFailed, StepResult
from harness.students.widgets import slider_of

STEPS = ("open", "layer", "head", "sentence", "all_heads")
CHART_STEPS = ("open", "sentence", "all_heads")  # steps whose page must draw a plotly chart
TOKENS = 30  # word pieces per sentence
# The server's CPU seconds so far (a callable), when set: each step then records the server CPU it took (the lone
# student of classroom's solo run, whose steps are the only work on the server).
SERVER_CPU: contextvars.ContextVar = contextvars.ContextVar("server_cpu", default=None)

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


def make_sentence(rng: random.Random) -> str:
    """About TOKENS word pieces for the default model: [CLS], TOKENS - 3 words, '.', [SEP]."""
    words = [rng.choice(WORDS) for _ in range(TOKENS - 3)]
    return " ".join(words).capitalize() + "."


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
    at: float = 0.0  # time.perf_counter() when the step began
    cpu_ms: float | None = None  # the server's CPU in the step, when SERVER_CPU is set


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
    expected: tuple[str, ...] = STEPS  # the script's steps, in order (a step done twice counts once)
    notes: dict = field(default_factory=dict)  # what else the script saw (the tour: its live training)

    @property
    def completed(self) -> bool:
        """Every step of the script done, without error."""
        return list(dict.fromkeys(s.kind for s in self.steps if s.ok)) == list(self.expected) and not self.errors


class Gauge:
    """How many sessions have their websocket open now, and at most."""

    def __init__(self):
        self.now = self.peak = 0

    def add(self, n: int) -> None:
        self.now += n
        self.peak = max(self.peak, self.now)


async def run_step(out: SessionOutcome, session: Session, kind: str, action, value=None,
                   chart: bool = False) -> StepResult | None:
    """Run one action of a student's script and record it (chart: the page must then show a chart); the result, or
    None when the session cannot go on (connection lost, timed out). The page lacking the widget is an error, and the
    session goes on (the result is then an empty one)."""
    index, at, server_cpu = out.index, time.perf_counter(), SERVER_CPU.get()
    cpu0 = server_cpu() if server_cpu else None
    try:
        result = await action()
    except LookupError as e:  # the page lacks the widget or the page: an error, the next step may work
        out.errors.append(ErrorRecord(index, kind, str(e)))
        return StepResult()
    except StepFailed as e:
        out.errors.append(ErrorRecord(index, kind, str(e)))
        out.steps.append(StepRecord(index, kind, False, math.nan, 0, 0, False, 0, 0, value, session.query_string,
                                    at=at))
        return None
    problems = list(result.problems)
    if result.status not in SUCCESS:
        status = "never" if result.status is None else ForwardMsg.ScriptFinishedStatus.Name(result.status)
        problems.append(f"script_finished {status}")
    if chart and result.charts == 0:
        problems.append("no plotly chart on the page")
    out.errors.extend(ErrorRecord(index, kind, p) for p in problems)
    out.steps.append(StepRecord(index, kind, not problems, result.seconds * 1000, result.bytes, result.charts,
                                result.fragment_run, result.cached, result.messages, value,
                                session.query_string, result.url_messages, at,
                                None if cpu0 is None else 1000 * (server_cpu() - cpu0)))
    return result


async def student(index: int, url: str, rng: random.Random, start_at: float, think: tuple[float, float],
                  burst: bool, timeout: float, warmup: bool = False,
                  gauge: Gauge | None = None, query: str = "") -> SessionOutcome:
    """One student: arrive, open with a sentence, layer, head, new sentence, all heads, leave. warmup: with the
    page's default sentence."""
    out = SessionOutcome(index)
    first, second = make_sentence(rng), make_sentence(rng)
    pauses = iter([0.0 if burst else rng.uniform(*think) for _ in STEPS[1:]])
    await asyncio.sleep(max(0.0, start_at - time.perf_counter()))
    session = Session(url, timeout)
    gauge = gauge or Gauge()

    async def step(kind: str, action, value=None) -> bool:
        """Run one action and record it; False when the session cannot go on."""
        return await run_step(out, session, kind, action, value, chart=kind in CHART_STEPS) is not None

    def move(key: str):
        """The slider bound to ?key= to another of its values, chosen from what the page shows now."""
        found = slider_of(session.widgets, key)
        if found is None:
            raise LookupError(f"no slider for {key!r} on the page")
        _, current, low, high = found
        return rng.choice([v for v in range(low, high + 1) if v != current] or [current])

    try:
        try:
            opened = "&".join(filter(None, ["" if warmup else urlencode({"text": first}), query]))
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
            if not await step(key, lambda key=key, value=value: session.move_slider(key, value), value):
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
