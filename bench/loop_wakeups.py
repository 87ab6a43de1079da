"""Work handed to the server's event loop from script threads, as Streamlit's runtime hands it a rerun's messages: a
wake-up of the loop per message (asyncio alone), or one per burst (serve.coalesced_wakeups).

Each script thread builds the all-heads page's 33 messages (`--build` µs of Python each) and hands each to the event
loop with call_soon_threadsafe; the loop handles it (`--handle` µs of Python), and the run is over when the loop has
handled the last one. One thread alone, then `--crowd` threads, each pausing 0 to 2 x `--think` ms before each of its
runs (a class's runs in one process, overlapping now and then). Per run: the time from its start to its last message
handled (p50 / p95), the script thread's CPU, the times it gave up the GIL and waited for it again (its voluntary
context switches), and the bytes written to wake the loop.

    .venv/bin/python bench/loop_wakeups.py [--runs 200] [--crowd 8] [--think 40] [--rounds 3]
"""
import argparse
import asyncio
import random
import resource
import statistics
import sys
import threading
import time
from asyncio import selector_events
from collections.abc import Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import serve  # noqa: E402
from harness.record import run  # noqa: E402
from harness.wakeups import counted_wakeups  # noqa: E402

MESSAGES = 33  # a switch to the all-heads page
MODES = ("asyncio", "coalesced")
LOOP = selector_events.BaseSelectorEventLoop
PLAIN = (LOOP._write_to_self, LOOP._read_from_self)


def spin(microseconds: float) -> None:
    """Python work for about this long (holding the GIL, as building a message does)."""
    end = time.perf_counter() + microseconds / 1e6
    while time.perf_counter() < end:
        pass


def script(loop, runs: int, build: float, handle: float, out: list, think: float = 0.0, seed: int = 0) -> None:
    """`runs` script runs in this thread, a pause of 0 to 2 x `think` ms before each: (ms, CPU ms, GIL waits) per
    run."""
    pauses = random.Random(seed)
    for _ in range(runs):
        time.sleep(pauses.uniform(0, 2 * think) / 1000)
        done = threading.Event()
        start, cpu, before = time.perf_counter(), time.thread_time(), resource.getrusage(resource.RUSAGE_THREAD)
        for _ in range(MESSAGES):
            spin(build)
            loop.call_soon_threadsafe(spin, handle)
        loop.call_soon_threadsafe(done.set)
        after = resource.getrusage(resource.RUSAGE_THREAD)
        cpu = 1000 * (time.thread_time() - cpu)
        done.wait()
        out.append((1000 * (time.perf_counter() - start), cpu, after.ru_nvcsw - before.ru_nvcsw))


def measure(mode: str, threads: int, runs: int, build: float, handle: float, think: float) -> dict:
    LOOP._write_to_self, LOOP._read_from_self = PLAIN
    if mode == "coalesced" and not serve.coalesced_wakeups():
        raise SystemExit("this asyncio has no self-pipe wake-up to coalesce")
    loop = asyncio.new_event_loop()
    counted = counted_wakeups(loop)
    server = threading.Thread(target=loop.run_forever)
    server.start()
    try:
        script(loop, 20, build, handle, [])  # warm-up
        sends, out = counted.sends, []
        workers = [threading.Thread(target=script, args=(loop, runs, build, handle, out, think, seed))
                   for seed in range(threads)]
        for worker in workers:
            worker.start()
        for worker in workers:
            worker.join()
        sends = counted.sends - sends
    finally:
        loop.call_soon_threadsafe(loop.stop)
        server.join()
        loop.close()
        LOOP._write_to_self, LOOP._read_from_self = PLAIN
    return {"ms": [o[0] for o in out], "cpu": [o[1] for o in out], "waits": [o[2] for o in out],
            "sends": sends / len(out)}


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=200, help="script runs per thread")
    parser.add_argument("--crowd", type=int, default=8, help="script threads at once in the crowd")
    parser.add_argument("--build", type=float, default=150.0, help="µs of Python to build a message")
    parser.add_argument("--handle", type=float, default=30.0, help="µs of Python for the loop to handle one")
    parser.add_argument("--think", type=float, default=40.0,
                        help="mean ms between a thread's runs (uniform from 0 to twice that)")
    parser.add_argument("--rounds", type=int, default=3, help="each case this many times, alternated")
    args = parser.parse_args(argv)
    cases = [(threads, mode) for threads in (1, args.crowd) for mode in MODES]
    found: dict[tuple, list[dict]] = {case: [] for case in cases}
    for _ in range(args.rounds):
        for threads, mode in cases:
            found[(threads, mode)].append(measure(mode, threads, args.runs, args.build, args.handle, args.think))
    print(f"{MESSAGES} messages a run, {args.build:g} µs to build each, {args.handle:g} µs for the loop to handle it; "
          f"{args.runs} runs per thread, 0-{2 * args.think:g} ms apart; {args.rounds} round(s) of each case, "
          "alternated")
    print(f"{'threads':>7} {'mode':<10} {'p50 ms':>7} {'p95 ms':>7} {'CPU ms':>7} {'GIL waits':>9} {'wake-ups':>9}"
          "   (per run)")
    for threads, mode in cases:
        got = found[(threads, mode)]
        ms = sorted(t for r in got for t in r["ms"])
        p50, p95 = ms[len(ms) // 2], ms[int(len(ms) * 0.95)]
        cpu = statistics.mean(c for r in got for c in r["cpu"])
        waits = statistics.mean(w for r in got for w in r["waits"])
        sends = statistics.mean(r["sends"] for r in got)
        base = found[(threads, MODES[0])]
        base_ms = sorted(t for r in base for t in r["ms"])
        ratio = (f"   p50 {p50 / base_ms[len(base_ms) // 2]:.2f} x, p95 {p95 / base_ms[int(len(base_ms) * 0.95)]:.2f} x"
                 f" asyncio's" if mode != MODES[0] else "")
        print(f"{threads:>7} {mode:<10} {p50:>7.2f} {p95:>7.2f} {cpu:>7.2f} {waits:>9.1f} {sends:>9.1f}{ratio}")
    return 0


if __name__ == "__main__":
    sys.exit(run(__file__, main))
