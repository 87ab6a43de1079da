"""The Translate page's costs (issue 19): the server's time for a step change, and the bytes a browser receives.

1. server, in Streamlit's AppTest on the default sentence (我有一只猫): the script run after a step change (the
   step slider, and the Next button), after a layer change, and the first run of a new way of choosing the next word
   (a decoding from scratch: greedy, sampling, beam search), each timed inside Streamlit's ScriptRunner (AppTest's
   own polling not counted); the reference in the same run: the decoding alone, by model.translator.decoding.
   A new sentence typed reruns the whole page and decodes it once; a step or layer change only reads that decoding.
2. browser: websocket bytes Chromium receives when it opens the page, per part, for the default sentence, against
   the encoder-decoder page (the same sentence, three charts too).

    .venv/bin/python bench/translate_page.py [--moves 20] [--no-browser]
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

PARTS = ["steps", "alignment"]
BUDGET_MS, BUDGET_BYTES = 50, 1_000_000


def ms(values) -> str:
    return f"{statistics.median(values) * 1e3:.1f}"


def server_side(moves: int) -> None:
    import torch

    from harness import apptest
    from model.sampling import Sampling
    from model.translator import load_shipped
    from model.translator.decoding import beam_search, generate

    time_script_runs()
    at = apptest.open_page("translate")
    times = {"step slider": [], "Next button": [], "layer slider": []}
    step, layer = at.slider(key="step"), at.slider(key="layer")
    for i in range(moves):
        del SCRIPT_RUNS[:]
        at.slider(key="step").set_value((i + 1) % (step.max + 1)).run()
        times["step slider"].append(sum(SCRIPT_RUNS))
        del SCRIPT_RUNS[:]
        at.slider(key="layer").set_value((i + 1) % (layer.max + 1)).run()
        times["layer slider"].append(sum(SCRIPT_RUNS))
        if at.slider(key="step").value == step.max:
            at.slider(key="step").set_value(0).run()
        del SCRIPT_RUNS[:]
        next(b for b in at.button if b.label == "Next").click().run()
        times["Next button"].append(sum(SCRIPT_RUNS))
        assert not at.exception, at.exception
    ways = {"greedy": {}, "sampling": {"decode": "sample", "temperature": "1.5"}, "beam search": {"decode": "beam"}}
    first = {}
    for name, params in ways.items():
        at = apptest.open_page("translate", **params)
        runs = []
        for text in ("今天我有一只猫", "明天我有一只猫", "昨天我买了一只猫"):  # new texts: not decoded yet
            del SCRIPT_RUNS[:]
            at.text_input(key="src").input(text).run()
            runs.append(sum(SCRIPT_RUNS))
            assert not at.exception, at.exception
        first[name] = runs
    model = load_shipped()
    src = torch.tensor([model.encode_source("我有一只猫")[1]])
    reference = {"greedy, recorded": [], "sampling": [], "beam search (4)": []}
    with torch.inference_mode():
        for _ in range(10):
            for name, fn in (("greedy, recorded", lambda: generate(model, src, record=True)),
                             ("sampling", lambda: generate(model, src, Sampling(1.5))),
                             ("beam search (4)", lambda: beam_search(model, src, 4))):
                start = time.perf_counter()
                fn()
                reference[name].append(time.perf_counter() - start)
    print(f"# {time.strftime('%Y-%m-%d %H:%M')}, server (AppTest, script run inside Streamlit), {moves} moves\n")
    print("| what | median (ms) |\n|---|---:|")
    for name, values in times.items():
        print(f"| {name} | {ms(values)}" + (" (over 50 ms)" if statistics.median(values) * 1e3 > BUDGET_MS else "")
              + " |")
    for name, values in first.items():
        print(f"| a new sentence typed, {name} (the whole page: decoding and drawing) | {ms(values)} |")
    for name, values in reference.items():
        print(f"| reference: model.translator.decoding alone, {name} | {ms(values)} |")


def browser_side() -> None:
    from bench.page_bytes import load
    from harness.servers import chromium, spawn

    print(f"\n# {time.strftime('%Y-%m-%d %H:%M')}, bytes a browser receives (websocket), 我有一只猫\n")
    print("| page | MB |\n|---|---:|")
    with spawn(ROOT / "app.py", session_ttl=None) as server, chromium() as browser:
        load(browser, f"{server.url}translate", 2.0)  # loads the translator: not a page's bytes
        for path in [*(f"translate?part={p}" for p in PARTS), "encoder-decoder"]:
            total, _ = load(browser, f"{server.url}{path}", 2.0)
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
