"""The neuron view: one query's score with every key, written out as the tutorials compute it.

    s_j = (q · k_j) × scale = (Σ_d q_d k_jd) × scale,   p_j = softmax_j(s_j + M_j)

From a recorded layer's per-head q and k (model.trace.AttentionTrace); returns every intermediate, so a page can
show the elementwise products q_d·k_jd whose sum is the dot product, and a test can compare each with the trace."""
from dataclasses import dataclass

import numpy as np

from model.masks import is_blocked


@dataclass(frozen=True)
class NeuronView:
    q: np.ndarray  # (hd,) the query's vector in this head
    k: np.ndarray  # (S, hd) every key's vector
    product: np.ndarray  # (S, hd) q_d · k_jd, elementwise
    dot: np.ndarray  # (S,) Σ_d q_d k_jd
    scaled: np.ndarray  # (S,) dot × scale
    mask: np.ndarray  # (S,) 0 where allowed, -inf where blocked
    probs: np.ndarray  # (S,) softmax of scaled + mask
    scale: float


def neuron_view(q, k, scale: float, mask=None) -> NeuronView:
    """q (hd,), k (S, hd), the head's scale (1/√d_k unless the model says otherwise), mask (S,) additive or None."""
    q, k = np.asarray(q, dtype=np.float32), np.asarray(k, dtype=np.float32)
    product = q[None, :] * k  # (S, hd)
    dot = product.sum(-1, dtype=np.float64)  # (S,)
    scaled = dot * scale
    mask = np.zeros_like(scaled) if mask is None else np.where(is_blocked(np.asarray(mask)), -np.inf, 0.0)
    logits = scaled + mask
    top = logits.max() if np.isfinite(logits).any() else 0.0
    weights = np.exp(logits - top)
    probs = weights / weights.sum() if weights.sum() > 0 else np.full_like(weights, np.nan)
    return NeuronView(q, k, product, dot, scaled, mask, probs, float(scale))


def of_trace(attention, head: int, query: int) -> NeuronView:
    """The neuron view of one head and query of an AttentionTrace (batch of one)."""
    mask = None
    if attention.mask is not None:
        mask = np.broadcast_to(attention.mask.numpy(), attention.scores.shape)[0, head, query]
    return neuron_view(attention.q[0, head, query].numpy(), attention.k[0, head].numpy(), attention.scale, mask)
