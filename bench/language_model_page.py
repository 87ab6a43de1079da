"""The Language model page's costs (issue 31): the server's time for a step, layer or head change and for a snapshot
move, and the bytes a browser receives.

1. server, in Streamlit's AppTest on the default prompt (the toy GPT): the script run after a step change (the step
   slider, and the Next button), a layer change, a head change, and a snapshot move on "Watch it learn", each timed
   inside Streamlit's ScriptRunner (AppTest's own polling not counted); the first run of a new prompt (the whole page:
   the writing computed and drawn), greedy and sampled; the reference in the same run: the writing alone, by
   model.gpt.decoding.generate. A step, layer or head change only reads the writing computed once.
2. browser: websocket bytes Chromium receives when it opens the page, per part, for the default prompt, against the
   Translate page's step part (three charts too).

    .venv/bin/python bench/language_model_page.py [--moves 20] [--no-browser]
"""
import argparse
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from bench.app import SCRIPT_RUNS, time_script_runs  # noqa: E402
from harness.record import run  # noqa: E402

PARTS = ["next", "induction", "heads", "lens", "learning", "live"]
READY = {"heads": '[data-testid="stDataFrame"]', "live": '[data-testid="stBaseButton-primary"]'}  # no chart there
BUDGET_MS, SNAPSHOT_MS, BUDGET_BYTES = 50, 100, 1_000_000
PROMPTS = ("the teacher saw a red car . the teacher saw", "my friend has two cats . my friend has",
           "yesterday she bought a book . yesterday she")


def ms(values) -> str:
    return f"{statistics.median(values) * 1e3:.1f}"


def timed(at, act) -> float:
    del SCRIPT_RUNS[:]
    act()
    assert not at.exception, at.exception
    return sum(SCRIPT_RUNS)


def server_side(moves: int) -> None:
    import torch

    from harness import apptest
    from model.gpt.decoding import generate
    from model.gpt.snapshots import snapshot_steps
    from model.gpt.toy import load
    from model.sampling import Sampling

    time_script_runs()
    at = apptest.open_page("language-model")
    times = {"step slider": [], "Next button": [], "layer slider": [], "head slider": []}
    last = at.slider(key="step").max
    for i in range(moves):
        times["step slider"].append(timed(at, lambda: at.slider(key="step").set_value((i + 1) % (last + 1)).run()))
        times["layer slider"].append(timed(at, lambda: at.slider(key="layer").set_value(i % 2).run()))
        times["head slider"].append(timed(at, lambda: at.slider(key="head").set_value(i % 4).run()))
        if at.slider(key="step").value == last:
            at.slider(key="step").set_value(0).run()
        times["Next button"].append(timed(at, lambda: next(b for b in at.button if b.label == "Next").click().run()))
    at = apptest.open_page("language-model", part="learning")
    steps = list(snapshot_steps())
    for step in steps:  # each snapshot built once (the first visitor of a server pays this)
        at.select_slider(key="snap").set_value(step).run()
    times["snapshot move (warm)"] = [timed(at, lambda: at.select_slider(key="snap").set_value(step).run())
                                     for step in steps[::-1] * 2]
    first = {}
    for name, params in {"greedy": {}, "sampling": {"decode": "sample", "temperature": "1.5"}}.items():
        at = apptest.open_page("language-model", **params)
        first[name] = [timed(at, lambda: at.text_input(key="prompt").input(p).run()) for p in PROMPTS]
    model, vocabulary = load()
    prompt = torch.tensor(vocabulary.ids(PROMPTS[0].split()))
    reference = {"greedy, 10 words": [], "sampling, 10 words": []}
    with torch.inference_mode():
        for _ in range(10):
            for name, fn in (("greedy, 10 words", lambda: generate(model, prompt, 10)),
                             ("sampling, 10 words", lambda: generate(model, prompt, 10, Sampling(1.5)))):
                start = time.perf_counter()
                fn()
                reference[name].append(time.perf_counter() - start)
    print(f"# {time.strftime('%Y-%m-%d %H:%M')}, server (AppTest, script run inside Streamlit), {moves} moves\n")
    print("| what | median (ms) | max (ms) |\n|---|---:|---:|")
    for name, values in times.items():
        budget = SNAPSHOT_MS if name.startswith("snapshot") else BUDGET_MS
        over = f" (over {budget} ms)" if statistics.median(values) * 1e3 > budget else ""
        print(f"| {name} | {ms(values)}{over} | {max(values) * 1e3:.1f} |")
    for name, values in first.items():
        print(f"| a new prompt typed, {name} (the whole page: writing and drawing) | {ms(values)} | "
              f"{max(values) * 1e3:.1f} |")
    for name, values in reference.items():
        print(f"| reference: model.gpt.decoding.generate alone, {name} | {ms(values)} | {max(values) * 1e3:.1f} |")


def browser_side() -> None:
    from bench.page_bytes import CHART, load
    from harness.servers import chromium, spawn

    print(f"\n# {time.strftime('%Y-%m-%d %H:%M')}, bytes a browser receives (websocket), the default prompt\n")
    print("| page | MB |\n|---|---:|")
    with spawn(ROOT / "app.py", session_ttl=None) as server, chromium() as browser:
        load(browser, f"{server.url}language-model", 2.0)  # loads the model: not a page's bytes
        for part in [*PARTS, None]:
            path = f"language-model?part={part}" if part else "translate?part=steps"
            total, _ = load(browser, f"{server.url}{path}", 2.0, READY.get(part, CHART))
            print(f"| /{path} | {total / 1e6:.3f}" + (" (over 1 MB)" if total > BUDGET_BYTES else "") + " |",
                  flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--moves", type=int, default=20)
    parser.add_argument("--no-browser", action="store_true")
    args = parser.parse_args()
    server_side(args.moves)
    if not args.no_browser:
        browser_side()


if __name__ == "__main__":
    run(__file__, main)
