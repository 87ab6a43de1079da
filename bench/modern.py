"""The From 2017 to today page's budget (issue 45): its first chart at most 1 s after load on a warm server.

In Chromium, for each part of /modern: a browser tab opens the page and waits for the part's first figure to be drawn
(a plotly chart's SVG, or the three blocks' diagram images), timed from the navigation's start. Twice: a student's
first visit (a fresh browser context: Streamlit's JavaScript, plotly.js and the fonts fetched), and a visit with the
browser's cache warm (a new tab in a context that has opened the app: what a student moving from page to page gets).
The server is warm (SmolLM2 loaded by a first visit to every part), but each load has a text of its own (?mtext=, a
number added), so the parts that read the model compute their figure, not a cached one. Also the bytes the websocket
brings (budget 1 MB a load).

The reference, in the same run and the same two ways: the plain Streamlit page a user would write, one plotly
heatmap and no model (bench/floor/app.py, its default page): what the framework and the browser cost before any of
ours.

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
from harness.axe import DIAGRAM  # noqa: E402
from harness.record import run  # noqa: E402

PARTS = ("blocks", "positions", "norm", "ffn", "attention", "costs")
BUTTONS = {"positions": "Positions: added or rotated", "norm": "LayerNorm or RMSNorm", "ffn": "ReLU, GELU or SwiGLU",
           "attention": "Grouped-query attention and the cache", "costs": "Parameters and FLOPs"}
TITLES = {"positions": "positions further", "norm": "entering layer", "ffn": "The three activations",
          "attention": "query heads read", "costs": "A block's parameters"}  # in the part's first chart's title
DRAWN = """(title) => [...document.querySelectorAll('[data-testid="stMain"] .js-plotly-plot')].some(
  gd => gd.querySelector('.main-svg') && (gd.querySelector('.gtitle') || {}).textContent?.includes(title))"""
TEXT = "The animal didn't cross the street because it was too tired, said visitor {k}."
BUDGET_S, BUDGET_BYTES = 1.0, 1_000_000


def first_figure(context, url: str, ready: str) -> tuple[float, float, int]:
    """(seconds from the navigation to the first figure drawn, seconds from the page's load event to it, websocket
    bytes received by then and 1 s after), in a new tab of the browser context."""
    page = context.new_page()
    received = [0]
    page.on("websocket", lambda ws: ws.on("framereceived", lambda p: received.__setitem__(
        0, received[0] + len(p if isinstance(p, bytes) else p.encode()))))
    try:
        start = time.perf_counter()
        page.goto(url)
        page.wait_for_selector(ready, state="visible", timeout=120_000)
        seconds = time.perf_counter() - start
        now, loaded = page.evaluate("() => [performance.now(), performance.getEntriesByType('navigation')[0]"
                                    ".loadEventEnd]")
        page.wait_for_timeout(1000)
        return seconds, (now - loaded) / 1e3, received[0]
    finally:
        page.close()


def visits(browser, urls, ready: str) -> dict[str, tuple[list[float], list[float], list[int]]]:
    """{"first visit": (seconds, seconds after the load event, bytes), "cache warm": (...)} over the urls: each first
    visit in a fresh context, the warm ones in one context that has opened the first url once before."""
    out = {"first visit": ([], [], []), "cache warm": ([], [], [])}
    warm = browser.new_context(viewport={"width": 1280, "height": 720})
    try:
        first_figure(warm, urls[0], ready)
        for url in urls:
            fresh = browser.new_context(viewport={"width": 1280, "height": 720})
            try:
                for name, context in (("first visit", fresh), ("cache warm", warm)):
                    for values, value in zip(out[name], first_figure(context, url, ready)):
                        values.append(value)
            finally:
                fresh.close()
    finally:
        warm.close()
    return out


def clicks(browser, url: str, repeats: int) -> dict[str, list[tuple[float, float]]]:
    """{part: [(seconds from the click on its button to its first chart drawn, of which the server's: to the last
    websocket frame before it)]}, in one tab that has the page open (plotly.js loaded), back to the blocks between."""
    context = browser.new_context(viewport={"width": 1280, "height": 720})
    page = context.new_page()
    last = [0.0]
    page.on("websocket", lambda ws: ws.on("framereceived", lambda p: last.__setitem__(0, time.perf_counter())))
    out = {part: [] for part in BUTTONS}
    try:
        page.goto(url)
        page.wait_for_selector(DIAGRAM, state="visible", timeout=120_000)
        for k in range(repeats + 1):  # the first round warms the tab's plotly.js
            for part, label in BUTTONS.items():
                start = time.perf_counter()
                page.get_by_role("radio", name=label, exact=True).click()
                page.wait_for_function(DRAWN, arg=TITLES[part], timeout=120_000)
                drawn = time.perf_counter()
                if k:
                    out[part].append((drawn - start, last[0] - start))
                page.get_by_role("radio", name="Three blocks", exact=True).click()
                page.wait_for_selector(DIAGRAM, state="visible", timeout=120_000)
                page.wait_for_timeout(300)
    finally:
        context.close()
    return out


def row(name: str, measured: dict, budget: bool = True) -> str:
    cells = []
    for seconds, after, _sizes in measured.values():
        over = " (over 1 s)" if budget and statistics.median(after) > BUDGET_S else ""
        cells.append(f"{statistics.median(seconds):.2f} | {statistics.median(after):.2f}{over} | {max(after):.2f}")
    most = max(max(sizes) for _, _, sizes in measured.values())
    return f"| {name} | " + " | ".join(cells) + f" | {most / 1e6:.3f}{' (over 1 MB)' if most > BUDGET_BYTES else ''} |"


def script_runs(repeats: int) -> None:
    """The server's script run (inside Streamlit's ScriptRunner, AppTest) opening each part on a new text, the model
    loaded: what the server spends before the browser draws."""
    from bench.app import SCRIPT_RUNS, time_script_runs  # noqa: PLC0415
    from harness import apptest  # noqa: PLC0415

    time_script_runs()
    for part in PARTS:  # SmolLM2 loaded, the page's modules imported
        apptest.open_page("modern", part=part)
    print("The server's script run opening a part on a text it has not seen (AppTest, SmolLM2 loaded).\n")
    print("| part | median (s) | max (s) |\n|---|---:|---:|")
    for n, part in enumerate(PARTS):
        runs = []
        for k in range(repeats):
            del SCRIPT_RUNS[:]
            at = apptest.open_page("modern", part=part, mtext=TEXT.format(k=1000 + n * 100 + k))
            assert not at.exception, at.exception
            runs.append(sum(SCRIPT_RUNS))
        print(f"| {part} | {statistics.median(runs):.3f} | {max(runs):.3f} |", flush=True)
    print()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    from harness.servers import chromium, spawn  # noqa: PLC0415

    print(f"# {time.strftime('%Y-%m-%d %H:%M')}, /modern: the first figure after load, warm server "
          f"({args.repeats} loads a part and way, each with its own text)\n")
    script_runs(args.repeats)
    print("Seconds to the first figure drawn: from the navigation; then from the page's load event (the budget's "
          "\"after load\"), median and max.\n")
    print("| part | first visit: from navigation | after load | max | cache warm: from navigation | after load | max "
          "| MB a load |\n|---|---:|---:|---:|---:|---:|---:|---:|")
    medians = {}
    with chromium() as browser:
        with spawn(ROOT / "bench" / "floor" / "app.py", session_ttl=None) as floor:
            reference = visits(browser, [f"{floor.url}?{urlencode({'text': TEXT.format(k=k)})}"
                                         for k in range(args.repeats)], CHART)
        with spawn(ROOT / "app.py", session_ttl=None) as server:
            context = browser.new_context()
            for part in PARTS:  # warm: the model loaded, plotly.js and the fonts in the server's caches
                first_figure(context, f"{server.url}modern?{urlencode({'part': part})}", ready(part))  # noqa: B023
            context.close()
            for n, part in enumerate(PARTS):
                urls = [f"{server.url}modern?{urlencode({'part': part, 'mtext': TEXT.format(k=n * 100 + k)})}"
                        for k in range(args.repeats)]
                measured = visits(browser, urls, ready(part))
                medians[part] = statistics.median(measured["cache warm"][1])
                print(row(part, measured), flush=True)
            clicked = clicks(browser, f"{server.url}modern?part=blocks", args.repeats)
    print(row("reference: the plain Streamlit page (bench/floor), one heatmap", reference, budget=False))
    print("\nIn a tab that has the page open: a click on a part's button, to its first chart drawn (the server's "
          "share: to the last websocket frame before it).\n")
    print("| part | click to chart: median (s) | max (s) | the server's share: median (s) |\n|---|---:|---:|---:|")
    for part, times in clicked.items():
        total = [t for t, _ in times]
        over = " (over 1 s)" if statistics.median(total) > BUDGET_S else ""
        print(f"| {part} | {statistics.median(total):.2f}{over} | {max(total):.2f} | "
              f"{statistics.median(s for _, s in times):.2f} |")
    floor_warm = statistics.median(reference["cache warm"][1])
    print("\nCache warm, after load, against the reference: " + ", ".join(f"{part} {m / floor_warm:.2f}x"
                                                            for part, m in medians.items()))


def ready(part: str) -> str:
    return DIAGRAM if part == "blocks" else CHART


if __name__ == "__main__":
    run(__file__, main)
