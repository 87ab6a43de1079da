"""The Language model page's costs (issue 31): the server's time for a step, layer or head change and for a snapshot
move, and the bytes a browser receives.

1. server, in Streamlit's AppTest on the default prompt (the toy GPT): the script run after a step change (the step
   slider, and the Next button), a layer change, a head change, and a snapshot move on "Watch it learn", each timed
   inside Streamlit's ScriptRunner (AppTest's own polling not counted); the first run of a new prompt (the whole page:
   the writing computed and drawn), greedy and sampled; the reference in the same run: the writing alone, by
   model.causal.decoding.generate. A step, layer or head change only reads the writing computed once.
2. browser: websocket bytes Chromium receives when it opens the page, per part, for the default prompt, against the
   Translate page's step part (three charts too).

    .venv/bin/python bench/language_model_page.py [--moves 20] [--no-browser]
"""
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from bench.page_costs import alone, browser_bytes, command, new_texts, report, slider_moves, timed  # noqa: E402

PARTS = ["next", "induction", "heads", "lens", "learning", "live"]
READY = {"heads": '[data-testid="stDataFrame"]', "live": '[data-testid="stBaseButton-primary"]'}  # no chart there
PROMPTS = ("the teacher saw a red car . the teacher saw", "my friend has two cats . my friend has",
           "yesterday she bought a book . yesterday she")


def server_side(moves: int) -> None:
    import torch

    from harness import apptest
    from model.causal.decoding import generate
    from model.gpt.snapshots import snapshot_steps
    from model.gpt.toy import load
    from model.sampling import Sampling

    times = slider_moves("language-model", ("step", "layer", "head"), moves)
    at = apptest.open_page("language-model", part="learning")
    steps = list(snapshot_steps())
    for step in steps:  # each snapshot built once (the first visitor of a server pays this)
        at.select_slider(key="snap").set_value(step).run()
    times["snapshot move (warm)"] = [timed(at, lambda: at.select_slider(key="snap").set_value(step).run())
                                     for step in steps[::-1] * 2]
    first = new_texts("language-model", "prompt", PROMPTS,
                      {"greedy": {}, "sampling": {"decode": "sample", "temperature": "1.5"}})
    model, vocabulary = load()
    prompt = torch.tensor(vocabulary.ids(PROMPTS[0].split()))
    reference = alone({"greedy, 10 words": lambda: generate(model, prompt, 10),
                       "sampling, 10 words": lambda: generate(model, prompt, 10, Sampling(1.5))})
    report(moves, times, first, reference, typed="a new prompt typed", reference_name="model.causal.decoding.generate",
           budgets={"snapshot move (warm)": 100})


def browser_side() -> None:
    paths = [f"language-model?part={part}" for part in PARTS]
    browser_bytes("the default prompt", "language-model", [*paths, "translate?part=steps"],
                  {f"language-model?part={part}": ready for part, ready in READY.items()})


if __name__ == "__main__":
    command(__file__, __doc__, server_side, browser_side)
