"""The compose file's nginx config, for real: three `streamlit run app.py` replicas behind Debian's
nginx on loopback, a real browser (Debian's Chromium via Playwright) through the proxy.

nginx runs with deploy/nginx.conf itself (copied byte for byte into a temporary prefix, because
nginx resolves `include` next to the config file, see bench/proxy.py). Which replica served what is read from nginx's access log (the config's own `routed` format:
`upstream=$upstream_addr route=$route_key`), where a browser context's route key is its
`attnviz_route` cookie.
"""
import os
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from bench.proxy import Proxy
from bench.servers import chromium, free_port

ROOT = Path(__file__).resolve().parents[2]
CHART = ".js-plotly-plot .main-svg"
TIMEOUT = 90_000
REPLICAS = 3
COOKIE = "attnviz_route"




def _wait_http(url: str, procs, what: str, seconds: float = 90) -> None:
    deadline = time.time() + seconds
    while time.time() < deadline:
        for proc, log in procs:
            if proc.poll() is not None:
                pytest.fail(f"{what} exited with {proc.returncode}: " + Path(log).read_text(errors="replace")[-2000:])
        try:
            urllib.request.urlopen(url, timeout=2).read()
            return
        except OSError:
            time.sleep(0.3)
    pytest.fail(f"{what} did not answer {url} in {seconds} s")


class Replica:
    def __init__(self, port: int, log: Path):
        self.port, self.log = port, log
        self.addr = f"127.0.0.1:{port}"
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "streamlit", "run", "app.py", "--server.port", str(port),
             "--server.address", "127.0.0.1", "--server.headless", "true"],
            cwd=ROOT, stdout=log.open("wb"), stderr=subprocess.STDOUT, env={**os.environ, "HF_HUB_OFFLINE": "1"})

    @property
    def alive(self) -> bool:
        return self.proc.poll() is None

    def stop(self, sig=signal.SIGTERM) -> None:
        if self.alive:
            self.proc.send_signal(sig)
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


@pytest.fixture(scope="module")
def replicas(tmp_path_factory):
    logs = tmp_path_factory.mktemp("replicas")
    reps = [Replica(free_port(), logs / f"app{i + 1}.log") for i in range(REPLICAS)]
    try:
        for r in reps:
            _wait_http(f"http://{r.addr}/_stcore/health", [(r.proc, r.log)], f"streamlit on {r.addr}")
        yield reps
    finally:
        for r in reps:
            r.stop()


@pytest.fixture(scope="module")
def proxy(replicas):
    try:
        px = Proxy([r.addr for r in replicas])
    except FileNotFoundError as e:
        pytest.fail(str(e))
    try:
        _wait_http(px.url + "/_stcore/health", [(px.proc, px.error_log)], "nginx", seconds=30)
        yield px
    finally:
        px.stop()


@pytest.fixture(scope="module")
def browser():
    """Module scope (not the e2e session's): Playwright's sync API allows one instance at a time."""
    try:
        with chromium() as b:
            yield b
    except FileNotFoundError as e:
        pytest.fail(str(e))


def open_session(browser, proxy, path="", cookie=None):
    """A new browser context (a new student) opens a page through the proxy and waits for its chart.
    Returns (route key, errors); the context is closed, so nginx has logged its websocket."""
    ctx = browser.new_context(viewport={"width": 1200, "height": 900})
    if cookie:
        ctx.add_cookies([{"name": COOKIE, "value": cookie, "url": proxy.url}])
    page = ctx.new_page()
    errors = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    try:
        page.goto(f"{proxy.url}/{path}", timeout=TIMEOUT)
        page.wait_for_selector(CHART, timeout=TIMEOUT)
        assert page.locator('[data-testid="stException"]').count() == 0
        route = {c["name"]: c["value"] for c in ctx.cookies()}.get(COOKIE)
        assert route, "the proxy did not pin the browser with its cookie"
    finally:
        ctx.close()
    return route, errors


def session_entries(proxy, route, seconds=10):
    """The access-log lines of one route key, once its websocket (logged when it closes) is there."""
    deadline = time.time() + seconds
    while True:
        entries = proxy.of_route(route)
        if any(e["path"].startswith("/_stcore/stream") for e in entries) or time.time() > deadline:
            return entries
        time.sleep(0.2)


def test_a_session_stays_on_its_replica(browser, proxy, replicas):
    route, errors = open_session(browser, proxy)
    assert not errors, errors
    entries = session_entries(proxy, route)
    ws = [e for e in entries if e["path"].startswith("/_stcore/stream")]
    assert ws and all(e["status"] == "101" for e in ws), ws  # the websocket went through the proxy
    assert len(entries) >= 5, entries                     # the page, its scripts, health, the websocket
    served = {e["served_by"] for e in entries}
    assert len(served) == 1, f"one session, several replicas: {entries}"
    assert served <= {r.addr for r in replicas}
    assert all(e["status"] in {"101", "200", "304"} for e in entries), entries


def test_new_sessions_spread_over_replicas(browser, proxy, replicas):
    seen = {}
    for _ in range(8):  # random keys over 3 replicas: all 8 on one has probability 3/3^8 < 0.1%
        route, errors = open_session(browser, proxy)
        assert not errors, errors
        served = {e["served_by"] for e in session_entries(proxy, route)}
        assert len(served) == 1, served
        seen[route] = served.pop()
        if len(seen) >= 3 and len(set(seen.values())) >= 2:
            break
    assert len(set(seen.values())) >= 2, seen


def test_a_dead_replica_loses_no_new_session(browser, proxy, replicas):
    # The replica that served the most sessions so far, and one of the keys pinned to it.
    by_route = {}
    for e in proxy.entries():
        by_route.setdefault(e["route"], e["served_by"])
    counts = {r.addr: sum(1 for a in by_route.values() if a == r.addr) for r in replicas}
    dead = max(replicas, key=lambda r: counts[r.addr])
    pinned = next(k for k, a in by_route.items() if a == dead.addr)
    dead.stop(signal.SIGKILL)  # a crash, not a goodbye
    live = {r.addr for r in replicas if r.alive}
    assert dead.addr not in live and len(live) == REPLICAS - 1

    # A browser still pinned to the dead replica is moved to a live one, and its page works.
    route, errors = open_session(browser, proxy, cookie=pinned)
    assert route == pinned and not errors, errors
    entries = session_entries(proxy, pinned)
    after = [e for e in entries if e["served_by"] != dead.addr]
    assert after and {e["served_by"] for e in after} <= live, entries
    assert all(e["status"] in {"101", "200", "304"} for e in after), after

    # New students: every request served by a live replica, none failed. (A request whose key
    # hashes to the dead replica may list it in $upstream_addr as a refused first try, before
    # nginx marks it down for fail_timeout; the answer comes from the next replica.)
    refused = 0
    for _ in range(6):
        route, errors = open_session(browser, proxy, path="softmax")
        assert not errors, errors
        entries = session_entries(proxy, route)
        assert entries and any(e["path"].startswith("/_stcore/stream") for e in entries), entries
        assert {e["served_by"] for e in entries} <= live, entries
        assert len({e["served_by"] for e in entries}) == 1, entries  # still sticky
        # (Streamlit's client on /softmax probes /softmax/_stcore/health first: a 404 by design.)
        assert not [e for e in entries if e["status"].startswith("5")], entries
        refused += sum(1 for e in entries if dead.addr in e["tried"])
    print(f"requests that first tried the dead replica and were retried: {refused}")
    assert "upstream prematurely closed" not in proxy.error_log.read_text(errors="replace")
