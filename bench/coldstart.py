"""Cold start: from `streamlit run app.py` to the first chart drawn in a real browser (Debian's Chromium).

The browser is already open (a student's is); the clock starts when the server process is spawned.
Reported per run: server health answering, first chart drawn, and the heaviest top-level imports
before health (paid by every start) and between health and the chart (paid by the first visitor),
read from `python -X importtime`. Budget (issue 5): first chart under 10 s with the default model.

    .venv/bin/python bench/coldstart.py [--runs 3]
"""
import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from harness.record import run  # noqa: E402
from harness.servers import chromium, free_port  # noqa: E402

IMPORT_LINE = re.compile(r"import time:\s+(\d+) \|\s+(\d+) \| (\S.*)$")


def top_level_imports(lines: list[str]) -> list[tuple[float, str]]:
    """(cumulative seconds, package) of the top-level imports (no indentation) in -X importtime output."""
    found = []
    for line in lines:
        m = IMPORT_LINE.match(line)
        if m and not m.group(3).startswith(" "):
            found.append((int(m.group(2)) / 1e6, m.group(3).strip()))
    return sorted(found, reverse=True)


def one_start(browser) -> dict:
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    with tempfile.TemporaryFile("w+") as log:
        start = time.perf_counter()
        proc = subprocess.Popen([sys.executable, "-X", "importtime", "-m", "streamlit", "run", "app.py",
                                 "--server.port", str(port), "--server.address", "127.0.0.1"], cwd=ROOT,
                                stdout=subprocess.DEVNULL, stderr=log, env={**os.environ, "HF_HUB_OFFLINE": "1"})
        try:
            while True:
                try:
                    if urllib.request.urlopen(url + "/_stcore/health", timeout=1).read() == b"ok":
                        break
                except OSError:
                    time.sleep(0.02)
                if time.perf_counter() - start > 120:
                    raise RuntimeError("the server did not answer in 120 s")
            health = time.perf_counter() - start
            log.flush()
            at_health = log.tell()
            context = browser.new_context(viewport={"width": 1400, "height": 1000})
            page = context.new_page()
            page.goto(url)
            page.wait_for_selector(".js-plotly-plot .main-svg", timeout=120_000)
            chart = time.perf_counter() - start
            context.close()
        finally:
            proc.terminate()
            proc.wait(timeout=20)
        log.seek(0)
        text = log.read()
    before, after = text[:at_health].splitlines(), text[at_health:].splitlines()
    return {"health": health, "chart": chart, "before": top_level_imports(before)[:6],
            "after": top_level_imports(after)[:6]}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    print(f"# {time.strftime('%Y-%m-%d')}, {os.cpu_count()} cores\n")
    print("| run | server health (s) | first chart drawn (s) |")
    print("|---:|---:|---:|")
    results = []
    with chromium() as browser:
        for i in range(args.runs):
            r = one_start(browser)
            results.append(r)
            print(f"| {i + 1} | {r['health']:.2f} | {r['chart']:.2f} |", flush=True)
    print(f"| median | {statistics.median(r['health'] for r in results):.2f} | "
          f"{statistics.median(r['chart'] for r in results):.2f} |")
    last = results[-1]
    for when, key in (("before health (every start)", "before"), ("after health, before the chart", "after")):
        print(f"\nHeaviest top-level imports {when}:")
        for seconds, name in last[key]:
            print(f"  {seconds:6.2f} s  {name}")


if __name__ == "__main__":
    run(__file__, main)
