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
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from bench.page_costs import alone, browser_bytes, command, new_texts, report, slider_moves  # noqa: E402

PARTS = ["steps", "alignment"]


def server_side(moves: int) -> None:
    import torch

    from model.sampling import Sampling
    from model.translator import load_shipped
    from model.translator.decoding import beam_search, generate

    times = slider_moves("translate", ("step", "layer"), moves)
    ways = {"greedy": {}, "sampling": {"decode": "sample", "temperature": "1.5"}, "beam search": {"decode": "beam"}}
    new = ("今天我有一只猫", "明天我有一只猫", "昨天我买了一只猫")  # not decoded yet
    first = new_texts("translate", "src", new, ways)
    model = load_shipped()
    src = torch.tensor([model.encode_source("我有一只猫")[1]])
    reference = alone({"greedy, recorded": lambda: generate(model, src, record=True),
                       "sampling": lambda: generate(model, src, Sampling(1.5)),
                       "beam search (4)": lambda: beam_search(model, src, 4)})
    report(moves, times, first, reference, typed="a new sentence typed", reference_name="model.translator.decoding")


def browser_side() -> None:
    browser_bytes("我有一只猫", "translate", [*(f"translate?part={p}" for p in PARTS), "encoder-decoder"])


if __name__ == "__main__":
    command(__file__, __doc__, server_side, browser_side)
