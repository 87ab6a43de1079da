"""The rollout page's attention flow (model.analysis.rollout.flow_row: SciPy's compiled maximum flow on whole-number
capacities) against networkx's pure-Python maximum flow on the same graph (what the page ran before, and what a user
of Python writes), in the same run: a query row's flows, for real attention maps of all-MiniLM-L6-v2 (6 layers) and
SmolLM2-135M (30 layers) on one text (runtime.runs.compute_run, as the page reads it), its first 12, 24 and 48
tokens (the maps' first rows and columns; with_residual renormalises the rows); CPU ms of this thread (networkx
holds the GIL throughout), and the largest difference between the two rows' values.

    .venv/bin/python bench/attention_flow.py [--repeats 3]
"""
import argparse
import sys
from pathlib import Path

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from bench.timing import cpu_ms  # noqa: E402
from harness.record import run  # noqa: E402
from model.analysis.rollout import FLOW_MAX_TOKENS, flow_row, with_residual  # noqa: E402
from model.kinds import SourceKey  # noqa: E402
from model.loading.sources import DEFAULT_KEY  # noqa: E402
from runtime.models import Choice  # noqa: E402
from runtime.runs import compute_run  # noqa: E402

TEXT = ("The animal didn't cross the street because it was too tired, so the students who watched it from the "
        "window of the old library wrote a long note about attention, flow and the way each token draws on the others")


def networkx_row(attentions: np.ndarray, query: int, upto: int) -> np.ndarray:
    import networkx as nx  # noqa: PLC0415 - the reference, imported when it runs

    a = with_residual(attentions[:upto + 1])
    graph = nx.DiGraph()
    for layer, i, j in np.ndindex(a.shape):
        graph.add_edge((layer + 1, i), (layer, j), capacity=float(a[layer, i, j]))
    return np.array([nx.maximum_flow_value(graph, (a.shape[0], query), (0, j)) for j in range(a.shape[-1])],
                    dtype=np.float32)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    torch.set_num_threads(1)
    models = {name: compute_run(Choice(key), TEXT).attentions for name, key in
              (("all-MiniLM-L6-v2", DEFAULT_KEY), ("SmolLM2-135M", SourceKey.SMOLLM2))}
    print(f"query row's flows, median CPU ms of {args.repeats} (networkx: 1); FLOW_MAX_TOKENS {FLOW_MAX_TOKENS}\n")
    print("| model | tokens | layers | networkx (ms) | SciPy, flow_row (ms) | ratio | largest difference |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for name, whole in models.items():
        for tokens in (12, 24, FLOW_MAX_TOKENS):
            attentions = np.asarray(whole[:, :, :tokens, :tokens])
            layers, query = attentions.shape[0], 1
            ours = flow_row(attentions, query, layers - 1)
            reference = networkx_row(attentions, query, layers - 1)
            slow = cpu_ms(lambda a=attentions: networkx_row(a, query, layers - 1), 1, warmup=0)
            fast = cpu_ms(lambda a=attentions: flow_row(a, query, layers - 1), args.repeats)
            print(f"| {name} | {tokens} | {layers} | {slow:.0f} | {fast:.1f} | {slow / fast:.0f}x | "
                  f"{float(np.abs(ours - reference).max()):.1e} |")


if __name__ == "__main__":
    run(__file__, main)
