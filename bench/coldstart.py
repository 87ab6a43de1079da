"""Cold start: from the server process's start to the first chart drawn in a real browser (Debian's Chromium), for
`streamlit run app.py` and for `python serve.py` (the same server, warming up in the background what every first
visitor needs: views/warm.py), against a later visitor of the same server.

The browser is already open (a student's is); the clock starts when the server process is spawned. Per run:
- health: /_stcore/health answers; ready: `serve.py --check` passes (the warm-up has ended; serve.py only);
- first visitor, from start: the first student opens the page the moment the server answers (the worst case), or with
  serve-gated the moment `serve.py --check` passes (as behind compose's or the pod's health check);
- first visitor, from request: from that student's page request to its chart;
- a later visitor: a new tab opened once the first chart is drawn, from its request to its chart;
and the heaviest top-level imports before health (paid by every start), read from `python -X importtime`.
Budget (issue 32): at most 7.5 s from the process start to the first chart, the first visitor as fast as a later one.
--drop-caches (root): empty the kernel's page cache before each start, as after a reboot or on a new node.

    .venv/bin/python bench/coldstart.py [--runs 3] [--launch serve streamlit] [--drop-caches]
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
CHART = ".js-plotly-plot .main-svg"
# serve-gated: serve.py with the first student let in once `serve.py --check` passes, as compose's and the pod's health
# checks let a class in
LAUNCH = {"streamlit": ["-m", "streamlit", "run", "app.py"], "serve": ["serve.py"], "serve-gated": ["serve.py"]}


def top_level_imports(lines: list[str]) -> list[tuple[float, str]]:
    """(cumulative seconds, package) of the top-level imports (no indentation) in -X importtime output."""
    found = []
    for line in lines:
        m = IMPORT_LINE.match(line)
        if m and not m.group(3).startswith(" "):
            found.append((int(m.group(2)) / 1e6, m.group(3).strip()))
    return sorted(found, reverse=True)


def _wait(until, start: float, what: str) -> float:
    while not until():
        if time.perf_counter() - start > 120:
            raise RuntimeError(f"{what}: not in 120 s")
        time.sleep(0.02)
    return time.perf_counter() - start


def _healthy(url: str) -> bool:
    try:
        return urllib.request.urlopen(url + "/_stcore/health", timeout=1).read() == b"ok"
    except OSError:
        return False


def _visit(browser, url: str) -> float:
    """Seconds from a new tab's request to its first chart drawn."""
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    try:
        page = context.new_page()
        asked = time.perf_counter()
        page.goto(url)
        page.wait_for_selector(CHART, timeout=120_000)
        return time.perf_counter() - asked
    finally:
        context.close()


def one_start(browser, launch: str, drop_caches: bool) -> dict:
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    if drop_caches:
        subprocess.run(["sync"], check=True)
        Path("/proc/sys/vm/drop_caches").write_text("3\n")
    with tempfile.TemporaryFile("w+") as log:
        start = time.perf_counter()
        proc = subprocess.Popen([sys.executable, "-X", "importtime", *LAUNCH[launch], "--server.port", str(port),
                                 "--server.address", "127.0.0.1", "--server.headless", "true"], cwd=ROOT,
                                stdout=subprocess.DEVNULL, stderr=log, env={**os.environ, "HF_HUB_OFFLINE": "1"})
        try:
            health = _wait(lambda: _healthy(url), start, "health")
            log.flush()
            at_health = log.tell()
            check = [sys.executable, "serve.py", "--check", "--server.port", str(port)]
            ready = None
            if launch == "serve-gated":
                ready = _wait(lambda: subprocess.run(check, cwd=ROOT, capture_output=True).returncode == 0, start,
                              "ready")
            first = _visit(browser, url)
            chart = time.perf_counter() - start
            if launch == "serve":
                ready = _wait(lambda: subprocess.run(check, cwd=ROOT, capture_output=True).returncode == 0, start,
                              "ready")
            later = _visit(browser, url)
        finally:
            proc.terminate()
            proc.wait(timeout=20)
        log.seek(0)
        before = log.read()[:at_health].splitlines()
    return {"health": health, "ready": ready, "chart": chart, "first": first, "later": later,
            "before": top_level_imports(before)[:6]}


def _s(value) -> str:
    return "" if value is None else f"{value:.2f}"


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--launch", nargs="+", choices=list(LAUNCH), default=list(LAUNCH))
    parser.add_argument("--drop-caches", action="store_true", help="empty the page cache before each start (root)")
    args = parser.parse_args()
    print(f"# {time.strftime('%Y-%m-%d')}, {os.cpu_count()} cores, page cache "
          f"{'emptied before each start' if args.drop_caches else 'warm'}\n")
    print("| launch | run | health (s) | ready (s) | first chart from start (s) | first visitor, from request (s) "
          "| later visitor, from request (s) |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    results = {}
    with chromium() as browser:
        for i in range(args.runs):
            for launch in args.launch:  # alternated, so that a busy spell hits both
                r = one_start(browser, launch, args.drop_caches)
                results.setdefault(launch, []).append(r)
                print(f"| {launch} | {i + 1} | {_s(r['health'])} | {_s(r['ready'])} | {_s(r['chart'])} | "
                      f"{_s(r['first'])} | {_s(r['later'])} |", flush=True)
    for launch, rs in results.items():
        med = {k: statistics.median(r[k] for r in rs) if rs[0][k] is not None else None
               for k in ("health", "ready", "chart", "first", "later")}
        print(f"| {launch} | median | {_s(med['health'])} | {_s(med['ready'])} | {_s(med['chart'])} | "
              f"{_s(med['first'])} | {_s(med['later'])} |")
    for launch, rs in results.items():
        print(f"\nHeaviest top-level imports before health ({launch}, last run):")
        for seconds, name in rs[-1]["before"]:
            print(f"  {seconds:6.2f} s  {name}")


if __name__ == "__main__":
    run(__file__, main)
