"""The compose file's nginx config, for real: three `streamlit run app.py` replicas behind Debian's
nginx on loopback, a real browser (Debian's Chromium via Playwright) through the proxy.

nginx runs with deploy/nginx.conf itself (copied byte for byte into a temporary prefix, because
nginx resolves `include` next to the config file, see harness/proxy.py); the replicas, nginx and the
browser are tests/deploy/conftest.py's fixtures. Which replica served what is read from nginx's access
log (the config's own `routed` format: `upstream=$upstream_addr route=$route_key`), where a browser
context's route key is its `attnviz_route` cookie. A content-hashed file (Streamlit's bundles, the chart's files)
may come from nginx's own cache, with no replica asked (upstream `-`): those lines are set aside before a test
looks at which replica served a session (`from_replicas`).
"""
import base64
import http.client
import http.server
import os
import re
import signal
import threading
import time

import pytest

CHART = ".js-plotly-plot .main-svg"
HASHED = re.compile(r"^/(static/(js|css|media)/|component/)")  # what nginx may answer from its cache
TIMEOUT = 90_000
COOKIE = "attnviz_route"


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


def session_entries(proxy, route, seconds=60):
    """The access-log lines of one route key, once its websocket (logged when it closes) is there.
    The deadline only turns a hang into a clear failure: no test goes on without that line."""
    deadline = time.time() + seconds
    while True:
        entries = proxy.of_route(route)
        if any(e["path"].startswith("/_stcore/stream") for e in entries):
            return entries
        if time.time() > deadline:
            pytest.fail(f"nginx logged no websocket for route {route} in {seconds} s: {entries}")
        time.sleep(0.2)


def from_replicas(entries):
    """The lines a replica answered. The others (no upstream) must be hashed files from nginx's cache, answered."""
    cached = [e for e in entries if e["upstream"] == "-"]
    assert all(HASHED.match(e["path"]) and e["status"] in {"200", "304"} for e in cached), cached
    return [e for e in entries if e["upstream"] != "-"]


def replica_trouble(proxy, addr):
    """nginx's error-log lines where a request to the replica at `addr` failed or took it out of the pool."""
    return [line for line in proxy.error_log.read_text(errors="replace").splitlines()
            if f"http://{addr}/" in line and ("reset by peer" in line or "prematurely closed" in line
                                              or "temporarily disabled" in line)]


def test_a_session_stays_on_its_replica(browser, proxy, replicas):
    route, errors = open_session(browser, proxy)
    assert not errors, errors
    entries = session_entries(proxy, route)
    ws = [e for e in entries if e["path"].startswith("/_stcore/stream")]
    assert ws and all(e["status"] == "101" for e in ws), ws  # the websocket went through the proxy
    assert len(entries) >= 5, entries                     # the page, its scripts, health, the websocket
    served = {e["served_by"] for e in from_replicas(entries)}
    assert len(served) == 1, f"one session, several replicas: {entries}"
    assert served <= {r.addr for r in replicas}
    assert all(e["status"] in {"101", "200", "304"} for e in entries), entries


def test_new_sessions_spread_over_replicas(browser, proxy, replicas):
    seen = {}
    for _ in range(8):  # random keys over 3 replicas: all 8 on one has probability 3/3^8 < 0.1%
        route, errors = open_session(browser, proxy)
        assert not errors, errors
        served = {e["served_by"] for e in from_replicas(session_entries(proxy, route))}
        assert len(served) == 1, served
        seen[route] = served.pop()
        if len(seen) >= 3 and len(set(seen.values())) >= 2:
            break
    assert len(set(seen.values())) >= 2, seen


def raw_get(proxy, path, host, **headers):
    """(status, headers, body) of one GET through nginx with exactly this Host header."""
    return proxy.raw_get(path, host, **headers)


def websocket(proxy, host, origin):
    return raw_get(proxy, "/_stcore/stream", host, Origin=origin, Upgrade="websocket", Connection="Upgrade",
                   Sec_WebSocket_Version="13", Sec_WebSocket_Key=base64.b64encode(os.urandom(16)).decode(),
                   Sec_WebSocket_Protocol="streamlit")[0]


def test_a_foreign_host_is_refused_before_any_replica(proxy):
    own = f"127.0.0.1:{proxy.port}"
    assert raw_get(proxy, "/_stcore/health", own)[0] == 200
    assert raw_get(proxy, "/_stcore/health", f"localhost:{proxy.port}")[0] == 200
    def refused():
        return [e for e in proxy.entries() if e["status"] == "421"]

    before = len(refused())
    for host in ("evil.example", f"rebound.evil.example:{proxy.port}", "127.0.0.2"):
        status, _, body = raw_get(proxy, "/", host)
        assert status == 421 and b"does not answer" in body, (host, status, body)
        assert websocket(proxy, host, f"http://{host}") == 421  # a DNS-rebinding page's websocket too
    deadline = time.time() + 30  # nginx writes a request's log line just after its answer
    while len(refused()) < before + 6 and time.time() < deadline:
        time.sleep(0.1)
    assert len(refused()) == before + 6 and {e["upstream"] for e in refused()} == {"-"}, refused()  # no replica
    # Streamlit's own check behind nginx: a websocket from a foreign Origin is refused, its own Origin is not.
    assert websocket(proxy, own, f"http://{own}") == 101
    assert websocket(proxy, own, "http://evil.example") == 403


def test_every_response_forbids_framing(browser, proxy):
    own = f"127.0.0.1:{proxy.port}"
    page = raw_get(proxy, "/", own)
    script = re.search(rb'src="\.?/?(static/js/[^"]+\.js)"', page[2])
    assert script, page[2][:500]
    for status, headers, _ in (page, raw_get(proxy, "/" + script.group(1).decode(), own),
                               raw_get(proxy, "/_stcore/health", own), raw_get(proxy, "/no/such/file.png", own),
                               raw_get(proxy, "/", "evil.example")):
        assert headers["X-Frame-Options"] == "DENY", (status, dict(headers))
        assert headers["Content-Security-Policy"] == "frame-ancestors 'none'", (status, dict(headers))
    # And Chromium obeys: a page on another origin (another port; Chromium keeps pages outside loopback from
    # loopback anyway) that frames the app gets the frame blocked, where without the headers the app loads.
    html = f'<iframe src="{proxy.url}/" width=800 height=600></iframe>'.encode()

    class Framing(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.end_headers()
            self.wfile.write(html)

        def log_message(self, *args):
            pass

    framing = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Framing)
    threading.Thread(target=framing.serve_forever, daemon=True).start()
    ctx = browser.new_context()
    try:
        tab = ctx.new_page()
        with tab.expect_event("requestfailed", lambda r: r.url.startswith(proxy.url), timeout=TIMEOUT) as failed:
            tab.goto(f"http://127.0.0.1:{framing.server_port}/", timeout=TIMEOUT)
        assert failed.value.failure == "net::ERR_BLOCKED_BY_RESPONSE", failed.value.failure
        assert not any(f.url.startswith(proxy.url) for f in tab.frames), [f.url for f in tab.frames]
    finally:
        ctx.close()
        framing.shutdown()


def test_a_dead_replica_loses_no_new_session(browser, proxy, replicas):
    # The replica that served the most sessions so far, and one of the keys pinned to it.
    by_route = {}
    for e in proxy.entries():
        if e["upstream"] != "-":  # not a refused host, nor a file from nginx's cache
            by_route.setdefault(e["route"], e["served_by"])
    counts = {r.addr: sum(1 for a in by_route.values() if a == r.addr) for r in replicas}
    dead = max(replicas, key=lambda r: counts[r.addr])
    pinned = next(k for k, a in by_route.items() if a == dead.addr)
    dead.stop(signal.SIGKILL)  # a crash, not a goodbye
    live = {r.addr for r in replicas if r.alive}
    assert dead.addr not in live and len(live) == len(replicas) - 1

    # A browser still pinned to the dead replica is moved to a live one, and its page works.
    route, errors = open_session(browser, proxy, cookie=pinned)
    assert route == pinned and not errors, errors
    entries = from_replicas(session_entries(proxy, pinned))
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
        entries = from_replicas(session_entries(proxy, route))
        assert entries and any(e["path"].startswith("/_stcore/stream") for e in entries), entries
        assert {e["served_by"] for e in entries} <= live, entries
        assert len({e["served_by"] for e in entries}) == 1, entries  # still sticky
        # (Streamlit's client on /softmax probes /softmax/_stcore/health first: a 404 by design.)
        assert not [e for e in entries if e["status"].startswith("5")], entries
        refused += sum(1 for e in entries if dead.addr in e["tried"])
    print(f"requests that first tried the dead replica and were retried: {refused}")
    # In the whole module, no live replica dropped a request or was taken out of the pool. (Before nginx's
    # upstream keepalive_timeout went under uvicorn's 5 s, a reused idle connection now and then met a
    # reset, and max_fails=1 took a live replica out for 10 s: a session then spanned two replicas.)
    for addr in live:
        assert not replica_trouble(proxy, addr), replica_trouble(proxy, addr)
