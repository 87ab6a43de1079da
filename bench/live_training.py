"""Train it live (issue 19) against the rest of the class: how long a live training takes on this machine, and how
much it slows another student's slider, beside a student looping 512-token heatmaps.

    .venv/bin/python bench/live_training.py                  # both: --runs 2 live trainings, then --rounds 4
    .venv/bin/python bench/live_training.py --runs 0         # only the slider latency
    .venv/bin/python bench/live_training.py --rounds 0       # only the wall time

Wall time: runtime.live_training.LiveTraining run to the end in this process (as the server runs it: a child process,
one torch thread, nice 10), with the child's peak RSS and CPU.

Slider latency: one server (`streamlit run app.py`, ATTNVIZ_TORCH_THREADS=1 as in the image); a student moves the
heatmap's layer slider (default sentence, cached pass) --moves times, 0.25 s apart, under four conditions (five
with --watchers), in an order that rotates each round: nothing else; a live training started from the Translate
page by a lecturer whose page polls every second, as a browser's does (a fragment rerun); the same with nobody
watching (the training process alone); another student typing a new 509-word text (512 tokens) into the heatmap
again and again, with no pause; with --watchers N, the live training with N - 1 more sessions watching it (each
polling every 2 s, as the page of a session that did not start the run). The live conditions are measured once the
run is past its 10th step (its process started). Reported: the median latency of each condition, its 90th
percentile, and per round its median's ratio to the quiet condition of the same round (the median of those
ratios), and the server's CPU.
"""
from __future__ import annotations

import argparse
import asyncio
import os
import random
import statistics
import sys
import time
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))
from harness.record import run  # noqa: E402
from harness.servers import spawn  # noqa: E402
from harness.students.meter import cpu_seconds, own_cpu_seconds, rss_bytes  # noqa: E402
from harness.students.protocol import Session  # noqa: E402
from harness.students.student import WORDS  # noqa: E402
from harness.students.widgets import Widget  # noqa: E402

THINK = 0.25  # s between the measured student's slider moves
POLL = 1.0  # s between the lecturer's polls (views.translate.live.POLL_SECONDS)
WATCH = 2.0  # s between the other watchers' polls (views.translate.live.WATCH_SECONDS)


# ---------------------------------------------------------------- wall time
def wall_time(runs: int) -> list[dict]:
    from runtime.live_training import FINISHED, RUNNING, LiveTraining
    from training.live import Settings

    found = []
    for run_index in range(runs):
        live = LiveTraining(Settings())
        start = time.perf_counter()
        live.start(seed=0, owner="bench")
        pid, peak, cpu = live._proc.pid, 0, 0.0
        while (run := live.current()).state == RUNNING:
            peak, cpu = max(peak, rss_bytes(pid)), max(cpu, cpu_seconds(pid))
            time.sleep(0.2)
        assert run.state == FINISHED, run.why
        found.append({"run": run_index, "seconds": time.perf_counter() - start, "steps": len(run.loss),
                      "test": run.test, "peak_rss_mb": peak / 2**20, "cpu_s": cpu})
    return found


# ---------------------------------------------------------------- the server
class Lecturer(Session):
    """A Session that also knows the page's buttons and the live part's polling fragment."""

    def __init__(self, url: str):
        super().__init__(url, timeout=120)
        self.buttons: dict[str, str] = {}  # button id -> its fragment id
        self.watch_fragment = ""
        self.step = 0

    def _element(self, msg, result, seen) -> None:
        super()._element(msg, result, seen)
        element = msg.delta.new_element
        kind = element.WhichOneof("type")
        if kind == "button":
            self.buttons[element.button.id] = msg.delta.fragment_id
        elif kind == "metric" and element.metric.label.startswith("Step (of at most"):
            self.watch_fragment, self.step = msg.delta.fragment_id, int(element.metric.body or 0)

    async def click(self, key: str):
        button = next(i for i in self.buttons if i.endswith("-" + key))
        fragment = self.buttons[button]
        pressed = Widget(button, "button", "trigger_value", True, fragment, self.page_hash)
        return await self._rerun(self.page_hash, "", {**self.widgets, button: pressed}, fragment)

    async def poll(self):
        return await self._rerun(self.page_hash, "", dict(self.widgets), self.watch_fragment)


def text_of_512_tokens(rng: random.Random) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(509)) + "."


async def measured_moves(url: str, moves: int) -> list[float]:
    student = Session(url)
    await student.connect("", "")
    await student.open()
    latencies = []
    for i in range(moves):
        result = await student.set_widget("layer", [float((i + 1) % 6)])
        assert not result.problems, result.problems
        latencies.append(result.seconds * 1000)
        await asyncio.sleep(THINK)
    await student.close()
    return latencies


async def live_condition(url: str, moves: int, watchers: int = 1) -> list[float]:
    """A lecturer starts a live training; `watchers` sessions (the lecturer first) poll it every POLL s while the
    student's moves are measured."""
    lecturer = Lecturer(url)
    await lecturer.connect("translate", "part=live")
    await lecturer.open()
    await lecturer.click("live_start")
    while lecturer.step < 10:  # past the process's start: training
        await asyncio.sleep(POLL)
        await lecturer.poll()
    others = [Lecturer(url) for _ in range(watchers - 1)]
    for other in others:
        await other.connect("translate", "part=live")
        await other.open()
    stop = asyncio.Event()

    async def keep_polling(session: Lecturer, offset: float, every: float):
        await asyncio.sleep(offset)
        while not stop.is_set():
            await session.poll()
            await asyncio.sleep(every)

    pollers = [asyncio.create_task(keep_polling(w, WATCH * i / watchers, POLL if w is lecturer else WATCH))
               for i, w in enumerate([lecturer, *others][:watchers])]
    try:
        return await measured_moves(url, moves)
    finally:
        stop.set()
        await asyncio.gather(*pollers)
        await lecturer.click("live_stop")
        for session in (lecturer, *others):
            await session.close()


async def heavy_condition(url: str, moves: int, rng: random.Random) -> list[float]:
    heavy = Session(url)
    await heavy.connect("", "")
    await heavy.open()
    stop = asyncio.Event()

    async def loop():
        while not stop.is_set():
            await heavy.set_widget("text", text_of_512_tokens(rng))

    looping = asyncio.create_task(loop())
    try:
        return await measured_moves(url, moves)
    finally:
        stop.set()
        await looping
        await heavy.close()


async def snapshot_moves(url: str) -> list[dict]:
    """Watch it learn: the snapshot slider through every snapshot, twice (the first time each snapshot's model is
    built and the sentence decoded; the second time both are in the budget)."""
    from model.translator.snapshots import snapshot_steps

    steps = snapshot_steps()
    student = Session(url)
    await student.connect("translate", "part=learning")
    await student.open()
    found = []
    label = {s: "0 (random)" if s == 0 else f"{s} (trained)" if s == steps[-1] else str(s) for s in steps}
    for sweep in ("first (built)", "again (cached)"):
        for step in (*steps[1:], steps[0]):
            # a select_slider's state is its option as shown (Streamlit 1.67), not a number as a slider's
            widget = student.find("snap")
            student.widgets[widget.id] = replace(widget, value_type="string_array_value")
            result = await student.set_widget("snap", [label[step]])
            assert not result.problems, result.problems
            found.append({"sweep": sweep, "ms": result.seconds * 1000, "bytes": result.bytes})
            await asyncio.sleep(THINK)
    await student.close()
    return found


async def rounds(url: str, pid: int, count: int, moves: int, watchers: int) -> list[dict]:
    rng = random.Random(19)
    conditions = {"quiet": lambda: measured_moves(url, moves), "live training": lambda: live_condition(url, moves),
                  "live training, unwatched": lambda: live_condition(url, moves, watchers=0),
                  "512-token heatmaps": lambda: heavy_condition(url, moves, rng)}
    if watchers > 1:
        conditions[f"live training, {watchers} watching"] = lambda: live_condition(url, moves, watchers)
    names = list(conditions)
    await measured_moves(url, 3)  # warm-up: the default model and its pass
    found = []
    for index in range(count):
        order = names[index % len(names):] + names[:index % len(names)]
        for name in order:
            cpu0, wall0, load0 = own_cpu_seconds(pid), time.perf_counter(), os.getloadavg()[0]
            latencies = await conditions[name]()
            found.append({"round": index, "condition": name, "latencies": latencies,
                          "server_cpu_s": own_cpu_seconds(pid) - cpu0, "wall_s": time.perf_counter() - wall0,
                          "load": (load0 + os.getloadavg()[0]) / 2})
    return found


def report_snapshots(moves: list[dict]) -> None:
    print("\n| Watch it learn, snapshot slider | moves | median (ms) | max (ms) | median bytes sent |\n"
          "|---|---:|---:|---:|---:|")
    for sweep in ("first (built)", "again (cached)"):
        rows = [m for m in moves if m["sweep"] == sweep]
        print(f"| {sweep} | {len(rows)} | {statistics.median(m['ms'] for m in rows):.1f} | "
              f"{max(m['ms'] for m in rows):.1f} | {statistics.median(m['bytes'] for m in rows):,.0f} |")


def report(walls: list[dict], measured: list[dict]) -> None:
    print(f"# {time.strftime('%Y-%m-%d %H:%M')}, {os.cpu_count()} cores, load average at start "
          f"{os.getloadavg()[0]:.1f}")
    if walls:
        print("\n| live run | wall (s) | steps | final test | child peak RSS (MB) | child CPU (s) |\n"
              "|---|---:|---:|---:|---:|---:|")
        for w in walls:
            print(f"| {w['run']} | {w['seconds']:.1f} | {w['steps']} | {w['test']:.1%} | {w['peak_rss_mb']:.0f} | "
                  f"{w['cpu_s']:.1f} |")
    if not measured:
        return
    quiet = {m["round"]: statistics.median(m["latencies"]) for m in measured if m["condition"] == "quiet"}
    print("\n| condition | median slider move (ms) | p90 (ms) | median ratio to quiet, per round | server CPU "
          "(s per s) | load average |\n|---|---:|---:|---|---:|---:|")
    for name in dict.fromkeys(m["condition"] for m in measured):
        rows = [m for m in measured if m["condition"] == name]
        pooled = sorted(x for m in rows for x in m["latencies"])
        ratios = [statistics.median(m["latencies"]) / quiet[m["round"]] for m in rows]
        cpu = statistics.median(m["server_cpu_s"] / m["wall_s"] for m in rows)
        print(f"| {name} | {statistics.median(pooled):.1f} | {pooled[int(0.9 * (len(pooled) - 1))]:.1f} | "
              f"{statistics.median(ratios):.2f} ({', '.join(f'{r:.2f}' for r in ratios)}) | {cpu:.2f} | "
              f"{statistics.median(m['load'] for m in rows):.1f} |")


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--runs", type=int, default=2, help="live trainings timed to the end")
    p.add_argument("--rounds", type=int, default=4, help="rounds of the three conditions")
    p.add_argument("--moves", type=int, default=30, help="slider moves measured per condition and round")
    p.add_argument("--no-snapshots", dest="snapshots", action="store_false", help="skip the snapshot slider")
    p.add_argument("--watchers", type=int, default=1, help="more than 1: also a condition where this many sessions "
                                                          "watch the live training (each polling every second)")
    args = p.parse_args(argv)
    walls = wall_time(args.runs)
    measured, snapshots = [], []
    if args.rounds or args.snapshots:
        with spawn(ROOT / "app.py", env={"ATTNVIZ_TORCH_THREADS": "1"}) as server:
            if args.snapshots:
                snapshots = asyncio.run(snapshot_moves(server.url))
            if args.rounds:
                measured = asyncio.run(rounds(server.url, server.pid, args.rounds, args.moves, args.watchers))
    report(walls, measured)
    if snapshots:
        report_snapshots(snapshots)
    return 0


if __name__ == "__main__":
    sys.exit(run(__file__, main))
