"""A student's first visit, in bytes over the wire: Chromium opens the default page through nginx with the shipped
deploy/nginx.conf in front of a replica (as compose.yaml runs it: harness/proxy.py), and the same against the bare
server, for comparison.

For each of the two: a first visit (a fresh browser context: empty cache) and a second visit (a new tab in the same
context: warm cache), each waited for until its chart is drawn and the network has been quiet for a while. Bytes come
from Chromium's DevTools protocol: an HTTP response's `encodedDataLength` (headers and body as they crossed the wire,
compressed or not; 0 for one served from the browser's cache), and the websocket's frames (their payload; the
websocket is never compressed by nginx, and Streamlit's own permessage-deflate, if negotiated, is said in the
output). Goals: a first visit through nginx at most 2.5 MB, a warm-cache visit at most 0.3 MB.

    .venv/bin/python bench/first_visit.py [--path ""] [--top 12] [--students 40]
    .venv/bin/python bench/first_visit.py --url http://127.0.0.1:8611/ --pid 1234   # a replica already running

--url: a replica started otherwise, e.g. the built image's own command on the host's network (what compose.yaml's
replicas run): `buildah run --network host $(buildah from localhost/attnviz:latest) -- python serve.py
--server.port 8611 --server.address 127.0.0.1`; --pid: its process, for the CPU columns.
--stack: the whole compose stack, already up (scripts/compose_up.sh: nginx in front of three replicas, at
http://127.0.0.1:8080/), measured through its nginx only: the first student (nginx's cache empty, if the stack is
fresh) and the next; --pid NAME=PID (repeated): processes on the host whose CPU the visits cost, e.g.
nginx=$(podman inspect -f '{{.State.Pid}}' attnviz_nginx_1).

    .venv/bin/python bench/first_visit.py --stack http://127.0.0.1:8080/ [--pid nginx=PID --pid app1=PID ...]
"""
import argparse
import base64
import contextlib
import os
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace
from urllib.parse import urlsplit

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from harness.record import run  # noqa: E402

CHART = ".js-plotly-plot .main-svg"
TIMEOUT = 120_000
QUIET = 2.0  # seconds without a network event: the visit is over
FIRST_GOAL, WARM_GOAL = 2.5e6, 0.3e6
MB = 1e6


@dataclass
class Resource:
    url: str
    kind: str = "?"
    mime: str = ""
    status: int = 0
    encoding: str = ""
    cache_control: str = ""
    wire: int = 0       # encodedDataLength: headers and body over the wire
    body: int = 0       # decoded body bytes
    cached: bool = False
    done: bool = False


def cpu_seconds(pids) -> float:
    """User and system CPU of these processes and their children (nginx's master: its workers), from /proc."""
    total, tick = 0.0, os.sysconf("SC_CLK_TCK")
    for pid in pids:
        children = Path(f"/proc/{pid}/task/{pid}/children")
        family = [pid, *map(int, children.read_text().split())] if children.exists() else [pid]
        for p in family:
            try:
                fields = Path(f"/proc/{p}/stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue  # gone meanwhile
            total += (int(fields[11]) + int(fields[12])) / tick
    return total


@dataclass
class Visit:
    resources: dict = field(default_factory=dict)
    cpu: dict = field(default_factory=dict)  # CPU seconds each watched process spent during the visit
    ws_in: int = 0
    ws_out: int = 0
    ws_frames: int = 0
    ws_extensions: str = ""

    @property
    def http_wire(self) -> int:
        return sum(r.wire for r in self.resources.values())

    @property
    def http_body(self) -> int:
        return sum(r.body for r in self.resources.values())

    @property
    def wire(self) -> int:
        return self.http_wire + self.ws_in + self.ws_out


def record(page, url: str, watched: dict) -> Visit:
    """Open `url` in `page` with the DevTools protocol's Network domain recording; wait for the chart and quiet.
    watched: {name: pid} whose CPU time the visit costs."""
    visit, last = Visit(), [time.monotonic()]
    before = {name: cpu_seconds([pid]) for name, pid in watched.items()}
    cdp = page.context.new_cdp_session(page)

    def res(params) -> Resource:
        rid = params["requestId"]
        last[0] = time.monotonic()
        return visit.resources.setdefault(rid, Resource(url=""))

    def on_request(p):
        r = res(p)
        r.url, r.kind = p["request"]["url"], p.get("type", "?")

    def on_response(p):
        r, response = res(p), p["response"]
        headers = {k.lower(): v for k, v in response.get("headers", {}).items()}
        r.url, r.kind, r.mime, r.status = response["url"], p.get("type", r.kind), response.get("mimeType", ""), \
            response.get("status", 0)
        r.encoding, r.cache_control = headers.get("content-encoding", ""), headers.get("cache-control", "")
        r.cached = r.cached or response.get("fromDiskCache", False) or response.get("fromPrefetchCache", False)

    def on_data(p):
        res(p).body += p.get("dataLength", 0)

    def on_finished(p):
        r = res(p)
        r.wire, r.done = int(p.get("encodedDataLength", 0)), True

    def on_cached(p):
        res(p).cached = True

    def on_ws_handshake(p):
        last[0] = time.monotonic()
        headers = {k.lower(): v for k, v in p["response"].get("headers", {}).items()}
        visit.ws_extensions = headers.get("sec-websocket-extensions", "")

    def frame_bytes(p) -> int:
        f = p["response"]
        data = f.get("payloadData", "")
        return len(base64.b64decode(data)) if f.get("opcode") == 2 else len(data.encode())

    def on_ws_in(p):
        last[0] = time.monotonic()
        visit.ws_in += frame_bytes(p)
        visit.ws_frames += 1

    def on_ws_out(p):
        last[0] = time.monotonic()
        visit.ws_out += frame_bytes(p)

    for event, handler in (("Network.requestWillBeSent", on_request), ("Network.responseReceived", on_response),
                           ("Network.dataReceived", on_data), ("Network.loadingFinished", on_finished),
                           ("Network.requestServedFromCache", on_cached),
                           ("Network.webSocketHandshakeResponseReceived", on_ws_handshake),
                           ("Network.webSocketFrameReceived", on_ws_in), ("Network.webSocketFrameSent", on_ws_out)):
        cdp.on(event, handler)
    cdp.send("Network.enable")
    page.goto(url, timeout=TIMEOUT)
    page.wait_for_selector(CHART, timeout=TIMEOUT)
    deadline = time.monotonic() + 60
    while time.monotonic() - last[0] < QUIET and time.monotonic() < deadline:
        page.wait_for_timeout(200)
    cdp.detach()
    visit.cpu = {name: cpu_seconds([pid]) - before[name] for name, pid in watched.items()}
    return visit


def short(url: str) -> str:
    path = url.split("://", 1)[-1].partition("/")[2]
    return "/" + (path if len(path) <= 60 else path[:28] + "..." + path[-29:])


def report(name: str, first: Visit, warm: Visit, top: int) -> None:
    print(f"\n### {name}\n")
    names = list(first.cpu)
    print("| visit | requests | from cache | HTTP over the wire | HTTP bodies (decoded) | websocket in + out | "
          "total over the wire |" + "".join(f" CPU: {n} |" for n in names))
    print("|---|---:|---:|---:|---:|---:|---:|" + "---:|" * len(names))
    for label, v in (("first (empty cache)", first), ("second (warm cache)", warm)):
        cached = sum(1 for r in v.resources.values() if r.cached)
        print(f"| {label} | {len(v.resources)} | {cached} | {v.http_wire / MB:.3f} MB | {v.http_body / MB:.3f} MB | "
              f"{(v.ws_in + v.ws_out) / MB:.3f} MB | **{v.wire / MB:.3f} MB** |"
              + "".join(f" {v.cpu[n]:.2f} s |" for n in names))
    print(f"\nwebsocket: {first.ws_frames} frames in on the first visit; extensions "
          f"`{first.ws_extensions or 'none'}` (frame payloads counted as sent)\n")
    if not top:
        return
    print(f"First visit, top {top} by bytes over the wire:\n")
    print("| resource | type | over the wire | body | Content-Encoding | Cache-Control |")
    print("|---|---|---:|---:|---|---|")
    for r in sorted(first.resources.values(), key=lambda r: -r.wire)[:top]:
        print(f"| `{short(r.url)}` | {r.kind} | {r.wire / 1e3:,.1f} KB | {r.body / 1e3:,.1f} KB | "
              f"{r.encoding or '-'} | {r.cache_control or '-'} |")
    fetched = sorted((r for r in warm.resources.values() if r.wire), key=lambda r: -r.wire)
    print("\nSecond visit, what still crossed the wire:\n")
    print("| resource | status | over the wire | Cache-Control |")
    print("|---|---:|---:|---|")
    for r in fetched[:top]:
        print(f"| `{short(r.url)}` | {r.status} | {r.wire / 1e3:,.1f} KB | {r.cache_control or '-'} |")


def visits(browser, url: str, watched: dict) -> tuple[Visit, Visit]:
    ctx = browser.new_context(viewport={"width": 1400, "height": 1000})
    try:
        page = ctx.new_page()
        first = record(page, url, watched)
        page.close()
        warm = record(ctx.new_page(), url, watched)
        return first, warm
    finally:
        ctx.close()


def main() -> int:
    from harness.proxy import Proxy
    from harness.servers import chromium, spawn

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--path", default="", help="the page's path, e.g. softmax (default: the default page)")
    ap.add_argument("--top", type=int, default=12, help="resources listed per visit")
    ap.add_argument("--students", type=int, default=40, help="a class arriving at once, for the Wi-Fi's bill")
    ap.add_argument("--url", help="a replica already running (default: `streamlit run app.py` started here)")
    ap.add_argument("--pid", action="append", default=[],
                    help="with --url: the replica's process, for its CPU; with --stack: NAME=PID, repeated")
    ap.add_argument("--stack", help="a running compose stack's nginx (scripts/compose_up.sh): measured through it only")
    args = ap.parse_args()
    if args.stack:
        return stack(args)
    args.pid = int(args.pid[0]) if args.pid else None
    replica = (contextlib.nullcontext(SimpleNamespace(url=args.url.rstrip("/") + "/", pid=args.pid)) if args.url
               else spawn(ROOT / "app.py", session_ttl=None))
    with replica as server:
        proxy = Proxy([urlsplit(server.url).netloc])
        try:
            proxy.wait()
            with chromium() as browser:
                watched = {"replica": server.pid, "nginx": proxy.proc.pid} if server.pid else {"nginx": proxy.proc.pid}
                # The first visit through nginx, measured: the replica's first page run is in it, and nginx's
                # cache of hashed files (if the config has one) starts empty. The next student's comes after it.
                results = {"through nginx, first student": visits(browser, f"{proxy.url}/{args.path}", watched),
                           "bare server": visits(browser, server.url + args.path,
                                                 {"replica": server.pid} if server.pid else {}),
                           "through nginx (deploy/nginx.conf)": visits(browser, f"{proxy.url}/{args.path}",
                                                                       watched)}
        finally:
            proxy.stop()
    where = f"the replica at {args.url}" if args.url else "one replica (`streamlit run app.py`)"
    print(f"Default page{' /' + args.path if args.path else ''}: {where}, Chromium "
          "(a fresh context per pair of visits), bytes from the DevTools protocol.")
    for name, (first, warm) in results.items():
        report(name, first, warm, args.top if name != "through nginx, first student" else 0)
    first, warm = results["through nginx (deploy/nginx.conf)"]
    bare = results["bare server"][0]
    summary(first, warm, bare, results["bare server"][1], args.students)
    return 0


def stack(args) -> int:
    """--stack: the first student and the next through a running stack's nginx."""
    from harness.servers import chromium

    watched = {name: int(pid) for name, pid in (kv.split("=", 1) for kv in args.pid)}
    with chromium() as browser:
        results = {f"through the stack, {who}": visits(browser, args.stack.rstrip("/") + "/" + args.path, watched)
                   for who in ("first student", "the next student")}
    print(f"Default page{' /' + args.path if args.path else ''}: the compose stack at {args.stack}, Chromium "
          "(a fresh context per pair of visits), bytes from the DevTools protocol.")
    for name, (first, warm) in results.items():
        report(name, first, warm, args.top if name.endswith("next student") else 0)
    (first, _), (later, warm) = results.values()
    summary(later, warm, None, None, args.students, first_student=first)
    return 0


def summary(first: Visit, warm: Visit, bare: Visit | None, bare_warm: Visit | None, students: int,
            first_student: Visit | None = None) -> None:
    """The table against the goals (first_student too: nginx's cache was empty), the first visit by part."""
    def mb(v: Visit | None, digits: int = 2, times: int = 1) -> str:
        return "-" if v is None else f"{times * v.wire / MB:.{digits}f} MB"

    goal = f"{FIRST_GOAL / MB:.1f} MB"
    print("\n### Summary\n\n| | bare server | through nginx | goal |\n|---|---:|---:|---:|")
    if first_student is not None:
        print(f"| the first student's visit (nginx's cache empty) | - | {mb(first_student)} | {goal} |")
    print(f"| first visit | {mb(bare)} | {mb(first)} | {goal} |")
    print(f"| warm-cache visit | {mb(bare_warm)} | {mb(warm)} | {WARM_GOAL / MB:.1f} MB |")
    print(f"| {students} students' first visits | {mb(bare, 0, students)} | {mb(first, 0, students)} | |")
    parts = {"plotly.js": 0, "fonts (woff2)": 0, "Streamlit's JavaScript and CSS": 0, "the rest": 0}
    for r in first.resources.values():
        name = ("plotly.js" if "/plotly" in r.url else "fonts (woff2)" if r.url.endswith(".woff2")
                else "Streamlit's JavaScript and CSS" if "/static/" in r.url else "the rest")
        parts[name] += r.wire
    parts["the rest"] += first.ws_in + first.ws_out
    print("\nThe first visit through nginx, by part: " + ", ".join(f"{k} {v / MB:.2f} MB" for k, v in parts.items()))
    met = max(first.wire, (first_student or first).wire) <= FIRST_GOAL and warm.wire <= WARM_GOAL
    print(f"\nGoals through nginx: first visit {first.wire / MB:.2f} MB (<= 2.5), warm {warm.wire / MB:.3f} MB "
          f"(<= 0.3): {'met' if met else 'NOT met'}")

if __name__ == "__main__":
    sys.exit(run(__file__, main))
