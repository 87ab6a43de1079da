"""A class of students on one Streamlit server, all of them from this one process, each speaking Streamlit's own
websocket protocol (harness/students/protocol.py) and following the session script of harness/students/student.py; the
server's CPU and memory are read from /proc (harness/students/meter.py) and printed beside each step's latency
(harness/students/report.py).

    .venv/bin/python bench/load.py --spawn app --sessions 40            # the app, a server of its own
    .venv/bin/python bench/load.py --spawn floor --sessions 40 --burst  # the bare-Streamlit floor (bench/floor)
    .venv/bin/python bench/load.py --spawn floor app [--rounds 3]       # in turn, in one run: the app / the floor
    .venv/bin/python bench/load.py --spawn app --replicas 2             # two servers behind nginx
    .venv/bin/python bench/load.py --url http://127.0.0.1:8080/ --pid 101 102
    .venv/bin/python bench/load.py --spawn app --query "model=random&d_model=768&heads=12&layers=12&d_ff=3072"
                                        # every student on a bert-base-sized model (the app's random model)

--server-env NAME=VALUE goes to a spawned server. With several servers to --spawn, each runs in turn (--rounds times,
alternated), then the ratios of each to the first: per step the p50 and p95 over all its rounds' steps, and the server
CPU per student (the sums over its rounds). Exit code 1 on any error.
"""
import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from harness.record import run  # noqa: E402
from harness.students.classroom import APPS, run_load, run_spawned  # noqa: E402
from harness.students.report import Report, percentile  # noqa: E402


def compare(reports: dict[str, list[Report]]) -> str:
    """Each server against the first of `reports` (server -> its runs): per step the ratio of the p50 and p95 of all
    its runs' steps, and of the server CPU per student."""
    def pooled(runs: list[Report], kind: str) -> list[float]:
        return [s.ms for r in runs for s in r.steps if s.kind == kind and s.ms == s.ms]

    def cpu(runs: list[Report]) -> float:
        return sum(r.server_cpu_s or 0 for r in runs) / max(1, sum(r.sessions for r in runs))

    (base, base_runs), *others = reports.items()
    kinds = base_runs[0].order
    lines = [f"ratios to {base} ({len(base_runs)} run(s) each; p50 / p95 over all their steps)",
             f"{'server':<8} {'step':<10} {'p50 ms':>8} {'p95 ms':>8} {'p50 ratio':>10} {'p95 ratio':>10}"]
    for name, runs in reports.items():
        for kind in kinds:
            mine, theirs = pooled(runs, kind), pooled(base_runs, kind)
            p50, p95 = percentile(mine, 50), percentile(mine, 95)
            lines.append(f"{name:<8} {kind:<10} {p50:>8.0f} {p95:>8.0f} {p50 / percentile(theirs, 50):>10.2f} "
                         f"{p95 / percentile(theirs, 95):>10.2f}")
    for name, runs in others:
        worse = [k for k in kinds if percentile(pooled(runs, k), 95) > percentile(pooled(base_runs, k), 95)]
        lines.append(f"{name}: CPU per student {cpu(runs):.3f} s, {cpu(runs) / cpu(base_runs):.2f} x {base}'s "
                     f"{cpu(base_runs):.3f} s; p95 above {base}'s: {', '.join(worse) or 'none'}")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    where = parser.add_mutually_exclusive_group(required=True)
    where.add_argument("--spawn", choices=sorted(APPS), nargs="+",
                       help="start this app's server (a free port on 127.0.0.1); several: each in turn, compared")
    where.add_argument("--url", help="a running server (or a proxy in front of replicas)")
    parser.add_argument("--pid", type=int, nargs="*", default=[], help="server processes to measure with --url")
    parser.add_argument("--replicas", type=int, default=1,
                        help="with --spawn: this many servers behind Debian's nginx with deploy/nginx.conf")
    parser.add_argument("--sessions", type=int, default=40)
    parser.add_argument("--ramp", type=float, default=10.0, help="sessions arrive uniformly within this many s")
    parser.add_argument("--burst", action="store_true", help="no think time between actions")
    parser.add_argument("--query", default="", help="more URL parameters each student opens the page with, e.g. "
                        "a bert-base-sized model: model=random&d_model=768&heads=12&layers=12&d_ff=3072")
    parser.add_argument("--server-env", action="append", default=[], metavar="NAME=VALUE")
    parser.add_argument("--rounds", type=int, default=1, help="with several servers to --spawn: runs of each, in turn")
    args = parser.parse_args(argv)
    load = {"sessions": args.sessions, "ramp": args.ramp, "burst": args.burst, "query": args.query}
    if not args.spawn:
        report = run_load(args.url, pids=args.pid, target=f"{args.url} (pids {args.pid or 'not given'})", **load)
        print(report.table())
        return 1 if report.errors else 0
    env = dict(kv.split("=", 1) for kv in args.server_env)
    reports: dict[str, list[Report]] = {name: [] for name in args.spawn}
    for _ in range(args.rounds if len(args.spawn) > 1 else 1):
        for name in args.spawn:
            reports[name].append(run_spawned(name, args.replicas, env, **load))
            print(reports[name][-1].table() + "\n", flush=True)
    if len(args.spawn) > 1:
        print(compare(reports))
    return 1 if any(r.errors for runs in reports.values() for r in runs) else 0


if __name__ == "__main__":
    sys.exit(run(__file__, main))
