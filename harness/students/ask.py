"""The moment a lecturer says "now ask it something" (issue 46), as scripted students: bench/class_asks_load.py and
tests/load/test_class_asks.py run them through harness/students/classroom.py.

Student 0 is on the heatmap the whole time: it opens it and moves its layer and head sliders, one every MOVE_EVERY
seconds, for `watch` seconds (what a student who is not asking feels while the class asks). Every other student opens
the Ask page (its default question, answered before the class: the warm-up), arrives within the ramp and types a
question of its own (QUESTIONS, each different), watches the answer to its end (the step's time; the first answer word
streamed is its own step, "ask/first token", timed from the question), then moves the answer's step slider to three
tokens and the head slider to two heads, thinking `think` seconds before each.
"""
from __future__ import annotations

import asyncio
import random
import re
import time
from dataclasses import replace

from websockets.exceptions import WebSocketException

from harness.students.protocol import Session
from harness.students.results import StepFailed
from harness.students.student import ErrorRecord, Gauge, SessionOutcome, run_step
from harness.students.widgets import slider_of

SUBJECTS = ("the sky", "cats", "airplanes", "sleep", "the moon", "volcanoes", "bees", "rain", "the heart", "trains",
            "music", "ice", "the ocean", "trees", "bread", "magnets", "clocks", "snow", "the sun", "bicycles")
FORMS = ("Why is {} important?", "Tell me one fact about {}.", "What do you know about {}?")
ASKER_STEPS = ("ask/open", "ask/question", "ask/first token", "ask/step", "ask/head")
HEATMAP_STEPS = ("heatmap/open", "heatmap/layer", "heatmap/head")
MOVE_EVERY = 0.5  # s between the heatmap student's moves
# the first streamed word: the answer's box with a word before its cursor (views/ask/text.text_html)
FIRST_WORD = re.compile(r"class='answer' data-text[^>]*>\s*\S[^<]*▌")


def question(index: int, seed: int = 0) -> str:
    """Student `index`'s question: each different (60 before one repeats); a student of the warm-up or the lone one
    (a negative index) asks one no student of the class asks (it would find its answer written). A class of another
    seed numbers its questions with it ("3. Why is ...?"), so that it finds none of an earlier class's answers written
    on the same server (the compose stack, run twice)."""
    if index < 0:
        asked = f"Say something about {SUBJECTS[-index % len(SUBJECTS)]}, please."
    else:
        i = index - 1
        asked = FORMS[i // len(SUBJECTS) % len(FORMS)].format(SUBJECTS[i % len(SUBJECTS)])
    return f"{seed}. {asked}" if seed else asked


async def class_member(index: int, url: str, rng: random.Random, start_at: float, think: tuple[float, float],
                       burst: bool, timeout: float, warmup: bool = False, gauge: Gauge | None = None,
                       watch: float = 30.0, seed: int = 0) -> SessionOutcome:
    """Student 0 moves the heatmap's sliders for `watch` s; any other asks the Ask page (the module's docstring). A
    warm-up student (warmup, index -1, -2...) opens the Ask page only: its default answer is written and kept; the
    classroom's lone student (warmup, index -1000 and below) asks, alone on the server."""
    heatmap = index == 0
    warmup = warmup and index > -1000
    out = SessionOutcome(index, expected=HEATMAP_STEPS if heatmap else ASKER_STEPS[:1] if warmup else ASKER_STEPS)
    if not warmup:
        await asyncio.sleep(max(0.0, start_at - time.perf_counter()) if heatmap else 0.0)
    session = Session(url, timeout)
    session.watch = {"first word": FIRST_WORD.search}
    gauge = gauge or Gauge()

    async def step(kind: str, action, value=None, chart: bool = True):
        return await run_step(out, session, kind, action, value, chart)

    def other(key: str) -> int:
        found = slider_of(session.widgets, key)
        if found is None:
            raise LookupError(f"no slider for {key!r} on the page")
        _, current, low, high = found
        return rng.choice([v for v in range(low, high + 1) if v != current] or [current])

    async def move(kind: str, key: str) -> bool:
        try:
            value = other(key)
        except LookupError as e:
            out.errors.append(ErrorRecord(index, kind, str(e)))
            return True
        return await step(kind, lambda: session.move_slider(key, value), value) is not None

    try:
        try:
            out.connect_ms = 1000 * await session.connect("" if heatmap else "ask", "")
        except (OSError, TimeoutError, WebSocketException, StepFailed) as e:
            out.errors.append(ErrorRecord(index, "connect", f"connection failed: {type(e).__name__}: {e}"))
            return out
        gauge.add(1)
        if heatmap:
            if await step("heatmap/open", session.open) is None:
                return out
            end, turn = time.perf_counter() + watch, 0
            while time.perf_counter() < end:
                await asyncio.sleep(MOVE_EVERY)
                kind, key = ("heatmap/layer", "layer") if turn % 2 == 0 else ("heatmap/head", "head")
                turn += 1
                if not await move(kind, key):
                    return out
            return out
        if await step("ask/open", session.open) is None or warmup:
            return out
        await asyncio.sleep(max(0.0, start_at - time.perf_counter()))
        asked = question(index, seed)
        result = await step("ask/question", lambda: session.set_widget("q", asked), asked)
        if result is None:
            return out
        if "first word" in result.marks:
            out.steps.append(replace(out.steps[-1], kind="ask/first token", ms=1000 * result.marks["first word"],
                                     bytes=0, messages=0, cpu_ms=None))
        else:
            out.errors.append(ErrorRecord(index, "ask/first token", "no answer word was streamed"))
        for kind, key, times in (("ask/step", "step", 3), ("ask/head", "head", 2)):
            for _ in range(times):
                await asyncio.sleep(0.0 if burst else rng.uniform(*think))
                if not await move(kind, key):
                    return out
    finally:
        if session.ws is not None:
            gauge.add(-1)
        await session.close()
    return out
