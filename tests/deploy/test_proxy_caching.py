"""What deploy/nginx.conf does for a class's Wi-Fi, on a real nginx (harness/proxy.py) in front of one replica:
text comes back gzip-compressed when the browser asks for it, content-hashed files are kept by browsers for a year
(and by nginx itself, so a class costs the replica each file once), the page and everything else is revalidated,
errors are never kept, the websocket is never compressed, and the security headers stay on every response.

bench/first_visit.py measures what this saves in bytes over the wire (Chromium, a first and a second visit).
"""
import base64
import contextlib
import gzip
import http.client
import os
import re
import time
from pathlib import Path

import pytest

from harness.proxy import Proxy
from harness.servers import spawn

ROOT = Path(__file__).resolve().parents[2]

YEAR = "public, max-age=31536000, immutable"
SECURITY = {"X-Frame-Options": "DENY", "Content-Security-Policy": "frame-ancestors 'none'"}


@pytest.fixture(scope="module")
def proxy():
    with spawn(ROOT / "app.py") as server:
        px = Proxy([server.addr])
        try:
            px.wait()
            yield px
        finally:
            px.stop()


def get(proxy, path, gzip_ok=True, **headers):
    """(status, headers, body as received) of one GET through nginx; Accept-Encoding: gzip unless gzip_ok=False."""
    return proxy.raw_get(path, **({"Accept_Encoding": "gzip, deflate, br"} if gzip_ok else {}), **headers)


@pytest.fixture(scope="module")
def assets(proxy, browser):
    """The paths a first visit in Chromium fetched: the page's own hashed script and stylesheet, and the chart's files
    with their real ?v= tag (Streamlit serves the chart's files once a page has run: the visit does that too)."""
    ctx = browser.new_context()
    fetched = []
    try:
        page = ctx.new_page()
        page.on("requestfinished", lambda r: fetched.append(r.url.removeprefix(proxy.url)))
        page.goto(proxy.url + "/", timeout=90_000)
        page.wait_for_selector(".js-plotly-plot .main-svg", timeout=90_000)
    finally:
        ctx.close()
    html = get(proxy, "/", gzip_ok=False)[2].decode()
    script = re.search(r'src="\.?/?(static/js/[^"]+\.js)"', html)
    style = re.search(r'href="\.?/?(static/css/[^"]+\.css)"', html)
    tag = next((re.search(r"\?v=([0-9a-f]+)$", p) for p in fetched if "/plotly.min.js?v=" in p), None)
    assert script and style and tag, (html[:800], fetched)
    return {"js": "/" + script.group(1), "css": "/" + style.group(1), "tag": tag.group(1), "fetched": fetched}


def log_lines(proxy, path, count):
    """nginx's access-log lines of GET `path`, once nginx has written `count` of them (just after each answer)."""
    deadline = time.time() + 10
    while True:
        lines = [line for line in proxy.access_log.read_text(errors="replace").splitlines()
                 if f'"GET {path} ' in line]
        if len(lines) >= count or time.time() > deadline:
            return lines
        time.sleep(0.1)


def test_text_is_compressed_when_asked_and_only_then(proxy, assets):
    paths = ["/", assets["js"], assets["css"], f"/component/views.charts.mounted.static/theme.json?v={assets['tag']}",
             f"/component/views.charts.mounted.static/chart.js?v={assets['tag']}"]
    for path in paths:
        status, headers, body = get(proxy, path)
        plain_status, plain_headers, plain = get(proxy, path, gzip_ok=False)
        assert status == plain_status == 200, (path, status, plain_status)
        assert headers["Content-Encoding"] == "gzip", (path, dict(headers))
        assert "Accept-Encoding" in headers.get("Vary", ""), (path, dict(headers))
        assert gzip.decompress(body) == plain, path
        assert len(body) < len(plain) / 2, (path, len(body), len(plain))  # JavaScript and JSON compress 3-5x
        assert "Content-Encoding" not in plain_headers, (path, dict(plain_headers))
    # A woff2 font is compressed already: passed as it is, and kept a year (its name is hashed).
    fonts = [p for p in assets["fetched"] if p.startswith("/static/media/") and p.endswith(".woff2")]
    assert fonts, assets["fetched"]
    status, headers, _ = get(proxy, fonts[0])
    assert status == 200 and "Content-Encoding" not in headers and headers["Cache-Control"] == YEAR, dict(headers)


def test_hashed_files_are_kept_a_year_the_rest_revalidated(proxy, assets):
    hashed = [assets["js"], assets["css"], f"/component/views.charts.mounted.plotly/plotly.min.js?v={assets['tag']}",
              f"/component/views.charts.mounted.static/theme.json?v={assets['tag']}"]
    revalidated = ["/", "/_stcore/health", "/_stcore/host-config", "/favicon.png",
                   "/component/views.charts.mounted.static/chart.js",      # no tag: not content-hashed
                   "/component/views.charts.mounted.static/chart.js?v=",
                   "/component/views.charts.mounted.static/chart.js?v=latest"]
    for path in hashed + revalidated:
        status, headers, _ = get(proxy, path)
        assert status == 200, (path, status)
        assert headers.get_all("Cache-Control") == [YEAR if path in hashed else "no-cache"], (path, dict(headers))
        for name, value in SECURITY.items():  # the server's own headers are still on every response
            assert headers[name] == value, (path, dict(headers))
    # Under a hashed name, an error is never kept, nor Streamlit's page (what it answers, with 200, for a file it
    # does not have under /static/: a new release's file asked of an old replica); both keep the security headers.
    missing = {f"/component/views.charts.mounted.static/missing.js?v={assets['tag']}": 404,
               "/static/js/missing.ABCDEFGH.js": 200}
    for path, expected in missing.items():
        status, headers, _ = get(proxy, path)
        assert status == expected, (path, status)
        assert headers.get("Cache-Control") in (None, "no-cache"), (path, dict(headers))
        assert all(headers[name] == value for name, value in SECURITY.items()), (path, dict(headers))


def test_hashed_files_come_from_nginx_after_their_first_fetch(proxy, assets):
    path = f"/component/views.charts.mounted.static/heads.js?v={assets['tag']}&fetch=twice"  # a new cache key
    first, second = get(proxy, path), get(proxy, path)
    assert first[0] == second[0] == 200 and first[2] == second[2]
    lines = log_lines(proxy, path, 2)
    assert len(lines) == 2, lines
    assert "cache=MISS" in lines[0] and "upstream=127.0.0.1:" in lines[0], lines
    assert "cache=HIT" in lines[1] and "upstream=- " in lines[1], lines  # no replica asked
    assert second[1]["Content-Encoding"] == "gzip" and "attnviz_route=" in second[1]["Set-Cookie"]
    assert second[1].get_all("Cache-Control") == [YEAR] and second[1]["X-Frame-Options"] == "DENY", dict(second[1])
    # The page, an error and the page given for a missing hashed file are asked of the replica every time.
    for path in ("/?cached=no", f"/component/views.charts.mounted.static/missing.js?v={assets['tag']}&n=2",
                 "/static/js/missing.HGFEDCBA.js"):
        get(proxy, path)
        get(proxy, path)
        lines = log_lines(proxy, path, 2)
        assert len(lines) == 2 and all("upstream=127.0.0.1:" in line for line in lines), lines


def test_the_websocket_is_not_compressed(proxy):
    key = base64.b64encode(os.urandom(16)).decode()
    origin = f"http://127.0.0.1:{proxy.port}"
    conn = http.client.HTTPConnection("127.0.0.1", proxy.port, timeout=30)
    with contextlib.closing(conn):
        conn.putrequest("GET", "/_stcore/stream", skip_host=True, skip_accept_encoding=True)
        for name, value in (("Host", f"127.0.0.1:{proxy.port}"), ("Origin", origin), ("Upgrade", "websocket"),
                            ("Connection", "Upgrade"), ("Sec-WebSocket-Version", "13"), ("Sec-WebSocket-Key", key),
                            ("Sec-WebSocket-Protocol", "streamlit"), ("Accept-Encoding", "gzip")):
            conn.putheader(name, value)
        conn.endheaders()
        resp = conn.getresponse()
        assert resp.status == 101, resp.status
        assert "Content-Encoding" not in resp.headers and "Cache-Control" not in resp.headers, dict(resp.headers)
        assert resp.headers["Upgrade"].lower() == "websocket"
