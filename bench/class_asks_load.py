"""A class asks the LLM at once, as a load test (issue 46): N students on the Ask page, all from this one process,
each speaking Streamlit's websocket protocol (harness/students/protocol.py) and following harness/students/ask.py:
each types a different question within the ramp (5 s), watches its answer to its end, then moves the answer's step
slider to three tokens and the head slider to two heads; one more student moves the heatmap's sliders the whole time.

    .venv/bin/python bench/class_asks_load.py                     # 40 students, a server of its own (as the image)
    .venv/bin/python bench/class_asks_load.py --sessions 8        # a short class
    .venv/bin/python bench/class_asks_load.py --url http://127.0.0.1:8501/ --pid 101

Before the class, on the same server: the heatmap student alone (its quiet p95), and one student asking alone (the
server CPU of its whole walk: the class's CPU is compared with N of those, one at a time). Printed: per step
p50 / p95 / max (ask/first token: from the question to the first answer word streamed; ask/question: to the whole
answer and its page), errors, the server CPU for the class against N answers one at a time, the server's peak memory,
the heatmap student's p95 against its quiet run, and the goals: 0 errors, first token p95 <= 3 s, whole answer p95
<= 15 s, CPU <= 0.25x, peak memory < 1.8 GiB, the heatmap's p95 <= 1.5 s. Exit code 1 on any error.
"""
import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from harness.record import run  # noqa: E402
from harness.servers import spawn  # noqa: E402
from harness.students.classroom import APPS, SESSION_TTL, run_load  # noqa: E402
from harness.students.report import Report, percentile  # noqa: E402

DEFAULT_ENV = {"ATTNVIZ_TORCH_THREADS": "1"}  # as the image
GOALS = {"ask/first token": 3000.0, "ask/question": 15000.0}  # p95, ms
GOAL_CPU = 0.25  # the class's server CPU against its answers written one at a time
GOAL_BYTES = 1.8 * 2**30  # the replica's peak memory
GOAL_HEATMAP_MS = 1500.0  # the heatmap student's slider p95


def heatmap_p95(report: Report) -> float:
    return percentile([s.ms for s in report.steps if s.kind in ("heatmap/layer", "heatmap/head") and s.ms == s.ms],
                      95)


def summary(report: Report, quiet: Report, askers: int) -> list[str]:
    rows = report.by_step()
    alone = [s.cpu_ms for s in report.solo if s.kind == "ask/question" and s.cpu_ms is not None]
    walk = sum(s.cpu_ms for s in report.solo if s.cpu_ms is not None) / 1000  # open, question, 5 moves: alone
    answer = alone[0] / 1000 if alone else float("nan")
    cpu = report.server_cpu_s or float("nan")
    peak = report.peak_one_server_bytes
    busy, calm = heatmap_p95(report), heatmap_p95(quiet)
    lines = ["goals:", f"  errors: {len(report.errors)} ({'met' if not report.errors else 'NOT met'}: 0)"]
    for kind, goal in GOALS.items():
        p95 = rows.get(kind, {}).get("p95_ms", float("nan"))
        lines.append(f"  {kind} p95 at most {goal / 1000:g} s: {p95 / 1000:.2f} s "
                     f"({'met' if p95 <= goal else 'NOT met'})")
    ratio = cpu / (walk * askers)
    lines.append(f"  server CPU for the class {cpu:.1f} s, against {askers} students one at a time "
                 f"{walk * askers:.1f} s "
                 f"(one alone: {walk:.2f} s, of which its answer and page {answer:.2f} s; the class against "
                 f"{askers} answers alone: {cpu / (answer * askers):.2f}x): {ratio:.2f}x "
                 f"({'met' if ratio <= GOAL_CPU else 'NOT met'}: at most {GOAL_CPU}x)")
    servers = report.servers
    lines.append(f"  {'the server' if servers == 1 else f'the largest of {servers} servers'}'s peak memory "
                 f"{peak / 2**20:.0f} MB ("
                 f"{'met' if peak < GOAL_BYTES else 'NOT met'}: under {GOAL_BYTES / 2**30:g} GiB)")
    lines.append(f"  the heatmap student's slider p95 {busy:.0f} ms while the class asks, {calm:.0f} ms alone ("
                 f"{'met' if busy <= GOAL_HEATMAP_MS else 'NOT met'}: at most {GOAL_HEATMAP_MS / 1000:g} s)")
    return lines


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--url", help="a running server instead of a spawned one")
    parser.add_argument("--pid", type=int, nargs="*", default=[], help="server processes to measure with --url")
    parser.add_argument("--sessions", type=int, default=40, help="students asking (one more moves the heatmap)")
    parser.add_argument("--ramp", type=float, default=5.0, help="the questions arrive within this many s")
    parser.add_argument("--think", type=float, nargs=2, default=(0.5, 2.0), metavar=("LOW", "HIGH"))
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--timeout", type=float, default=120.0, help="s a step may take before it is an error")
    parser.add_argument("--server-env", action="append", default=[], metavar="NAME=VALUE")
    args = parser.parse_args(argv)
    watch = args.ramp + 25.0
    load = {"sessions": args.sessions + 1, "ramp": args.ramp, "think": tuple(args.think), "seed": args.seed,
            "timeout": args.timeout, "script": "ask", "solo": True, "watch": watch}

    def both(url: str, pids: list[int], target: str) -> tuple[Report, Report]:
        quiet = run_load(url, sessions=1, ramp=0, think=(0, 0), warmup=1, settle=None, pids=pids, script="ask",
                         watch=10.0, target=target, timeout=args.timeout)
        return quiet, run_load(url, pids=pids, target=target, warmup=0, **load)

    if args.url:
        quiet, report = both(args.url, args.pid, f"{args.url} (pids {args.pid or 'not given'})")
    else:
        env = {**DEFAULT_ENV, **dict(kv.split("=", 1) for kv in args.server_env)}
        print("server env: " + " ".join(f"{k}={v}" for k, v in env.items()))
        with spawn(APPS["app"], env=env, session_ttl=SESSION_TTL, serve=True) as server:
            server.wait_ready()
            quiet, report = both(server.url, [server.pid], f"app (spawned, pid {server.pid}, {server.url})")
    print(report.table())
    print("\n".join(["", *summary(report, quiet, args.sessions)]))
    return 1 if report.errors or quiet.errors else 0


if __name__ == "__main__":
    sys.exit(run(__file__, main))
