"""The research views (issue 21) in real Chromium: time to the first chart and bytes sent, at 128 and 512 tokens,
against the heatmap page in the same run; and what a visitor opening them does to another visitor's slider.

1. For each view and length, a fresh browser context opens the page with a text no page has run yet ("cold": the
   forward pass and the view's own computation included), then again ("warm": both cached). Time to the first chart
   is from navigation until a plotly chart is drawn (`.js-plotly-plot .main-svg`); bytes are the websocket payload
   the browser received until the page settled (bench/page_bytes.py's rule: the server reported a finished run and
   no frame came for --quiet s). The heatmap page, measured the same way in the same run, is the reference: the
   ratio columns are view / heatmap.
2. With --busy: the heatmap page's head slider is moved (bench/repaint.py: key press to painted chart) while a
   second Chromium opens one view again and again with a new 512-token text each time (cold every time); the
   medians beside each view are compared with the medians beside a user looping the heatmap page itself.

    .venv/bin/python bench/research_views.py [--views lines atlas] [--lengths 128 512] [--busy] [--moves 12]
"""
import argparse
import contextlib
import statistics
import sys
import time
from pathlib import Path
from urllib.parse import urlencode

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from bench.page_bytes import kind_of  # noqa: E402
from bench.repaint import busy_user, repaint_times  # noqa: E402
from harness.record import run  # noqa: E402
from harness.servers import chromium, spawn  # noqa: E402
from harness.texts import WORDS, sentence  # noqa: E402

CHART = ".js-plotly-plot .main-svg"
REFERENCE = "heatmap"


def _two(text: str) -> dict:
    """/compare's pair: the text and the same text with its first word changed (the same number of tokens)."""
    first, _, rest = text.partition(" ")
    return {"text": text, "text2": f"{'dog' if first != 'dog' else 'cat'} {rest}"}


# what each view is given: its text of n tokens in its own parameters (the views read ?text= unless said here)
QUERY = {
    "heatmap": lambda text: {"text": text},
    "lines": lambda text: {"text": text},
    "neurons": lambda text: {"text": text},
    "atlas": lambda text: {"text": text},
    "rollout": lambda text: {"text": text},
    "embeddings": lambda text: {"sents": "\n".join([text, "a cat sat on the mat", "the weather is nice today"])},
    "compare": _two,
    "lens": lambda text: {"part": "lens"},  # the translator reads at most its own positions: its default source
}
PATH = {"heatmap": "", "lens": "translate"}
VIEWS = [v for v in QUERY if v != REFERENCE]


def over(sent: int) -> str:
    """The issue's byte budget at 512 tokens: at most 1 MB where possible, never more than 3 MB."""
    return " (over 3 MB)" if sent > 3e6 else " (over 1 MB)" if sent > 1e6 else ""


def text_of(tokens: int, n: int) -> str:
    """A text of `tokens` tokens no earlier visit has run: its first word is the n-th of a list of one-token words."""
    return f"{WORDS[n % len(WORDS)]} {n} " + sentence(tokens - 2)


def url_of(server: str, view: str, text: str) -> str:
    return f"{server}/{PATH.get(view, view)}?{urlencode(QUERY[view](text))}"


def first_chart(browser, url: str, quiet: float) -> tuple[float, int]:
    """(s from navigation to the first chart drawn, bytes received until settled) for one visit in a fresh context."""
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = context.new_page()
    received = {"bytes": 0, "finished": False, "last": time.perf_counter()}

    def on_frame(payload) -> None:
        data = payload if isinstance(payload, bytes) else payload.encode()
        received["bytes"] += len(data)
        if isinstance(payload, bytes) and kind_of(data) == "script_finished":
            received["finished"] = True
        received["last"] = time.perf_counter()

    page.on("websocket", lambda ws: ws.on("framereceived", on_frame))
    try:
        start = time.perf_counter()
        page.goto(url)
        page.wait_for_selector(CHART, timeout=600_000)
        drawn = time.perf_counter() - start
        while not received["finished"] or time.perf_counter() - received["last"] < quiet:
            page.wait_for_timeout(100)
    finally:
        context.close()
    return drawn, received["bytes"]


def loop_view(url_for) -> None:
    """The busy user: url_for(n) opened again and again (a new text each time), until killed."""
    with chromium() as browser:
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        n = 0
        while True:
            n += 1
            page.goto(url_for(n))
            with contextlib.suppress(Exception):
                page.wait_for_selector(CHART, timeout=600_000)
            page.wait_for_timeout(200)


def busy(server: str, view: str):
    """The busy user looping `view` (bench/repaint.py's busy_user, running this script's --loop)."""
    return busy_user(server, [sys.executable, __file__, "--loop", server, "--views", view])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--views", nargs="+", default=VIEWS, choices=list(QUERY))
    parser.add_argument("--lengths", nargs="*", type=int, default=[128, 512], help="none: only --busy")
    parser.add_argument("--quiet", type=float, default=2.0)
    parser.add_argument("--busy", action="store_true", help="also: a slider beside a user looping each view")
    parser.add_argument("--moves", type=int, default=12)
    parser.add_argument("--loop", help=argparse.SUPPRESS)  # internal: the busy user against this server
    args = parser.parse_args()
    if args.loop:
        return loop_view(lambda n: url_of(args.loop, args.views[0], text_of(512, 1000 + n)))
    print(f"# {time.strftime('%Y-%m-%d %H:%M')}, all-MiniLM-L6-v2 (the lens: the translator, its default source), "
          "MB = 10^6 bytes, s = seconds\n")
    print("| view | tokens | cold: first chart (s) | warm: first chart (s) | MB sent (cold) | cold / heatmap | "
          "MB / heatmap |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    with spawn(ROOT / "app.py", session_ttl=None) as server, chromium() as browser:
        url = server.url.rstrip("/")
        first_chart(browser, url_of(url, REFERENCE, text_of(16, 0)), args.quiet)  # the model loads, the pass compiles
        n = 1
        for tokens in args.lengths:
            reference = None
            for view in [REFERENCE, *[v for v in args.views if v != REFERENCE]]:
                n += 1
                target = url_of(url, view, text_of(tokens, n))
                cold = first_chart(browser, target, args.quiet)
                warm = first_chart(browser, target, args.quiet)
                reference = reference or cold
                print(f"| {view} | {tokens} | {cold[0]:.2f} | {warm[0]:.2f} | {cold[1] / 1e6:.3f}{over(cold[1])} | "
                      f"{cold[0] / reference[0]:.2f} | {cold[1] / reference[1]:.2f} |", flush=True)
        if not args.busy:
            return
        print("\n| the other user loops (512 tokens, new text each time) | head move on the heatmap (64 tokens, a "
              "rerun): median (ms) | p75 (ms) | max (ms) |")
        print("|---|---:|---:|---:|")
        # 64 tokens: too many for the maps to go with the page (views/charts/head_chart.py), so each head move is a
        # rerun on the server, where the other user's work competes; at head 0: repaint_times moves between heads 0 and
        # 1
        heatmap = f"{url_of(url, REFERENCE, sentence(64))}&layer=0&head=0"
        repaint_times(browser, heatmap, 2)
        for view in [None, REFERENCE, *[v for v in args.views if v != REFERENCE]]:
            with busy(url, view) if view else contextlib.nullcontext():
                times = repaint_times(browser, heatmap, args.moves)
            q = statistics.quantiles(times, n=4)
            print(f"| {view or 'nobody'} | {statistics.median(times):.0f} | {q[2]:.0f} | {max(times):.0f} |",
                  flush=True)


if __name__ == "__main__":
    run(__file__, main)
