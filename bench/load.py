"""A class of students on one Streamlit server, all of them from this one process, each speaking Streamlit's own
websocket protocol (bench/load_protocol.py) and following the session script of bench/load_student.py; the server's
CPU and memory are read from /proc (bench/load_meter.py) and printed beside each step's latency (bench/load_report.py).

    .venv/bin/python bench/load.py --spawn app --sessions 40            # the app, a server of its own
    .venv/bin/python bench/load.py --spawn floor --sessions 40 --burst  # the bare-Streamlit floor (bench/floor)
    .venv/bin/python bench/load.py --spawn app --replicas 2             # two servers behind nginx
    .venv/bin/python bench/load.py --url http://127.0.0.1:8080/ --pid 101 102
    .venv/bin/python bench/load.py --spawn app --query "model=random&d_model=768&heads=12&layers=12&d_ff=3072"
                                        # every student on a bert-base-sized model (the app's random model)

--server-env NAME=VALUE goes to a spawned server. Exit code 1 on any error.
"""
from __future__ import annotations

import argparse
import asyncio
import concurrent.futures
import contextlib
import random
import sys
import time
from collections.abc import Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # run as a script: bench/ is on the path, not the repository
    sys.path.insert(0, str(ROOT))
from bench.load_meter import Meter, active_sessions  # noqa: E402
from bench.load_protocol import Session  # noqa: E402
from bench.load_report import Report  # noqa: E402
from bench.load_student import TOKENS, ErrorRecord, Gauge, student  # noqa: E402
from bench.servers import spawn  # noqa: E402

APPS = {"app": ROOT / "app.py", "floor": ROOT / "bench" / "floor" / "app.py"}
SESSION_TTL = 2  # s, server.disconnectedSessionTTL of spawned servers: the after-disconnect figures wait it out


def run_sync(make_coroutine):
    """asyncio.run(make_coroutine()), in a thread of its own when this thread already runs an event loop
    (e.g. under Playwright's sync API in the same pytest process)."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(make_coroutine())
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        return pool.submit(lambda: asyncio.run(make_coroutine())).result()



async def _run(url: str, sessions: int, ramp: float, think: tuple[float, float], burst: bool, seed: int,
               timeout: float, pids: Sequence[int], warmup: int, settle: float | None, target: str,
               query: str) -> Report:
    settings = {"url": url, "ramp": ramp, "think": list(think), "burst": burst, "seed": seed, "timeout": timeout,
                "tokens": TOKENS, "warmup": warmup, "pids": list(pids), "query": query}
    warm = [await student(-1 - i, url, random.Random(f"warmup-{seed}-{i}"), 0, think, True, timeout,
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
        student(i, url, rngs[i], start + arrivals[i], think, burst, timeout, gauge=gauge, query=query)
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
    await asyncio.sleep(settle)
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
             burst: bool = False, seed: int = 0, timeout: float = 60.0, pids: Sequence[int] = (), warmup: int = 1,
             settle: float | None = SESSION_TTL + 1, target: str | None = None, query: str = "") -> Report:
    """Drive `sessions` students against the Streamlit server at `url`; measure `pids` (CPU, RSS) if given.

    warmup: sessions run first (default sentence, no think time) so that imports and the model load are paid
    before the measurement; settle: seconds after the last session before the after-disconnect figures (more
    than the server's server.disconnectedSessionTTL), None: no such figures;
    query: more URL parameters every session opens with (e.g. another model: "model=random&d_model=768")."""
    return run_sync(lambda: _run(url, sessions, ramp, tuple(think), burst, seed, timeout, pids, warmup, settle,
                                 target or url, query))


def run_spawned(app: str, replicas: int, env: dict[str, str], **load) -> Report:
    """`replicas` servers of `app` of their own; with more than one, behind Debian's nginx with deploy/nginx.conf
    (sticky sessions), each warmed up directly (through the proxy a warm-up session lands on one replica only)."""
    with contextlib.ExitStack() as stack:
        servers = [stack.enter_context(spawn(APPS[app], env=env, session_ttl=SESSION_TTL)) for _ in range(replicas)]
        pids = [s.pid for s in servers]
        if replicas == 1:
            url, target = servers[0].url, f"{app} (spawned, pid {pids[0]}, {servers[0].url})"
        else:
            from bench.proxy import Proxy

            proxy = Proxy([s.addr for s in servers])
            stack.callback(proxy.stop)
            proxy.wait()
            for server in servers:
                run_load(server.url, sessions=1, ramp=0, think=(0, 0), burst=True, warmup=0, settle=None,
                         query=load["query"])
            url, target = proxy.url + "/", f"{replicas} x {app} behind nginx (pids {pids}, {proxy.url}/)"
            load["warmup"] = 0
        report = run_load(url, pids=pids, target=target, **load)
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
    sys.exit(main())
