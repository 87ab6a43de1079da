"""What one visitor's links cost the server's memory: a fresh server, then N distinct max-size random-model links
opened one after another in Chromium (the hostile case of issue 16: each link builds a model of its own).

    python -m bench.memory                       # 12 links: seeds 1-8 on the heatmap, 9-12 on encoder-decoder
    python -m bench.memory --links 20 --env ATTNVIZ_CACHE_MB=600
    python -m bench.memory --passes              # one pass per process: its measured peak beside
    model.loading.footprint's

Prints the server's RSS before the first link, after each link, its peak (the kernel's VmHWM: what a pod's memory
limit is checked against) and at the end; and whether each page drew its chart or said why not.
"""
import argparse
import gc
import subprocess
import sys
import time
from pathlib import Path

from harness.record import run
from harness.servers import ROOT, chromium, spawn

PASSES = [("encoder", 12, 12, 768, 3072), ("encoder", 12, 16, 768, 3072), ("encoder", 12, 1, 768, 3072),
          ("encoder", 2, 4, 128, 512), ("encoder", 1, 1, 32, 64), ("encoder-decoder", 12, 16, 768, 3072),
          ("encoder-decoder", 12, 1, 768, 3072), ("encoder-decoder", 2, 4, 128, 512), ("encoder-decoder", 1, 1, 32, 64)]

PASS_TOKENS = 512  # the longest text the app takes
PAGE_TIMEOUT_MS = 180_000  # a page's chart, or its message
LINK = "model=random&d_model=768&heads=1&layers=12&d_ff=3072&positional=learned&seed={seed}"
PAGES = {"heatmap": "?" + LINK, "encoder-decoder": "encoder-decoder?" + LINK}  # model=random on both pages
CHARTS = {"heatmap": 1, "encoder-decoder": 3}  # a page is done when it drew these, or said why not
CHART = ".js-plotly-plot .main-svg"
FAILED = '[data-testid="stAlertContentError"], [data-testid="stException"]'
SAID = '[data-testid="stAlertContentError"], [data-testid="stAlertContentWarning"], [data-testid="stException"]'
DONE = ("([charts, chart, failed]) => document.querySelectorAll(chart).length >= charts"
        " || !!document.querySelector(failed)")


def status_mb(pid: int, field: str) -> float:
    """A field of /proc/PID/status in MB (pid 0: this process)."""
    for line in Path(f"/proc/{pid or 'self'}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) / 1024
    return 0.0


def links(count: int) -> list[tuple[str, int]]:
    """(page, seed): two thirds on the heatmap, a third on the encoder-decoder page, seeds 1..count."""
    cut = round(count * 2 / 3)
    return [("heatmap" if seed <= cut else "encoder-decoder", seed) for seed in range(1, count + 1)]


def one_pass(kind: str, layers: int, heads: int, d_model: int, d_ff: int, tokens: int) -> None:
    """In this process: build the model, run one recorded pass of `tokens` tokens as the app does, print the peak."""
    import numpy as np
    import torch

    from model.loading.footprint import encoder_decoder_pass_bytes, encoder_pass_bytes
    from model.loading.sources import RANDOM_KEY, RandomConfig, find_source, load, load_encoder_decoder
    from runtime.heap import release_freed_memory

    config, ids = RandomConfig(d_model, heads, layers, d_ff), torch.full((1, tokens), 1996)
    model = (load_encoder_decoder(config) if kind == "encoder-decoder" else load(find_source(RANDOM_KEY), config)).model
    gc.collect()
    release_freed_memory()
    before = status_mb(0, "VmRSS")
    with torch.inference_mode():
        if kind == "encoder":
            model.inputs_and_attentions(ids)
            estimate = encoder_pass_bytes(layers, heads, d_model, d_ff, tokens)
        else:
            _, trace = model(ids, ids, record=True)
            [np.stack([getattr(layer, block).probs[0].numpy() for layer in stack]) for stack, block in
             ((trace.encoder.layers, "self_attn"), (trace.decoder.layers, "self_attn"),
              (trace.decoder.layers, "cross_attn"))]
            estimate = encoder_decoder_pass_bytes(layers, heads, d_model, d_ff, tokens, tokens)
    peak = status_mb(0, "VmHWM") - before
    print(f"{kind:<16} {layers:>6} {heads:>5} {d_model:>7} {d_ff:>5} {tokens:>6} {peak:>9.0f} "
          f"{estimate / 2**20:>9.0f} {peak / (estimate / 2**20):>7.2f}")


def passes() -> None:
    print(f"{'pass':<16} {'layers':>6} {'heads':>5} {'d_model':>7} {'d_ff':>5} {'tokens':>6} {'peak MB':>9} "
          f"{'estimate':>9} {'ratio':>7}")
    for kind, *sizes in PASSES:  # one process each: VmHWM is the process's peak
        subprocess.run([sys.executable, "-m", "bench.memory", "--one-pass", kind, *map(str, sizes), str(PASS_TOKENS)],
                       cwd=ROOT, check=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--links", type=int, default=12)
    parser.add_argument("--env", action="append", default=[], help="NAME=VALUE for the server (repeatable)")
    parser.add_argument("--passes", action="store_true", help="measure single passes against model.loading.footprint")
    parser.add_argument("--one-pass", nargs=6, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one_pass:
        return one_pass(args.one_pass[0], *map(int, args.one_pass[1:]))
    if args.passes:
        return passes()
    env = dict(item.split("=", 1) for item in args.env)
    with spawn(ROOT / "app.py", env=env, session_ttl=2) as server, chromium() as browser:
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        page.goto(server.url)
        page.wait_for_selector(CHART, timeout=PAGE_TIMEOUT_MS)
        before = status_mb(server.pid, "VmRSS")
        print(f"server {server.pid}, after the default page: RSS {before:.0f} MB  env {env or '-'}")
        print(f"{'link':>4} {'page':<16} {'seed':>4} {'s':>6} {'RSS MB':>8} {'peak MB':>8}  page said")
        for n, (name, seed) in enumerate(links(args.links), 1):
            start = time.perf_counter()
            page.goto(server.url + PAGES[name].format(seed=seed))
            page.wait_for_function(DONE, arg=[CHARTS[name], CHART, FAILED], timeout=PAGE_TIMEOUT_MS)
            page.wait_for_timeout(300)
            said = " | ".join(t.strip().replace("\n", " ")[:90] for t in page.locator(SAID).all_inner_texts())
            drew = page.locator(CHART).count()
            print(f"{n:>4} {name:<16} {seed:>4} {time.perf_counter() - start:>6.1f} "
                  f"{status_mb(server.pid, 'VmRSS'):>8.0f} {status_mb(server.pid, 'VmHWM'):>8.0f}  "
                  f"{drew} charts{'; ' + said if said else ''}")
        print(f"peak RSS (VmHWM) {status_mb(server.pid, 'VmHWM'):.0f} MB; now {status_mb(server.pid, 'VmRSS'):.0f} "
              f"MB; before the links {before:.0f} MB")


if __name__ == "__main__":
    run(__file__, main)
