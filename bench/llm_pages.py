"""SmolLM2 on every page, in Chromium, against a server as a class's replica runs it (serve.py: warmed up): each page
with ?model=smollm2 at its default text, then at 512 tokens (the most a page reads), then the language model page's
parts. Per page: the seconds to its charts, the websocket bytes the browser received (budget: 1 MB), and the server's
RSS and peak (VmHWM: what a pod's memory limit is checked against; budget 1.8 GiB). Before SmolLM2, the same server's
peak after its warm-up and the default page.

    .venv/bin/python -m bench.llm_pages [--pages heatmap atlas ...] [--env NAME=VALUE ...]
"""
import argparse
import time
from urllib.parse import quote

from bench.memory import CHART, SAID, status_mb
from harness.record import run
from harness.servers import ROOT, chromium, spawn
from harness.texts import sentence
from views.shell.registry import MODEL, PAGES

TIMEOUT_MS = 300_000
LONG = sentence(600)  # more than a page reads: cut to 512 tokens
LM_PARTS = ("next", "induction", "heads", "lens")
IDLE = '[data-testid="stApp"][data-test-script-state="notRunning"]'  # Streamlit's own: no script run going on


def visits(names: list[str]) -> list[tuple[str, str]]:
    """(what, link) of every visit: each page at its default text, then at 512 tokens, then the LM page's parts."""
    out = [(f"{p} default", f"{p}?model=smollm2") for p in names]
    out += [(f"{p} 512", f"{p}?model=smollm2&text={quote(LONG)}&sents={quote(LONG)}") for p in names]
    prompt = quote("the cat sat on the mat and then " * 40)
    out += [(f"language-model {part}", f"language-model?model=smollm2&part={part}&prompt={prompt}")
            for part in LM_PARTS]
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pages", nargs="+", default=[s.path for s in PAGES if MODEL in s.needs])
    parser.add_argument("--env", action="append", default=[], help="NAME=VALUE for the server (repeatable)")
    args = parser.parse_args()
    env = dict(item.split("=", 1) for item in args.env)
    with spawn(ROOT / "app.py", env=env, session_ttl=2, serve=True) as server, chromium() as browser:
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        received = [0]
        page.on("websocket", lambda ws: ws.on("framereceived",
                                                lambda data: received.__setitem__(0, received[0] + len(data))))
        page.goto(server.url)
        page.wait_for_selector(CHART, timeout=TIMEOUT_MS)
        print(f"server {server.pid} (serve.py), after its warm-up and the default page: RSS "
              f"{status_mb(server.pid, 'VmRSS'):.0f} MB, peak {status_mb(server.pid, 'VmHWM'):.0f} MB; "
              f"env {env or '-'}")
        print(f"| {'visit':<28} | {'s':>6} | {'KB received':>11} | {'RSS MB':>7} | {'peak MB':>7} | charts | said |")
        print("|---|---:|---:|---:|---:|---:|---|")
        largest = (0, "")
        for what, link in visits(args.pages):
            received[0], start = 0, time.perf_counter()
            page.goto(server.url + link)
            page.wait_for_timeout(1000)  # the run has started
            page.wait_for_selector(IDLE, state="attached", timeout=TIMEOUT_MS)
            page.wait_for_timeout(500)  # drawn
            said = " / ".join(t.strip().replace("\n", " ")[:70] for t in page.locator(SAID).all_inner_texts()
                              if "too long for the page's link" not in t and "a page reads at most" not in t)
            largest = max(largest, (received[0], what))
            print(f"| {what:<28} | {time.perf_counter() - start:>6.1f} | {received[0] / 1000:>11.0f} | "
                  f"{status_mb(server.pid, 'VmRSS'):>7.0f} | {status_mb(server.pid, 'VmHWM'):>7.0f} | "
                  f"{page.locator(CHART).count():>6} | {said} |")
        print(f"largest page: {largest[1]}, {largest[0] / 1000:.0f} KB; server peak (VmHWM) "
              f"{status_mb(server.pid, 'VmHWM'):.0f} MB, now {status_mb(server.pid, 'VmRSS'):.0f} MB")


if __name__ == "__main__":
    run(__file__, main)
