"""How a model picks its next word when it does not take the most likely one: softmax(z / T), top-k, top-p, a seed.

Shared by the translator's decoding and the GPT's.
"""
from dataclasses import dataclass

import torch
from torch import Tensor

from model.masks import BLOCKED


@dataclass(frozen=True)
class Sampling:
    """softmax(z / temperature), then only the top_k most likely words, then only the smallest set whose
    probability reaches top_p; drawn with a generator seeded by seed."""

    temperature: float = 1.0
    top_k: int | None = None
    top_p: float | None = None
    seed: int = 0

    def __post_init__(self):
        if not self.temperature > 0:
            raise ValueError(f"temperature must be above 0 (greedy is the limit T -> 0), not {self.temperature}")
        if self.top_k is not None and self.top_k < 1:
            raise ValueError(f"top-k must be at least 1, not {self.top_k}")
        if self.top_p is not None and not 0 < self.top_p <= 1:
            raise ValueError(f"top-p must be in (0, 1], not {self.top_p}")

    def probabilities(self, logits: Tensor) -> Tensor:
        """(B, V) logits -> (B, V) the distribution words are drawn from."""
        z = logits / self.temperature
        if self.top_k is not None and self.top_k < z.size(-1):
            kth = z.topk(self.top_k, dim=-1).values[:, -1:]  # (B, 1)
            z = z.masked_fill(z < kth, BLOCKED)  # a word cut off, as a blocked key: e^-inf = 0
        probs = torch.softmax(z, dim=-1)
        if self.top_p is not None:
            sorted_probs, order = probs.sort(dim=-1, descending=True)
            before = sorted_probs.cumsum(-1) - sorted_probs  # probability of the words ranked above each one
            drop = torch.zeros_like(probs, dtype=torch.bool).scatter(-1, order, before >= self.top_p)
            probs = probs.masked_fill(drop, 0.0)
            probs = probs / probs.sum(-1, keepdim=True)
        return probs
