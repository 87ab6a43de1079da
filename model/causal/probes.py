"""What an induction head is, measured: repeat probes, copy accuracy, induction and previous-token scores.

A repeat probe is L random words (L = 12) followed by the same L words. On its second copy a model that copies from
context predicts each word from its first occurrence: copy accuracy is the share of the second copy's words
(positions L+1 .. 2L-1) predicted by argmax at the position before (position L, the copy's first word, cannot be
known). The circuit (Olsson et al. 2022): a previous-token head in an earlier layer writes "the word before me" into
each position; an induction head then attends from position i to the position after the earlier occurrence of
word i, i - L + 1 here, and copies what it finds there.

    induction score of a head      = mean over L <= i <= 2L-1 of attention(i -> i - L + 1)
    previous-token score of a head = mean over i >= 1 of attention(i -> i - 1)
    sink score of a head           = mean over i >= 1 of attention(i -> 0): the share a head leaves on the first
                                     token whatever it is (the attention sink of trained LLMs, Xiao et al. 2023)

On a text that is not a probe (a page's own text), the induction score averages attention(i -> j + 1) over every i
whose word occurred before at some j < i - 1 (its latest earlier occurrence).
"""
import torch
from torch import Tensor

from model.analysis.head_stats import induction_pairs

PROBE_LENGTH = 12  # L: words in each copy
PROBES, PROBE_SEED = 500, 1234  # the held-out probes every figure is measured on


def repeat_probes(words: int, n: int, seed: int, length: int = PROBE_LENGTH, first_id: int = 2) -> Tensor:
    """(n, 2L) ids: L words drawn uniformly from ids first_id .. first_id + words - 1, then the same L again."""
    g = torch.Generator().manual_seed(seed)
    first = torch.randint(first_id, first_id + words, (n, length), generator=g)
    return torch.cat([first, first], dim=1)


def copy_accuracy(logits: Tensor, ids: Tensor, length: int = PROBE_LENGTH) -> float:
    """Share of the second copy's words L+1 .. 2L-1 that argmax predicts at the position before; logits (B, 2L, V)."""
    predicted = logits[:, length:2 * length - 1].argmax(-1)  # (B, L-1): at positions L .. 2L-2
    return float((predicted == ids[:, length + 1:2 * length]).float().mean())


def copy_losses(logits: Tensor, ids: Tensor, length: int = PROBE_LENGTH) -> tuple[float, float]:
    """Mean negative log-likelihood (nats) of the first copy's words 2..L and of the second copy's words L+2..2L."""
    nll = -torch.log_softmax(logits[:, :-1], -1).gather(-1, ids[:, 1:, None])[..., 0]  # (B, 2L-1): word t+1 at t
    return float(nll[:, :length - 1].mean()), float(nll[:, length:].mean())


def induction_scores(attentions, length: int = PROBE_LENGTH) -> Tensor:
    """(layers, heads): each head's mean attention from i (L <= i <= 2L-1) to i - L + 1, over a batch of probes;
    attentions: one (B, nh, 2L, 2L) per layer."""
    i = torch.arange(length, 2 * length)
    return torch.stack([a[:, :, i, i - length + 1].mean(dim=(0, 2)) for a in attentions])


def previous_token_scores(attentions) -> Tensor:
    """(layers, heads): each head's mean attention from i to i - 1 (i >= 1); attentions: one (B, nh, T, T) per layer."""
    return torch.stack([a.diagonal(offset=-1, dim1=-2, dim2=-1).mean(dim=(0, 2)) for a in attentions])


def sink_scores(attentions) -> Tensor:
    """(layers, heads): each head's mean attention from i to the first token (i >= 1; the first token can only see
    itself); attentions: one (B, nh, T, T) per layer."""
    return torch.stack([a[:, :, 1:, 0].mean(dim=(0, 2)) for a in attentions])


def text_induction_scores(attentions, ids) -> Tensor | None:
    """(layers, heads) induction scores on one text (ids (T,), attentions one (1|B, nh, T, T) per layer, row 0 read);
    None when no word of the text repeats (model.analysis.head_stats.induction_pairs says where each looks)."""
    rows, cols = induction_pairs(ids)
    if not rows.size:
        return None
    rows, cols = torch.from_numpy(rows), torch.from_numpy(cols)
    return torch.stack([a[0][:, rows, cols].mean(-1) for a in attentions])
