"""From a key press on the head slider to the repainted chart, in real Chromium: alone, and beside a busy user.

The heatmap page with the default sentence (or --tokens N); the Head slider is focused and ArrowRight or ArrowLeft
pressed (head 0 -> 1 -> 0 ...): the chart's own slider (views/charts/head_chart.py, a short text), else Streamlit's (a
long text, and checkouts from before the chart had its own). In the page, a keydown listener (capture phase) stamps the
press, and a MutationObserver watches the chart's title, which names the head ("Layer 0, head 1"): plotly redraws the
title and the map in the same synchronous Plotly.react call, so the title's new text means the new map is in the DOM.
The observer then waits for the next animation frame and a message posted from it: that runs after the browser has
painted the frame. Repaint time = that moment minus the key press, both on the page's own clock
(performance.now()), so no round trip to the test process is counted.

"beside a busy user": a second Chromium (another process) opens the heatmap again and again with a new 512-token text
each time (a forward pass and a 512 x 512 map each), all the time the moves are measured.

    .venv/bin/python bench/repaint.py [--moves 20] [--rounds 3] [--root ../before .] [--tokens N]

With several --root, each round measures every checkout in turn (alone, then busy), servers side by side.
"""
import argparse
import contextlib
import statistics
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import urlencode

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from harness.record import run  # noqa: E402
from harness.servers import chromium, spawn  # noqa: E402
from harness.texts import WORDS, sentence  # noqa: E402

CHART = ".js-plotly-plot .main-svg"
WATCH = """() => {
  window.__presses = []; window.__paints = [];
  document.addEventListener('keydown', () => window.__presses.push(performance.now()), true);
  let last = document.querySelector('.gtitle')?.textContent;
  new MutationObserver(() => {
    const title = document.querySelector('.gtitle')?.textContent;
    if (title === undefined || title === last) return;
    last = title;
    const seen = performance.now();
    requestAnimationFrame(() => {  // before the paint of the frame that shows it; the message runs after it
      const channel = new MessageChannel();
      channel.port1.onmessage = () => window.__paints.push({title, at: performance.now(), seen});
      channel.port2.postMessage(0);
    });
  }).observe(document.body, {subtree: true, childList: true, characterData: true});
}"""


def head_slider(page):
    """The Head slider: the chart's own (views/charts/head_chart.py), or Streamlit's (the server path, and older
    checkouts)."""
    own = page.locator(".attnviz-heads").get_by_role("slider", name="Head")
    streamlits = page.locator('[data-testid="stSlider"]').filter(has_text="Head").get_by_role("slider")
    return own if own.count() else streamlits


def repaint_times(browser, url: str, moves: int) -> list[float]:
    """ms from each key press to the painted chart of the new head, for `moves` presses on one page."""
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = context.new_page()
    try:
        page.goto(url)
        page.wait_for_selector(".gtitle:has-text('head 0')", timeout=600_000)
        page.wait_for_timeout(1500)  # the first run's last messages
        page.evaluate(WATCH)
        thumb = head_slider(page)
        thumb.focus()
        times = []
        for i in range(moves):
            head = (i + 1) % 2
            thumb.press("ArrowRight" if head else "ArrowLeft")
            title = f"head {head}"
            page.wait_for_function(f"() => window.__paints.some(p => p.title.endsWith({title!r}))", timeout=120_000)
            press, paints = page.evaluate("() => [window.__presses.at(-1), window.__paints.splice(0)]")
            times.append(next(p["at"] for p in paints if p["title"].endswith(title)) - press)
            page.wait_for_timeout(300)  # a student does not press faster than this
        return times
    finally:
        context.close()


def loop_long_texts(url: str) -> None:
    """The busy user: the heatmap with a new 512-token text, again and again, until killed."""
    with chromium() as browser:
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        n = 0
        while True:
            n += 1
            text = f"{WORDS[n % len(WORDS)]} {n} " + sentence(510)  # new every time: a forward pass each time
            page.goto(f"{url}?{urlencode({'text': text})}")
            page.wait_for_selector(CHART, timeout=600_000)
            page.wait_for_timeout(200)


@contextlib.contextmanager
def busy_user(url: str, command: list[str] | None = None):
    """While in the block: a second Chromium (another process) loading pages, by default this script's --loop."""
    proc = subprocess.Popen(command or [sys.executable, __file__, "--loop", url])
    try:
        time.sleep(8)  # its first 512-token page is on its way
        yield
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--moves", type=int, default=20)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--tokens", type=int, default=0, help="the page's text length (0: the default sentence)")
    parser.add_argument("--root", nargs="+", type=Path, default=[ROOT], help="checkouts of the app to compare")
    parser.add_argument("--loop", help=argparse.SUPPRESS)  # internal: run as the busy user against this URL
    args = parser.parse_args()
    if args.loop:
        return loop_long_texts(args.loop)
    # at head 0: the pages open at the showcase head (layer 3, head 1) on the pretrained model
    query = "?" + urlencode({"layer": 0, "head": 0, **({"text": sentence(args.tokens)} if args.tokens else {})})
    results = {(root.resolve().name, busy): [] for root in args.root for busy in (False, True)}
    with contextlib.ExitStack() as stack:
        urls = [stack.enter_context(spawn(root / "app.py", session_ttl=None)).url for root in args.root]
        browser = stack.enter_context(chromium())
        for url in urls:  # model load, first pass, compiled pass
            repaint_times(browser, url + query, 2)
        for _ in range(args.rounds):
            for root, url in zip(args.root, urls):
                results[(root.resolve().name, False)] += repaint_times(browser, url + query, args.moves)
                with busy_user(url):
                    results[(root.resolve().name, True)] += repaint_times(browser, url + query, args.moves)
    print(f"# {time.strftime('%Y-%m-%d %H:%M')}, heatmap page, {args.tokens or 'default'} tokens, "
          f"{args.rounds} rounds x {args.moves} head moves\n")
    print("| checkout | beside | median (ms) | p25 / p75 (ms) | max (ms) |")
    print("|---|---|---:|---:|---:|")
    for (name, busy), times in results.items():
        q = statistics.quantiles(times, n=4)
        print(f"| {name} | {'a user looping 512-token texts' if busy else 'nobody'} | {statistics.median(times):.0f} | "
              f"{q[0]:.0f} / {q[2]:.0f} | {max(times):.0f} |")


if __name__ == "__main__":
    run(__file__, main)
