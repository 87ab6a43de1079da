"""What the benchmarks of the pages that decode share (bench/translate_page.py, bench/language_model_page.py): a
script run timed inside Streamlit's ScriptRunner (AppTest's own polling not counted), the moves of a page's sliders
and of its Next button, the first run of new texts, the reference timed alone in the same run, the table they print,
and the websocket bytes a browser receives for each of a page's parts.

Not a command: each page's benchmark is one.
"""
import argparse
import statistics
import time
from collections.abc import Callable
from pathlib import Path

from bench.app import SCRIPT_RUNS, time_script_runs
from harness.record import run

ROOT = Path(__file__).resolve().parents[1]
BUDGET_MS, BUDGET_BYTES = 50, 1_000_000


def ms(values) -> str:
    return f"{statistics.median(values) * 1e3:.1f}"


def timed(at, act: Callable[[], object]) -> float:
    """Seconds of the script runs act() caused."""
    del SCRIPT_RUNS[:]
    act()
    assert not at.exception, at.exception
    return sum(SCRIPT_RUNS)


def slider_moves(page: str, sliders: tuple[str, ...], moves: int) -> dict[str, list[float]]:
    """The page opened once; `moves` times: each slider to its next value (round its range), then the Next button
    (the step back to 0 first when it is at its end)."""
    from harness import apptest  # noqa: PLC0415 - with AppTest, in the server part only

    time_script_runs()
    at = apptest.open_page(page)
    times = {f"{key} slider": [] for key in sliders} | {"Next button": []}
    ends = {key: at.slider(key=key).max for key in sliders}
    for i in range(moves):
        for key in sliders:
            times[f"{key} slider"].append(timed(at, lambda: at.slider(key=key).set_value((i + 1) % (ends[key] + 1))
                                                .run()))
        if at.slider(key="step").value == ends["step"]:
            at.slider(key="step").set_value(0).run()
        times["Next button"].append(timed(at, lambda: next(b for b in at.button if b.label == "Next").click().run()))
    return times


def new_texts(page: str, box: str, texts: tuple[str, ...], ways: dict[str, dict]) -> dict[str, list[float]]:
    """{way of decoding: the first run of each new text typed in the box}: the whole page, computed and drawn."""
    from harness import apptest  # noqa: PLC0415 - with AppTest, in the server part only

    first = {}
    for name, params in ways.items():
        at = apptest.open_page(page, **params)
        first[name] = [timed(at, lambda: at.text_input(key=box).input(text).run()) for text in texts]
    return first


def alone(fns: dict[str, Callable[[], object]], repeats: int = 10) -> dict[str, list[float]]:
    """{name: seconds of each call}, under torch.inference_mode, the calls interleaved."""
    import torch  # noqa: PLC0415 - in the server part only

    seconds = {name: [] for name in fns}
    with torch.inference_mode():
        for _ in range(repeats):
            for name, fn in fns.items():
                start = time.perf_counter()
                fn()
                seconds[name].append(time.perf_counter() - start)
    return seconds


def report(moves: int, times: dict, first: dict, reference: dict, *, typed: str, reference_name: str,
           budgets: dict[str, int] | None = None) -> None:
    """The server's table: each move's median and max against its budget (50 ms unless budgets says), the first run
    of a new text, and the reference."""
    print(f"# {time.strftime('%Y-%m-%d %H:%M')}, server (AppTest, script run inside Streamlit), {moves} moves\n")
    print("| what | median (ms) | max (ms) |\n|---|---:|---:|")
    for name, values in times.items():
        budget = (budgets or {}).get(name, BUDGET_MS)
        over = f" (over {budget} ms)" if statistics.median(values) * 1e3 > budget else ""
        print(f"| {name} | {ms(values)}{over} | {max(values) * 1e3:.1f} |")
    for name, values in first.items():
        print(f"| {typed}, {name} (the whole page) | {ms(values)} | {max(values) * 1e3:.1f} |")
    for name, values in reference.items():
        print(f"| reference: {reference_name} alone, {name} | {ms(values)} | {max(values) * 1e3:.1f} |")


def browser_bytes(what: str, warm: str, paths: list[str], ready: dict[str, str] | None = None) -> None:
    """The websocket bytes Chromium receives opening each path, after `warm` has loaded the model."""
    from bench.page_bytes import CHART, load  # noqa: PLC0415 - the browser part only
    from harness.servers import chromium, spawn  # noqa: PLC0415 - the browser part only

    print(f"\n# {time.strftime('%Y-%m-%d %H:%M')}, bytes a browser receives (websocket), {what}\n")
    print("| page | MB |\n|---|---:|")
    with spawn(ROOT / "app.py", session_ttl=None) as server, chromium() as browser:
        load(browser, f"{server.url}{warm}", 2.0)  # loads the model: not a page's bytes
        for path in paths:
            total, _ = load(browser, f"{server.url}{path}", 2.0, (ready or {}).get(path, CHART))
            print(f"| /{path} | {total / 1e6:.3f}" + (" (over 1 MB)" if total > BUDGET_BYTES else "") + " |",
                  flush=True)


def command(file: str, doc: str, server_side: Callable[[int], None], browser_side: Callable[[], None]) -> None:
    """A page's benchmark: `--moves N` (20) and `--no-browser`, its output recorded by harness.record."""
    def main() -> None:
        parser = argparse.ArgumentParser(description=doc.splitlines()[0])
        parser.add_argument("--moves", type=int, default=20)
        parser.add_argument("--no-browser", action="store_true")
        args = parser.parse_args()
        server_side(args.moves)
        if not args.no_browser:
            browser_side()

    run(file, main)
