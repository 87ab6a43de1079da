"""The lesson as a load test: a class of students walks the guided tour on one server, all of them from this one
process, each speaking Streamlit's websocket protocol (harness/students/protocol.py) and following the tour's script
(harness/students/tour.py): the Tour page, then every stop's link in order as the banner's Next gives it, one slider
moved on each stop, a sentence of its own typed on the heatmap and on the Translate page, the translator and the
language model stepped with their Next button, then the rollout and the head atlas on its own sentence. One student
starts a live training midway (on the Translate page by default) and watches it to its end.

    .venv/bin/python bench/tour_load.py                                # 40 students, a server of its own
    .venv/bin/python bench/tour_load.py --live language-model          # the live run: the toy GPT's
    .venv/bin/python bench/tour_load.py --sessions 8 --think 0 1       # a short class
    .venv/bin/python bench/tour_load.py --url http://127.0.0.1:8501/ --pid 101

A spawned server gets DEFAULT_ENV (one torch thread, as the image; a shortened live run), then --server-env
NAME=VALUE. Before the class, after a warm-up walk, one student walks the tour alone with no think time: each
step's wall time and server CPU then ("alone"), what a step costs with nobody else on the server (--no-solo: not).
Printed: per step (stop and action) p50 / p95 / max latency, the errors, the server's CPU per student
(its own process, and its children: the live training), the peak RSS of every process of the server's tree (VmHWM,
read every 0.25 s), the goals (0 errors, every step's p95 at most 1.5 s, peak memory under 2 GiB; a step that
streams an LLM's answer is timed to its first word, its whole answer told apart: harness/students/tour.py), every
step over 1.5 s, and the class's timeline in 10-second windows (server CPU, steps and their p95). Exit code 1 on any
error.
"""
import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from harness.record import run  # noqa: E402
from harness.students.classroom import run_load, run_spawned  # noqa: E402
from harness.students.report import Report, percentile  # noqa: E402
from harness.students.tour import ANSWER  # noqa: E402

DEFAULT_ENV = {"ATTNVIZ_TORCH_THREADS": "1", "ATTNVIZ_LIVE_STEPS": "200", "ATTNVIZ_LIVE_GPT_STEPS": "500"}
GOAL_MS = 1500.0  # every step's p95
GOAL_BYTES = 2 * 2**30  # the server's peak memory (its whole tree at once, and each process)
WINDOW = 10.0  # s, the timeline's


def live_window(report: Report) -> tuple[float, float] | None:
    """(start, end) of the live training as its student watched it, in s from the class's start."""
    for outcome in report.outcomes:
        notes = outcome.notes.get("live")
        if notes and notes["started"] is not None and notes["seconds"] is not None:
            start = notes["started"] - report.started
            return start, start + notes["seconds"]
    return None


def goals(report: Report) -> list[str]:
    rows = report.by_step()
    answers = {kind: r for kind, r in rows.items() if kind.endswith(ANSWER) and r["n"]}
    over = [f"{kind} {r['p95_ms']:.0f} ms" for kind, r in rows.items()
            if r["n"] and r["p95_ms"] > GOAL_MS and kind not in answers]
    servers, peak_tree = report.servers, report.peak_one_server_bytes
    peak_one = max((p["peak"] for p in report.processes.values()), default=0)
    trees = ("the server's tree" if servers == 1 else
             f"the largest of {servers} servers' trees (each one's own limit; all at once "
             f"{report.rss_mb.get('peak', 0):.0f} MB)")
    live = [o.notes["live"] for o in report.outcomes if "live" in o.notes]
    lines = ["goals:",
             f"  errors: {len(report.errors)} ({'met' if not report.errors else 'NOT met'}: 0)",
             f"  p95 of every step at most {GOAL_MS / 1000:g} s: "
             + ("met" if not over else "NOT met: " + ", ".join(over)),
             f"  peak memory under {GOAL_BYTES / 2**30:g} GiB: {trees} {peak_tree / 2**20:.0f} MB at once, "
             f"the largest process {peak_one / 2**20:.0f} MB ("
             + ("met" if max(peak_tree, peak_one) < GOAL_BYTES else "NOT met") + ")"]
    if report.settings.get("live"):
        lines.append("  the live training reached its end: " + ("yes" if live and live[0]["finished"] else "NO"))
    for kind, r in answers.items():  # a page's step is timed to its first word; the whole writing is told apart
        lines.append(f"  (not a page's step) {kind}: {r['n']} answers streamed, written whole in "
                     f"{r['p50_ms'] / 1000:.1f} s at p50, {r['p95_ms'] / 1000:.1f} s at p95")
    return lines


def slow_steps(report: Report) -> list[str]:
    """Every step over GOAL_MS: when (s from the class's start), whose, what, and whether the live run was on."""
    window = live_window(report)
    slow = sorted((s for s in report.steps if s.ms > GOAL_MS and not s.kind.endswith(ANSWER)), key=lambda s: s.at)
    lines = [f"steps over {GOAL_MS / 1000:g} s: {len(slow)} of {len(report.steps)}"]
    for s in slow:
        t = s.at - report.started
        during = " (live training under way)" if window and window[0] <= t <= window[1] else ""
        lines.append(f"  t={t:6.1f} s student {s.session:>2} {s.kind}: {s.ms:.0f} ms{during}")
    return lines


def timeline(report: Report) -> list[str]:
    """Per WINDOW s of the class: the server process's CPU (cores), its children's, steps begun, their p95 / max."""
    samples = [(t - report.started, own, total) for t, own, total in report.timeline if t >= report.started]
    if len(samples) < 2:
        return []
    window = live_window(report)
    lines = [f"timeline ({WINDOW:g} s windows; cores used: the server process, its children)",
             f"{'from s':>6} {'server':>7} {'child':>6} {'steps':>6} {'p95 ms':>7} {'max ms':>7}  live"]
    start = 0.0
    while start < samples[-1][0]:
        inside = [x for x in samples if start <= x[0] <= start + WINDOW]
        steps = [s.ms for s in report.steps if start <= s.at - report.started < start + WINDOW and s.ms == s.ms]
        if len(inside) >= 2:
            (t0, own0, all0), (t1, own1, all1) = inside[0], inside[-1]
            dt = max(t1 - t0, 1e-9)
            live = "on" if window and window[0] < start + WINDOW and window[1] > start else ""
            lines.append(f"{start:>6.0f} {(own1 - own0) / dt:>7.2f} {max(0.0, all1 - all0 - own1 + own0) / dt:>6.2f} "
                         f"{len(steps):>6} {percentile(steps, 95) if steps else 0:>7.0f} "
                         f"{max(steps, default=0):>7.0f}  {live}")
        start += WINDOW
    return lines


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--url", help="a running server instead of a spawned one")
    parser.add_argument("--pid", type=int, nargs="*", default=[], help="server processes to measure with --url")
    parser.add_argument("--sessions", type=int, default=40)
    parser.add_argument("--ramp", type=float, default=10.0, help="students arrive uniformly within this many s")
    parser.add_argument("--think", type=float, nargs=2, default=(0.0, 6.0), metavar=("LOW", "HIGH"),
                        help="think time before each action, uniform in LOW..HIGH s")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--timeout", type=float, default=60.0, help="s a step may take before it is an error")
    parser.add_argument("--live", choices=("translate", "language-model", "none"), default="translate",
                        help="the page whose live training one student starts (none: no live training)")
    parser.add_argument("--live-student", type=int, default=0, help="which student starts it")
    parser.add_argument("--server-env", action="append", default=[], metavar="NAME=VALUE")
    parser.add_argument("--no-solo", action="store_true", help="skip the lone student walked before the class")
    args = parser.parse_args(argv)
    load = {"sessions": args.sessions, "ramp": args.ramp, "think": tuple(args.think), "seed": args.seed,
            "timeout": args.timeout, "script": "tour", "live": None if args.live == "none" else args.live,
            "live_student": args.live_student, "solo": not args.no_solo and bool(args.pid or not args.url)}
    if args.url:
        report = run_load(args.url, pids=args.pid, target=f"{args.url} (pids {args.pid or 'not given'})", **load)
    else:
        env = {**DEFAULT_ENV, **dict(kv.split("=", 1) for kv in args.server_env)}
        print("server env: " + " ".join(f"{k}={v}" for k, v in env.items()))
        report = run_spawned("app", 1, env, **load)
    print(report.table())
    print("\n".join(["", *goals(report), "", *slow_steps(report), "", *timeline(report)]))
    return 1 if report.errors else 0


if __name__ == "__main__":
    sys.exit(run(__file__, main))
