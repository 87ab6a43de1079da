"""A class of students on one Streamlit server, all from this one process: each speaks Streamlit's own
websocket protocol (protocol.py) and follows a session script, SCRIPTS: "slider" (student.py: the heatmap's sliders,
a new sentence, all heads), "tour" (tour.py: the guided tour, stop by stop, one student starting a live training) or
"ask" (ask.py: a class asking the LLM at once, one student on the heatmap meanwhile);
the server's CPU and memory are read from /proc (meter.py) and reported beside each step's latency (report.py).
bench/load.py and bench/tour_load.py are its command lines; tests/load runs short classes through run_load."""
from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import random
import time
from collections.abc import Sequence
from pathlib import Path

from harness.proxy import Proxy
from harness.servers import spawn
from harness.students.ask import class_member
from harness.students.meter import Meter, active_sessions
from harness.students.protocol import Session
from harness.students.report import Report
from harness.students.student import SERVER_CPU, TOKENS, ErrorRecord, Gauge, student
from harness.students.tour import tour_student

ROOT = Path(__file__).resolve().parents[2]

APPS = {"app": ROOT / "app.py", "floor": ROOT / "bench" / "floor" / "app.py"}
SCRIPTS = {"slider": student, "tour": tour_student, "ask": class_member}
# s between the lone student's steps: back to back, each step would wait for the client's delayed ACK (~40 ms: the
# server sets no TCP_NODELAY, bench/results/load.md)
SOLO_PAUSE = 0.2
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
               query: str, script: str, live: str | None, live_student: int, solo: bool, watch: float) -> Report:
    settings = {"url": url, "ramp": ramp, "think": list(think), "burst": burst, "seed": seed, "timeout": timeout,
                "tokens": TOKENS, "warmup": warmup, "pids": list(pids), "query": query, "script": script,
                "live": live, "live_student": live_student if live else None}

    def options(i: int) -> dict:  # what the script takes beyond the class's settings
        if script == "ask":
            return {"watch": watch, "seed": seed}
        return {"query": query} if script == "slider" else {"live": live if i == live_student else None}

    warm = [await SCRIPTS[script](-1 - i, url, random.Random(f"warmup-{seed}-{i}"), 0, think, True, timeout,
                                  warmup=True, **options(-1)) for i in range(warmup)]
    meter = Meter(pids) if pids else None
    report = Report(target, sessions, settings, [], 0.0, warmup_errors=[e for o in warm for e in o.errors])
    if solo and meter:  # one student alone, no think time: each step's wall time and server CPU with nobody else
        SERVER_CPU.set(lambda: sum(meter.cpu().values()))
        alone = await SCRIPTS[script](-1000, url, random.Random(f"solo-{seed}"), 0, (SOLO_PAUSE, SOLO_PAUSE), False,
                                      timeout, warmup=True, **options(-1))
        SERVER_CPU.set(None)
        report.solo, report.warmup_errors = alone.steps, report.warmup_errors + alone.errors
    # the server's own session gauge; behind a proxy with several replicas it would be one replica's only
    gauge_url = url if len(pids) <= 1 else None
    report.active_sessions["before"] = await active_sessions(gauge_url)
    cpu0, own0, client0 = (meter.cpu() if meter else None), (meter.own_cpu() if meter else None), time.process_time()
    if meter:
        report.rss_mb["before"] = sum(meter.rss().values()) / 2**20
        meter.peak, meter.peaks = 0, {}
        sampler = asyncio.create_task(meter.sample())
    start = report.started = time.perf_counter()
    rngs = [random.Random(f"{seed}-{i}") for i in range(sessions)]
    arrivals = [rng.uniform(0, ramp) for rng in rngs]
    gauge = Gauge()
    report.outcomes = list(await asyncio.gather(*(
        SCRIPTS[script](i, url, rngs[i], start + arrivals[i], think, burst, timeout, gauge=gauge, **options(i))
        for i in range(sessions))))
    report.peak_connected = gauge.peak
    report.wall_s = time.perf_counter() - start
    report.client_cpu_s = time.process_time() - client0
    report.active_sessions["end"] = await active_sessions(gauge_url)
    if meter:
        cpu1, own1, end_rss = meter.cpu(), meter.own_cpu(), meter.rss()
        report.server_cpu_by_pid = {pid: cpu1[pid] - cpu0[pid] for pid in pids}
        report.server_cpu_s = sum(report.server_cpu_by_pid.values())
        report.children_cpu_s = report.server_cpu_s - sum(own1[pid] - own0[pid] for pid in pids)
        report.processes, report.timeline = meter.processes, meter.timeline
        report.rss_mb_by_pid = {pid: rss / 2**20 for pid, rss in end_rss.items()}
        sampler.cancel()
        report.rss_mb["peak"] = meter.peak / 2**20
        if len(pids) > 1:  # behind a proxy: each server has a limit of its own
            report.rss_mb["peak of one server"] = max(meter.peaks.values(), default=0) / 2**20
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
             settle: float | None = SESSION_TTL + 1, target: str | None = None, query: str = "",
             script: str = "slider", live: str | None = None, live_student: int = 0, solo: bool = False,
             watch: float = 30.0) -> Report:
    """Drive `sessions` students against the Streamlit server at `url`; measure `pids` (CPU, RSS) if given.

    warmup: sessions run first (default sentence, no think time) so that imports and the model load are paid
    before the measurement; settle: seconds after the last session before the after-disconnect figures (more
    than the server's server.disconnectedSessionTTL), None: no such figures;
    query: more URL parameters every session opens with (e.g. another model: "model=random&d_model=768");
    script: a key of SCRIPTS, what each student does; live (the tour): the page ("translate" or "language-model") on
    which student `live_student` starts a live training, None: nobody does; solo: after the warm-up, one student
    alone first (not counted), each step's wall time and server CPU recorded (Report.solo; needs pids); watch (the
    "ask" script): seconds its student 0 moves the heatmap's sliders."""
    return run_sync(lambda: _run(url, sessions, ramp, tuple(think), burst, seed, timeout, pids, warmup, settle,
                                 target or url, query, script, live, live_student, solo, watch))


def run_spawned(app: str, replicas: int, env: dict[str, str], **load) -> Report:
    """`replicas` servers of `app` of their own; with more than one, behind Debian's nginx with deploy/nginx.conf
    (sticky sessions), each warmed up directly (through the proxy a warm-up session lands on one replica only). The
    app starts as the image starts it (serve.py) and the class arrives once it reports ready, as behind compose's
    health check."""
    serve = app == "app"
    with contextlib.ExitStack() as stack:
        servers = [stack.enter_context(spawn(APPS[app], env=env, session_ttl=SESSION_TTL, serve=serve))
                   for _ in range(replicas)]
        for server in servers if serve else ():
            server.wait_ready()
        pids = [s.pid for s in servers]
        if replicas == 1:
            url, target = servers[0].url, f"{app} (spawned, pid {pids[0]}, {servers[0].url})"
        else:

            proxy = Proxy([s.addr for s in servers])
            stack.callback(proxy.stop)
            proxy.wait()
            for server in servers:
                run_load(server.url, sessions=1, ramp=0, think=(0, 0), burst=True, warmup=0, settle=None,
                         query=load.get("query", ""), script=load.get("script", "slider"))
            url, target = proxy.url + "/", f"{replicas} x {app} behind nginx (pids {pids}, {proxy.url}/)"
            load["warmup"] = 0
        report = run_load(url, pids=pids, target=target, **load)
        for server in servers:
            if server.proc.poll() is not None:
                report.warmup_errors.append(ErrorRecord(-1, "server", f"exited with {server.proc.returncode}"))
        return report
