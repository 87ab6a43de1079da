"""A class's batch step (SmolLM2-135M, 40 questions of bench/class_asks.py, 48 words each) through the eager layers
against each layer's graph (model.causal.compiled_batch), quiet and beside a busy Python thread (what a served class's
page scripts and event loop are to the model thread: 10 ms of Python every 30 ms), at Python's default GIL switch
interval (5 ms) and at runtime.model_thread.SWITCH_INTERVAL; one thread, as each model thread of the image. Median
wall ms a step over 2 x 10 steps of each, the same words checked.

    .venv/bin/python bench/batch_layers.py
"""
import contextlib
import statistics
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from bench.class_asks import questions  # noqa: E402
from bench.timing import Busy  # noqa: E402
from harness.record import run  # noqa: E402
from model.causal.batch import Batch  # noqa: E402
from model.causal.chat import conversation  # noqa: E402
from model.causal.compiled_batch import compiled_batch_layers  # noqa: E402
from model.causal.rows import Joining  # noqa: E402
from model.llama.smollm2 import load, packaged  # noqa: E402
from runtime.model_thread import SWITCH_INTERVAL  # noqa: E402

ROWS, STEPS, ROUNDS = 40, 10, 2


def main():
    torch.set_num_threads(1)
    model, tokenizer = load(packaged())
    start = time.perf_counter()
    layers = compiled_batch_layers(model)
    print(f"layer graphs traced and checked in {time.perf_counter() - start:.2f} s: {layers is not None}\n")
    talks = [conversation(tokenizer, q) for q in questions(ROWS)]

    def batch(compiled) -> Batch:
        b = Batch(model)
        b.compiled = compiled
        for i in range(0, ROWS, 4):
            b.join_all([Joining(torch.tensor(t.ids), 48, None, (), None, t.asked.index(True)) for t in talks[i:i + 4]])
        return b

    print("| beside | GIL switch interval | eager step (ms) | layer graphs (ms) | ratio | same words |")
    print("|---|---:|---:|---:|---:|---|")
    with torch.inference_mode():
        for beside in ("nothing", "a busy Python thread"):
            with Busy(0.01, 0.02) if beside != "nothing" else contextlib.nullcontext():
                for interval in (0.005, SWITCH_INTERVAL):
                    sys.setswitchinterval(interval)
                    times, words = {"eager": [], "graphs": []}, {}
                    for _ in range(ROUNDS):
                        for name, compiled in (("eager", None), ("graphs", layers)):
                            b = batch(compiled)
                            for _ in range(STEPS):
                                t = time.perf_counter()
                                b.step()
                                times[name].append(time.perf_counter() - t)
                            words[name] = [r.written for r in b.rows]
                    eager, graphs = (statistics.median(times[k]) * 1000 for k in ("eager", "graphs"))
                    same = "yes" if words["eager"] == words["graphs"] else "NO"
                    print(f"| {beside} | {interval * 1000:g} ms | {eager:.0f} | {graphs:.0f} | {graphs / eager:.2f}x "
                          f"| {same} |")
    sys.setswitchinterval(0.005)


if __name__ == "__main__":
    run(__file__, main)
