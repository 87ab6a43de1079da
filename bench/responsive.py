"""Big pages in a real browser: does the page stay responsive at 512 tokens with a bert-base-sized model?

For each page (all-heads and the heatmap by default), in Debian's Chromium against a running server:
the time until the chart is drawn (forward pass included on the first visit), the browser's long tasks
(main thread busy > 50 ms) while it loads, then a head-slider move by keyboard, N times: seconds until the
chart shows the new head, and the longest long task during the moves.

    .venv/bin/python bench/responsive.py [--tokens 512] [--moves 5] [--pages all-heads heatmap]
"""
import argparse
import os
import statistics
import sys
import time
from pathlib import Path
from urllib.parse import urlencode

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from bench.repaint import head_slider  # noqa: E402
from harness.record import run  # noqa: E402
from harness.servers import chromium, spawn  # noqa: E402

BERT_BASE = {"model": "random", "d_model": "768", "heads": "12", "layers": "12", "d_ff": "3072"}
CHART = ".js-plotly-plot .main-svg"
LONG_TASKS = """() => { window.__long = []; new PerformanceObserver(list => {
    for (const e of list.getEntries()) window.__long.push(e.duration); }).observe({type: 'longtask', buffered: true});
    }"""


def text_of(tokens: int) -> str:
    return " ".join(["word"] * (tokens - 2))  # [CLS] + n x "word" + [SEP]


def measure(browser, url: str, path: str, tokens: int, moves: int) -> dict:
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = context.new_page()
    start = time.perf_counter()
    page.goto(f"{url}/{path}?{urlencode({**BERT_BASE, 'text': text_of(tokens)})}")
    page.wait_for_selector(CHART, timeout=600_000)
    page.wait_for_selector(".gtitle:has-text('Layer 0, head 0')", timeout=600_000)
    drawn = time.perf_counter() - start
    page.evaluate(LONG_TASKS)
    page.wait_for_timeout(2000)
    load_tasks = page.evaluate("() => window.__long.splice(0)")
    # Streamlit's at 512 tokens; the chart's own for a short text (views/charts/head_chart.py)
    thumb = head_slider(page)
    times = []
    for head in range(1, moves + 1):
        start = time.perf_counter()
        thumb.press("ArrowRight")
        page.wait_for_selector(f".gtitle:has-text('Layer 0, head {head}')", timeout=120_000)
        times.append(time.perf_counter() - start)
        page.wait_for_timeout(300)
    move_tasks = page.evaluate("() => window.__long.splice(0)")
    context.close()
    return {"drawn": drawn, "load_long_ms": sum(load_tasks), "load_max_ms": max(load_tasks, default=0),
            "move_s": statistics.median(times), "move_max_s": max(times),
            "move_max_task_ms": max(move_tasks, default=0)}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--tokens", type=int, default=512)
    parser.add_argument("--moves", type=int, default=5)
    parser.add_argument("--pages", nargs="+", default=["all-heads", ""])
    args = parser.parse_args()
    with spawn(ROOT / "app.py", session_ttl=None) as server:
        url = server.url.rstrip("/")
        print(f"# {time.strftime('%Y-%m-%d')}, {os.cpu_count()} cores, bert-base-sized random model, "
              f"{args.tokens} tokens, {args.moves} head moves\n")
        print("| page | visit | chart drawn (s) | long tasks while loading (ms, sum / max) | head move to new chart "
              "(s, median / max) | longest task during moves (ms) |")
        print("|---|---|---:|---:|---:|---:|")
        with chromium() as browser:
            for path in args.pages:
                for visit in ("cold", "warm"):
                    r = measure(browser, url, path, args.tokens, args.moves)
                    print(f"| {path or 'heatmap'} | {visit} | {r['drawn']:.2f} | {r['load_long_ms']:.0f} / "
                          f"{r['load_max_ms']:.0f} | {r['move_s']:.2f} / {r['move_max_s']:.2f} | "
                          f"{r['move_max_task_ms']:.0f} |", flush=True)


if __name__ == "__main__":
    run(__file__, main)
