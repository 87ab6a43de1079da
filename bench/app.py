"""The app's costs, measured for real: server rerun after a slider move, bytes per page, time to chart.

For the default model and a bert-base-sized random model (768 wide, 12 layers x 12 heads) at
16, 128 and 512 tokens:
  1. server: the forward pass (record=True) vs a rerun after a layer or head change in
     Streamlit's AppTest (the chart's own sliders on a short text, Streamlit's on a long one), and the number of
     forward passes the slider moves caused (must be 0);
  2. browser: every page opened in Debian's Chromium against a running server: bytes received
     over the websocket and the time until its chart is drawn (cold = first visit, warm = cached).
Budgets (issue 3): a layer/head change at 128 tokens <= 1/10 of a forward pass; <= 3 MB per page at 512.

    .venv/bin/python bench/app.py [--lengths 16 128 512] [--models minilm bert-base] [--no-browser]
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
from harness.record import run  # noqa: E402
from harness.servers import chromium, spawn  # noqa: E402
from harness.texts import sentence  # noqa: E402

MODELS = {
    "minilm": {"model": "minilm"},
    "bert-base": {"model": "random", "d_model": "768", "heads": "12", "layers": "12", "d_ff": "3072"},
}
PAGES = ["", "all-heads", "softmax", "steps", "masks", "positional", "architecture", "encoder-decoder"]


SCRIPT_RUNS: list[float] = []  # seconds of each page-script execution, timed inside Streamlit's script thread


def time_script_runs() -> None:
    """Time ScriptRunner._run_script itself: AppTest's round trip adds its own polling on top. Once per process: a
    second call must not wrap the timer in another (each run would then count twice)."""
    from streamlit.runtime.scriptrunner import script_runner

    original = script_runner.ScriptRunner._run_script
    if getattr(original, "timed", False):
        return

    def timed(self, rerun_data):
        start = time.perf_counter()
        try:
            return original(self, rerun_data)
        finally:
            SCRIPT_RUNS.append(time.perf_counter() - start)

    timed.timed = True
    script_runner.ScriptRunner._run_script = timed


def sliders(at) -> dict:
    """{"layer" and "head": (highest value, move(value): set it, then the rerun it causes)}: Streamlit's sliders on a
    big run (looked up at each move: the tree of an earlier run is stale), else the chart's own
    (views/charts/head_chart.py), whose move sets the component's state in the browser."""
    from harness.apptest import charts  # noqa: PLC0415 - with AppTest, in the server part only
    from views.charts import head_chart  # noqa: PLC0415 - the app's modules, in the server part only
    from views.charts.mounted import element_key  # noqa: PLC0415 - the app's modules, in the server part only

    if any(s.key == "layer" for s in at.slider):  # (a random model's own settings are sliders too)
        return {name: (at.slider(key=name).max, lambda v, name=name: at.slider(key=name).set_value(v).run())
                for name in ("layer", "head")}
    (chart,) = charts(at)
    chosen = {"layer": chart.sliders["layer"], "head": chart.sliders["head"]}

    def mover(name: str):
        def move(value: int) -> None:
            chosen[name] = value
            at.session_state[element_key(head_chart.chart_key("heatmap"))] = {"selection": dict(chosen)}
            at.run()
        return move

    layers = int(chart.sliders["stack"]["shape"].split(",")[0])
    return {"layer": (layers - 1, mover("layer")), "head": (chart.sliders["head_max"], mover("head"))}


def server_side(model: str, length: int) -> dict:
    from streamlit.testing.v1 import AppTest

    from runtime import memory, models, runs

    params = {**MODELS[model], "text": sentence(length)}
    # a fresh server's budget for each case: the sessions of the cases before (never closed here) hold their runs,
    # and a 512-token run beside a bert-base-sized model leaves no room for the next page's run
    memory.budget().clear()
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=900)
    for k, v in params.items():
        at.query_params[k] = v
    at.run()
    assert not at.exception, at.exception
    forward_passes = memory.COMPUTED["forward"]
    moves = {"layer": [], "head": []}
    for i in range(6):
        for name, (high, move) in sliders(at).items():
            del SCRIPT_RUNS[:]
            move((i + 1) % (high + 1))
            moves[name].append(sum(SCRIPT_RUNS))
            assert not at.exception, at.exception
    forward_passes = memory.COMPUTED["forward"] - forward_passes
    # then the pass alone, after the moves: the model it builds may not be the page's (another key in the budget)
    from model.loading.sources import RandomConfig  # noqa: PLC0415 - the app's modules, in the server part only

    config = None
    if params["model"] == "random":
        config = RandomConfig(int(params["d_model"]), int(params["heads"]), int(params["layers"]), int(params["d_ff"]))
    choice = models.Choice(params["model"], config)
    forward = []
    for _ in range(3):
        start = time.perf_counter()
        runs.compute_run(choice, params["text"])
        forward.append(time.perf_counter() - start)
    return {"forward": statistics.median(forward), "layer": statistics.median(moves["layer"]),
            "head": statistics.median(moves["head"]), "forward passes": forward_passes}


def browser_side(models, lengths) -> list[tuple]:
    rows = []
    with spawn(ROOT / "app.py", session_ttl=None) as server, chromium() as browser:
        url = server.url.rstrip("/")
        for model in models:
            for length in lengths:
                for page_name in PAGES:
                    query = urlencode({**MODELS[model], "text": sentence(length)})
                    for visit in ("cold", "warm"):
                        context = browser.new_context(viewport={"width": 1400, "height": 1000})
                        page = context.new_page()
                        received = [0]
                        page.on("websocket", lambda ws: ws.on(
                            "framereceived", lambda payload: received.__setitem__(0, received[0] + len(payload))))
                        start = time.perf_counter()
                        page.goto(f"{url}/{page_name}?{query}")
                        page.wait_for_selector(".js-plotly-plot .main-svg", timeout=600_000)
                        drawn = time.perf_counter() - start
                        page.wait_for_timeout(1500)  # let the rest of the page arrive
                        rows.append((model, length, page_name, visit, drawn, received[0]))
                        print(f"| {model} | {length} | {page_name or 'heatmap'} | {visit} | {drawn:.2f} | "
                              f"{received[0] / 1e6:.2f} |", flush=True)
                        context.close()
    return rows


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--lengths", type=int, nargs="+", default=[16, 128, 512])
    parser.add_argument("--models", nargs="+", default=list(MODELS))
    parser.add_argument("--no-browser", action="store_true")
    args = parser.parse_args()
    print(f"# {time.strftime('%Y-%m-%d')}, {os.cpu_count()} cores\n")
    time_script_runs()
    print("| model | tokens | forward, record=True (ms) | page script after layer move (ms) | after head move (ms) | "
          "layer move / forward | forward passes caused |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for model in args.models:
        for length in args.lengths:
            r = server_side(model, length)
            print(f"| {model} | {length} | {1e3 * r['forward']:.0f} | {1e3 * r['layer']:.0f} | {1e3 * r['head']:.0f}"
                  f" | {r['layer'] / r['forward']:.3f} | {r['forward passes']} |", flush=True)
    if not args.no_browser:
        print("\n| model | tokens | page | visit | chart drawn after (s) | MB received |")
        print("|---|---:|---|---|---:|---:|")
        browser_side(args.models, args.lengths)


if __name__ == "__main__":
    run(__file__, main)
