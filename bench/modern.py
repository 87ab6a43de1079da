"""The From 2017 to today page's budget (issue 45): its first chart at most 1 s after load on a warm server.

In Chromium, for each part of /modern: a fresh browser context (no cache) opens the page and waits for the part's
first figure to be drawn (a plotly chart's SVG, or the three blocks' diagram images), timed from the navigation's
start. The server is warm (SmolLM2 loaded by a first visit to every part), but each load has a text of its own
(?mtext=, a number added), so the parts that read the model compute their figure, not a cached one. Also the bytes
the websocket brings (budget 1 MB a load).

    .venv/bin/python bench/modern.py [--repeats 5]
"""
import argparse
import statistics
import sys
import time
from pathlib import Path
from urllib.parse import urlencode

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from bench.page_bytes import CHART  # noqa: E402
from harness.record import run  # noqa: E402

PARTS = ("blocks", "positions", "norm", "ffn", "attention", "costs")
DIAGRAM = '[data-testid="stMain"] img[src^="data:image/svg+xml"]'
TEXT = "The animal didn't cross the street because it was too tired, said visitor {k}."
BUDGET_S, BUDGET_BYTES = 1.0, 1_000_000


def first_figure(browser, url: str, ready: str) -> tuple[float, int]:
    """(seconds from the navigation to the first figure drawn, websocket bytes received by then and 1 s after)."""
    context = browser.new_context(viewport={"width": 1280, "height": 720})
    page = context.new_page()
    received = [0]
    page.on("websocket", lambda ws: ws.on("framereceived", lambda p: received.__setitem__(
        0, received[0] + len(p if isinstance(p, bytes) else p.encode()))))
    try:
        start = time.perf_counter()
        page.goto(url)
        page.wait_for_selector(ready, state="visible", timeout=120_000)
        seconds = time.perf_counter() - start
        page.wait_for_timeout(1000)
        return seconds, received[0]
    finally:
        context.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    from harness.servers import chromium, spawn  # noqa: PLC0415

    print(f"# {time.strftime('%Y-%m-%d %H:%M')}, /modern: the first figure after load, warm server "
          f"({args.repeats} loads a part, each with its own text)\n")
    print("| part | first figure, median (s) | max (s) | MB a load |\n|---|---:|---:|---:|")
    with spawn(ROOT / "app.py", session_ttl=None) as server, chromium() as browser:
        for part in PARTS:  # warm: the model loaded, plotly.js and the fonts in the server's caches
            first_figure(browser, f"{server.url}modern?{urlencode({'part': part})}",
                         DIAGRAM if part == "blocks" else CHART)
        k = 0
        for part in PARTS:
            seconds, sizes = [], []
            for _ in range(args.repeats):
                k += 1
                query = urlencode({"part": part, "mtext": TEXT.format(k=k)})
                s, size = first_figure(browser, f"{server.url}modern?{query}", DIAGRAM if part == "blocks" else CHART)
                seconds.append(s)
                sizes.append(size)
            over = " (over 1 s)" if statistics.median(seconds) > BUDGET_S else ""
            heavy = " (over 1 MB)" if max(sizes) > BUDGET_BYTES else ""
            print(f"| {part} | {statistics.median(seconds):.2f}{over} | {max(seconds):.2f} | "
                  f"{max(sizes) / 1e6:.3f}{heavy} |", flush=True)


if __name__ == "__main__":
    run(__file__, main)
