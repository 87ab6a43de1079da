"""One student of bench/tour_load.py's class: the lesson, as the guided tour walks it.

The student opens the Tour page (/tour), presses "Start the tour", and then, on every stop, moves one slider (the
first of SLIDERS the page shows), types a sentence of its own on the heatmap (English, ~30 word pieces) and on the
Translate page (a sentence of the translator's toy language), steps the decoding with the Next button where the page
has one (the Translate and Language model pages), and goes on with the stop's "Next: ..." link, as the banner's Next
does, until the last stop. Then it opens the rollout and the head atlas on its own heatmap sentence (a page link
with ?text=). Think time is uniform in `think` before every action after the first (none in a burst).

The student given `live` (a page's path: "translate" or "language-model") also starts a live training there: on
the first stop of that page it shows the page's "Train it live" part, presses the start button, and watches the run
as the browser does (each auto-rerun of the polling fragment at the interval the server asked) until the page says
it has finished, then walks on. What it saw is in its outcome's notes["live"].

A step's kind is "<stop> <page>/<action>" ("9 translate/next"), or "tour/open", "rollout/open", "atlas/open".
A step whose page streams an answer of the LLM as it is written (the Ask stops: an answer not written before) is
timed to its first word on the page, as harness/students/ask.py times a question (the page has answered: what the
1.5 s goal asks of every step); the whole answer, written word by word after it, is its own step "<kind> answer"
(ANSWER), judged against issue 46's goals for an answer, not against a page's.
"""
from __future__ import annotations

import asyncio
import random
import re
import time
from dataclasses import replace
from urllib.parse import parse_qs, urlencode

from websockets.exceptions import WebSocketException

from harness.students.ask import FIRST_WORD
from harness.students.protocol import Session
from harness.students.results import StepFailed
from harness.students.student import ErrorRecord, Gauge, SessionOutcome, make_sentence, run_step
from harness.students.widgets import slider_of
from training.toy_language import sample

# the slider moved on a stop: the first of these the page shows (a chart's own Layer / Head sliders count)
SLIDERS = ("step", "head", "layer", "layers", "words", "pe_to", "most")  # most: the Ask page's sink part
TEXTS = {"heatmap": "text", "translate": "src"}  # the pages a student types a sentence of its own on: its box
NEXT_CLICKS = 3  # presses of the decoding's Next button on a page that has one
RESEARCH = ("rollout", "atlas")  # opened at the end on the student's own sentence
LIVE_PART, LIVE_START = "Train it live", "live_start"  # the part's label in the ?part= control; the start button
LIVE_LIMIT = 600.0  # s: the most a student watches a live run (training.live: a run's own limit is 300-600)
NO_CHART = ("tour/open", "live part", "live start", "live poll")  # steps whose page need not show a chart
ANSWER = " answer"  # the kind of a streamed answer's whole writing: its step's kind and this


def stop_kind(k: int, path: str, action: str) -> str:
    return f"{k} {path or 'heatmap'}/{action}"


def stop_of(link) -> int:
    """The stop a tour link leads to (its ?tour=), 0 if none."""
    found = parse_qs(link.query_string).get("tour", ["0"])[0]
    return int(found) if found.isdigit() else 0


def chinese_sentence(rng: random.Random) -> str:
    """A sentence of the translator's toy language (training/toy_language.py), drawn with the student's rng."""
    return sample(1, rng.randrange(2**31))[0].chinese()


async def tour_student(index: int, url: str, rng: random.Random, start_at: float, think: tuple[float, float],
                       burst: bool, timeout: float, warmup: bool = False, gauge: Gauge | None = None,
                       live: str | None = None) -> SessionOutcome:
    """One student on the guided tour (the module's docstring says what it does); warmup: the same walk, as a
    student whose outcome is not counted."""
    out = SessionOutcome(index, expected=())
    texts = {"text": make_sentence(rng), "src": chinese_sentence(rng)}
    await asyncio.sleep(max(0.0, start_at - time.perf_counter()))
    session = Session(url, timeout)
    session.watch = {"first word": FIRST_WORD.search}
    gauge = gauge or Gauge()
    expected: list[str] = []

    async def pause() -> None:
        await asyncio.sleep(0.0 if burst else rng.uniform(*think))

    async def step(kind: str, action, value=None, chart: bool | None = None):
        """One action, recorded; None when the session cannot go on."""
        expected.append(kind)
        if chart is None:
            chart = not kind.endswith(NO_CHART)
        result = await run_step(out, session, kind, action, value, chart)
        if result is not None and "first word" in result.marks and out.steps and out.steps[-1].kind == kind:
            whole = out.steps[-1]  # an answer streamed: the step is its first word, the writing its own step
            out.steps[-1:] = [replace(whole, ms=1000 * result.marks["first word"]), replace(whole, kind=kind + ANSWER)]
            expected.append(kind + ANSWER)
        return result

    try:
        try:
            out.connect_ms = 1000 * await session.connect("tour", "lang=en")
        except (OSError, TimeoutError, WebSocketException, StepFailed) as e:  # refused, reset, a bad status
            out.errors.append(ErrorRecord(index, "connect", f"connection failed: {type(e).__name__}: {e}"))
            return out
        gauge.add(1)
        opened = await step("tour/open", session.open)
        if opened is None:
            return out
        stops = [link for link in opened.links if re.match(r"\d+\. ", link.label)]  # the tour page lists them
        link, visited = session.link("Start the tour"), []
        while link is not None:
            k, path = stop_of(link), session.path_of(link.page_hash)
            await pause()
            if await step(stop_kind(k, path, "open"), lambda link=link: session.follow(link.label)) is None:
                return out
            visited.append(k)
            if parse_qs(session.query_string).get("tour") != [str(k)]:  # the stop's page wrote its URL back
                out.errors.append(ErrorRecord(index, stop_kind(k, path, "open"),
                                              f"not at stop {k}: ?{session.query_string}"))
            if not await at_stop(k, path, step, pause, session, rng, texts, None if warmup else live, out):
                return out
            link = session.link("Next: ")
        if visited != [stop_of(link) for link in stops]:
            out.errors.append(ErrorRecord(index, "tour", f"visited stops {visited}; the tour page lists "
                                          f"{[stop_of(link) for link in stops]}"))
        for path in RESEARCH:
            await pause()
            query = urlencode({"text": texts["text"], "lang": "en"})
            if await step(f"{path}/open", lambda path=path: session.switch_page(path, query)) is None:
                return out
    finally:
        out.expected = tuple(dict.fromkeys(expected))
        if session.ws is not None:
            gauge.add(-1)
        await session.close()
    return out


async def at_stop(k: int, path: str, step, pause, session: Session, rng: random.Random, texts: dict,
                  live: str | None, out: SessionOutcome) -> bool:
    """What a student does on stop k (at page `path`); False when the session cannot go on."""
    box = TEXTS.get(path or "heatmap")
    if box is not None:
        await pause()
        if await step(stop_kind(k, path, "type"), lambda: session.set_widget(box, texts[box]), texts[box]) is None:
            return False
    if any(w.kind == "button" and w.label == "Next" for w in session.widgets.values()):
        for _ in range(NEXT_CLICKS):
            await pause()
            found = slider_of(session.widgets, "step")  # the step before the press, and the last one: the value
            shown = None if found is None else (found[1], found[3])
            if await step(stop_kind(k, path, "next"), lambda: session.click("Next"), shown) is None:
                return False
    key = next((key for key in SLIDERS if slider_of(session.widgets, key) is not None), None)
    await pause()
    if key is None:
        out.errors.append(ErrorRecord(out.index, stop_kind(k, path, "slider"), "no slider on the page"))
    else:
        _, current, low, high = slider_of(session.widgets, key)
        value = rng.choice([v for v in range(low, high + 1) if v != current] or [current])
        if await step(stop_kind(k, path, "slider"), lambda: session.move_slider(key, value), (key, value)) is None:
            return False
    if live == path and "live" not in out.notes:
        return await train_live(k, path, step, pause, session, out)
    return True


async def train_live(k: int, path: str, step, pause, session: Session, out: SessionOutcome) -> bool:
    """Show the page's live part, start a live training, watch it to its end (the browser's auto-reruns)."""
    notes = out.notes["live"] = {"page": path, "polls": 0, "finished": False, "steps": None, "seconds": None,
                                 "started": None}
    await pause()
    if await step(stop_kind(k, path, "live part"), lambda: session.set_widget("part", [LIVE_PART])) is None:
        return False
    await pause()
    started = notes["started"] = time.perf_counter()
    result = await step(stop_kind(k, path, "live start"), lambda: session.click(LIVE_START))
    if result is None or result.status is None:  # the session is lost, or there was no start button (an error)
        return result is not None
    while session.auto_reruns and time.perf_counter() - started < LIVE_LIMIT:
        fragment, every = next(iter(session.auto_reruns.items()))
        await asyncio.sleep(every)
        result = await step(stop_kind(k, path, "live poll"), lambda: session.auto_rerun(fragment))
        if result is None:
            return False
        notes["polls"] += 1
        steps = next((v for label, v in result.metrics.items() if label.startswith("Step (")), None)
        notes["steps"] = int(steps) if steps and steps.isdigit() else notes["steps"]
    notes["seconds"] = time.perf_counter() - started
    notes["finished"] = any(kind == "SUCCESS" and body.startswith("Finished") for kind, body in result.alerts)
    if not notes["finished"]:
        out.errors.append(ErrorRecord(out.index, stop_kind(k, path, "live poll"),
                                      f"the live training did not finish within {LIVE_LIMIT:g} s: {result.alerts}"))
    return True
