"""Bytes each page sends to the browser: websocket frames received by real Chromium for one page load.

For every page of the app (default model, a text of --tokens tokens given in the link), a fresh browser context
opens the page and counts the payload bytes of every websocket frame the browser receives, from navigation
until the page has settled: a plotly chart is drawn, the server has reported a finished script run, and no frame
has arrived for --quiet seconds. Streamlit's static files (JavaScript, fonts) come over HTTP and are not counted:
a real browser caches them. Each frame is also decoded (Streamlit's ForwardMsg) to say what the bytes were:
`--detail` prints them by kind (an element's type, or the message's).

    .venv/bin/python bench/page_bytes.py [--tokens 512] [--pages heatmap masks] [--root ../before] [--detail]

With several --root, each page is measured on each checkout in turn, on servers started side by side.
"""
import argparse
import collections
import contextlib
import sys
import time
from pathlib import Path
from urllib.parse import urlencode

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from harness.record import run  # noqa: E402
from harness.servers import chromium, spawn  # noqa: E402
from harness.texts import sentence  # noqa: E402

PAGES = ["heatmap", "all-heads", "softmax", "steps", "masks", "positional", "architecture", "encoder-decoder", "atlas",
         "rollout"]
CHART = ".js-plotly-plot .main-svg"
BUDGET = 1_000_000  # bytes per page at 512 tokens (issue 17)


def kind_of(payload: bytes) -> str:
    """What a ForwardMsg carries: the element's type for a new element (plotly_chart, markdown, ...), else the
    message's own type (script_finished, page_info_changed, ...)."""
    from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

    msg = ForwardMsg.FromString(payload)
    kind = msg.WhichOneof("type")
    if kind == "delta":
        delta = msg.delta
        what = delta.WhichOneof("type")
        if what == "new_element":
            return delta.new_element.WhichOneof("type")
        return what or "delta"
    return kind or "?"


def load(browser, url: str, quiet: float, ready: str = CHART) -> tuple[int, collections.Counter]:
    """(bytes received, bytes by kind) for one page load in a fresh context; ready: what the page shows once drawn (a
    chart, unless told)."""
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = context.new_page()
    by_kind: collections.Counter = collections.Counter()
    last = [time.perf_counter()]

    def on_frame(payload) -> None:
        data = payload if isinstance(payload, bytes) else payload.encode()
        by_kind[kind_of(data) if isinstance(payload, bytes) else "text frame"] += len(data)
        last[0] = time.perf_counter()

    page.on("websocket", lambda ws: ws.on("framereceived", on_frame))
    try:
        page.goto(url)
        page.wait_for_selector(ready, timeout=600_000)
        while not by_kind["script_finished"] or time.perf_counter() - last[0] < quiet:
            page.wait_for_timeout(100)
    finally:
        context.close()
    return sum(by_kind.values()), by_kind


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tokens", type=int, default=512)
    parser.add_argument("--pages", nargs="+", default=PAGES, choices=PAGES)
    parser.add_argument("--root", nargs="+", type=Path, default=[ROOT], help="checkouts of the app to compare")
    parser.add_argument("--quiet", type=float, default=2.0, help="seconds without a frame that count as settled")
    parser.add_argument("--detail", action="store_true", help="bytes by kind of message, per page")
    args = parser.parse_args()
    query = urlencode({"text": sentence(args.tokens)})
    names = [root.resolve().name for root in args.root]  # "." is this checkout
    print(f"# {time.strftime('%Y-%m-%d %H:%M')}, default model, {args.tokens} tokens, MB = 10^6 bytes\n")
    print("| page | " + " | ".join(f"{n} (MB)" for n in names) + " |")
    print("|---|" + "---:|" * len(names))
    with contextlib.ExitStack() as stack:
        urls = [stack.enter_context(spawn(root / "app.py", session_ttl=None)).url for root in args.root]
        browser = stack.enter_context(chromium())
        for url in urls:  # the first visit loads the model and compiles: not a page's bytes
            load(browser, f"{url}?{query}", args.quiet)
        details = []
        for name in args.pages:
            path = "" if name == "heatmap" else name
            row = [load(browser, f"{url}{path}?{query}", args.quiet) for url in urls]
            cells = [f"{total / 1e6:.3f}" + (" (over 1 MB)" if total > BUDGET else "") for total, _ in row]
            print(f"| {name} | " + " | ".join(cells) + " |", flush=True)
            details.append((name, row))
    if args.detail:
        for name, row in details:
            for root_name, (total, by_kind) in zip(names, row):
                top = ", ".join(f"{k} {v / 1e3:.0f}" for k, v in by_kind.most_common(6))
                print(f"{name} [{root_name}]: {total / 1e3:.0f} KB: {top}")


if __name__ == "__main__":
    run(__file__, main)
