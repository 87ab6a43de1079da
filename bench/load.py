"""A class of students on one Streamlit server, all of them from this one process, each speaking Streamlit's own
websocket protocol (harness/students/protocol.py) and following the session script of harness/students/student.py; the
server's CPU and memory are read from /proc (harness/students/meter.py) and printed beside each step's latency
(harness/students/report.py).

    .venv/bin/python bench/load.py --spawn app --sessions 40            # the app, a server of its own
    .venv/bin/python bench/load.py --spawn floor --sessions 40 --burst  # the bare-Streamlit floor (bench/floor)
    .venv/bin/python bench/load.py --spawn app --replicas 2             # two servers behind nginx
    .venv/bin/python bench/load.py --url http://127.0.0.1:8080/ --pid 101 102
    .venv/bin/python bench/load.py --spawn app --query "model=random&d_model=768&heads=12&layers=12&d_ff=3072"
                                        # every student on a bert-base-sized model (the app's random model)

--server-env NAME=VALUE goes to a spawned server. Exit code 1 on any error.
"""
import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from harness.record import run  # noqa: E402
from harness.students.classroom import APPS, run_load, run_spawned  # noqa: E402


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
    parser.add_argument("--burst", action="store_true", help="no think time between actions")
    parser.add_argument("--query", default="", help="more URL parameters each student opens the page with, e.g. "
                        "a bert-base-sized model: model=random&d_model=768&heads=12&layers=12&d_ff=3072")
    parser.add_argument("--server-env", action="append", default=[], metavar="NAME=VALUE")
    args = parser.parse_args(argv)
    load = {"sessions": args.sessions, "ramp": args.ramp, "burst": args.burst, "query": args.query}
    if args.spawn:
        env = dict(kv.split("=", 1) for kv in args.server_env)
        report = run_spawned(args.spawn, args.replicas, env, **load)
    else:
        report = run_load(args.url, pids=args.pid, target=f"{args.url} (pids {args.pid or 'not given'})", **load)
    print(report.table())
    return 1 if report.errors else 0


if __name__ == "__main__":
    sys.exit(run(__file__, main))
