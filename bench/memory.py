"""What one visitor's links cost the server's memory: a fresh server, then N distinct max-size random-model links
opened one after another in Chromium (the hostile case of issue 16: each link builds a model of its own).

    python -m bench.memory                       # 12 links: seeds 1-8 on the heatmap, 9-12 on encoder-decoder
    python -m bench.memory --links 20 --env ATTNVIZ_MEMORY_MB=1200

Prints the server's RSS before the first link, after each link, its peak (the kernel's VmHWM: what a pod's memory
limit is checked against) and at the end; and whether each page drew its chart or said why not.
"""
import argparse
import time
from pathlib import Path

from bench.servers import ROOT, chromium, spawn

LINK = "model=random&d_model=768&heads=1&layers=12&d_ff=3072&positional=learned&seed={seed}"
PAGES = {"heatmap": "heatmap?" + LINK, "encoder-decoder": "encoder-decoder?" + LINK.replace("model=random&", "")}
CHARTS = {"heatmap": 1, "encoder-decoder": 3}  # a page is done when it drew these, or said why not
CHART = ".js-plotly-plot .main-svg"
FAILED = '[data-testid="stAlertContentError"], [data-testid="stException"]'
SAID = '[data-testid="stAlertContentError"], [data-testid="stAlertContentWarning"], [data-testid="stException"]'
DONE = "([charts, chart, failed]) => document.querySelectorAll(chart).length >= charts || !!document.querySelector(failed)"


def status_mb(pid: int, field: str) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) / 1024
    return 0.0


def links(count: int) -> list[tuple[str, int]]:
    """(page, seed): two thirds on the heatmap, a third on the encoder-decoder page, seeds 1..count."""
    cut = round(count * 2 / 3)
    return [("heatmap" if seed <= cut else "encoder-decoder", seed) for seed in range(1, count + 1)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--links", type=int, default=12)
    parser.add_argument("--env", action="append", default=[], help="NAME=VALUE for the server (repeatable)")
    parser.add_argument("--timeout", type=float, default=180, help="s to wait for each page")
    args = parser.parse_args()
    env = dict(item.split("=", 1) for item in args.env)
    with spawn(ROOT / "app.py", env=env, session_ttl=2) as server, chromium() as browser:
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        page.goto(server.url)
        page.wait_for_selector(CHART, timeout=args.timeout * 1000)
        before = status_mb(server.pid, "VmRSS")
        print(f"server {server.pid}, after the default page: RSS {before:.0f} MB  env {env or '-'}")
        print(f"{'link':>4} {'page':<16} {'seed':>4} {'s':>6} {'RSS MB':>8} {'peak MB':>8}  page said")
        for n, (name, seed) in enumerate(links(args.links), 1):
            start = time.perf_counter()
            page.goto(server.url + PAGES[name].format(seed=seed))
            page.wait_for_function(DONE, arg=[CHARTS[name], CHART, FAILED], timeout=args.timeout * 1000)
            page.wait_for_timeout(300)
            said = " | ".join(t.strip().replace("\n", " ")[:90] for t in page.locator(SAID).all_inner_texts())
            drew = page.locator(CHART).count()
            print(f"{n:>4} {name:<16} {seed:>4} {time.perf_counter() - start:>6.1f} "
                  f"{status_mb(server.pid, 'VmRSS'):>8.0f} {status_mb(server.pid, 'VmHWM'):>8.0f}  "
                  f"{drew} charts{'; ' + said if said else ''}")
        print(f"peak RSS (VmHWM) {status_mb(server.pid, 'VmHWM'):.0f} MB; now {status_mb(server.pid, 'VmRSS'):.0f} "
              f"MB; before the links {before:.0f} MB")


if __name__ == "__main__":
    main()
