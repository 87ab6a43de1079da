"""Which heads carry copying from context: copy accuracy on repeat probes and the loss on single toy sentences, with
heads switched off (model.heads: a head's context zeroed before W_O), for every single head and for every
pair of heads of one layer; and the circuit read from them.

The circuit (model.causal.probes): the induction head(s) of a later layer, and the previous-token head(s) of an earlier
one. When one head does the work, switching it off is enough to break copying; when two share it, each alone leaves
copying almost whole and only the pair breaks it. `circuit` finds, per layer, the smallest set of at most two heads
whose loss breaks copying (copy accuracy at most BROKEN), the set that costs the sentences least.
"""
import itertools
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

import torch
from torch import Tensor

from model.causal.decoding import logits_of
from model.causal.probes import copy_accuracy

LayerHead = tuple[int, int]  # (layer, head): a head of a model of one block, as model.heads reads it
BROKEN = 0.30  # copy accuracy at or below which copying counts as broken
# the logits of one batch, at most: SmolLM2's 49,152 words make 100 probes of 48 tokens 944 MB at once; the toy GPT's
# batches are far below it (16 MB: the language model page's heads part on SmolLM2 takes 17 s instead of 12 with 32 MB,
# and its replica 100 MB less, bench/llm_pages.py)
LOGITS_BYTES = 16 * 2**20


def rows_per_batch(model, length: int, most: int) -> int:
    """Rows of `length` tokens read at once so that their logits (rows, length, V) stay within LOGITS_BYTES."""
    return max(1, min(most, LOGITS_BYTES // (4 * length * model.config.vocab_size)))


def mean_nll(logits: Callable[[Tensor], Tensor], rows: Sequence[Sequence[int]], batch: int = 1024) -> float:
    """Mean negative log-likelihood (nats per word) of words 2..n of each sentence, each read alone; every predicted
    word weighs the same. logits: ids (b, T) padded on the right -> (b, T, V), from a causal model (so no word sees the
    padding after it)."""
    total, count = 0.0, 0
    with torch.inference_mode():
        for start in range(0, len(rows), batch):
            chunk = rows[start:start + batch]
            lengths = torch.tensor([len(r) for r in chunk])
            ids = torch.nn.utils.rnn.pad_sequence([torch.tensor(r, dtype=torch.long) for r in chunk], batch_first=True)
            valid = torch.arange(ids.size(1) - 1)[None] < (lengths - 1)[:, None]  # (b, T-1): words 2..n
            nll = torch.nn.functional.cross_entropy(logits(ids)[:, :-1].transpose(1, 2), ids[:, 1:], reduction="none")
            total += float(nll[valid].sum())
            count += int(valid.sum())
    return total / count


def sentence_loss(model, rows: Sequence[Sequence[int]], heads: Iterable[LayerHead] = (), batch: int = 1024) -> float:
    """mean_nll of the model with `heads` switched off."""
    heads = tuple(heads)
    batch = rows_per_batch(model, max(map(len, rows), default=1), batch)
    return mean_nll(lambda ids: logits_of(model, ids, heads), rows, batch)


def probe_accuracy(model, probes: Tensor, heads: Iterable[LayerHead] = ()) -> float:
    """copy_accuracy over the probes (n, 2L), read in batches within LOGITS_BYTES (each batch weighs its rows)."""
    batch, heads = rows_per_batch(model, probes.size(1), probes.size(0)), tuple(heads)
    with torch.inference_mode():
        if batch >= probes.size(0):
            return copy_accuracy(logits_of(model, probes, heads), probes)
        parts = [(copy_accuracy(logits_of(model, chunk, heads), chunk), chunk.size(0)) for chunk in probes.split(batch)]
    return sum(accuracy * rows for accuracy, rows in parts) / probes.size(0)


@dataclass(frozen=True)
class Ablated:
    """Heads switched off, and what the model does then."""

    heads: tuple[LayerHead, ...]
    copy_accuracy: float
    loss: float  # on single toy sentences, nats per word

    @property
    def name(self) -> str:
        return "+".join(f"{layer}.{head}" for layer, head in self.heads) or "none"

    def as_dict(self) -> dict:
        return {"heads": self.name, "copy_accuracy": round(self.copy_accuracy, 4), "loss": round(self.loss, 4)}


def ablations(model, probes: Tensor, sentences: Sequence[Sequence[int]]) -> list[Ablated]:
    """No head off, every single head off, then every pair of heads of one layer."""
    layers, heads = model.config.n_layer, model.config.n_head
    sets = [()] + [((ly, h),) for ly in range(layers) for h in range(heads)]
    sets += [((ly, a), (ly, b)) for ly in range(layers) for a, b in itertools.combinations(range(heads), 2)]
    return [Ablated(s, probe_accuracy(model, probes, s), sentence_loss(model, sentences, s)) for s in sets]


def circuit(found: Sequence[Ablated]) -> dict[int, Ablated]:
    """Per layer, the smallest set of its heads (one, else two) whose loss breaks copying, the cheapest for the
    sentences; a layer where none does is left out, and nothing when the model does not copy with every head on."""
    whole = next((a for a in found if not a.heads), None)
    if whole is None or whole.copy_accuracy <= BROKEN:
        return {}
    out = {}
    for size in (1, 2):
        for a in sorted((a for a in found if len(a.heads) == size and a.copy_accuracy <= BROKEN), key=lambda a: a.loss):
            out.setdefault(a.heads[0][0], a)
    return out
