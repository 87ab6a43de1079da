"""What each attention head does, measured: the numbers of the head atlas, from the attention maps alone.

Every property is a mean over the query rows of one head's map p (T queries x T keys, each row sums to 1):
  entropy   -sum_j p_ij ln p_ij (nats; 0 = all on one key, ln T = uniform)
  previous  p_i,i-1 (queries 1..T-1)        next     p_i,i+1 (queries 0..T-2)
  induction p_i,j+1 where the token at i occurred before at j < i-1 (its latest earlier occurrence): an induction
            head looks from a repeated token to the token that followed it last time (only the queries whose token
            occurred before; NaN when none did)
  self      p_ii                            special  sum of p_ij over the special tokens' positions j
  first     p_i,0 (queries 1..T-1): the share left on the first token, whatever it is (the attention sink of
            trained LLMs: a Llama without a [CLS] parks attention there)
  same      sum of p_ij over the other positions j holding the same token id as i (only the queries whose token
            occurs again; NaN when no token does)
  distance  sum_j p_ij |i - j| (tokens)
Vectorised over every layer and head at once: at 512 tokens and 6 x 12 heads, one pass over the maps per property.
"""
from collections.abc import Sequence

import numpy as np

PROPERTIES = ("entropy", "previous", "induction", "next", "self", "special", "first", "same", "distance")


def induction_pairs(ids: Sequence[int]) -> tuple[np.ndarray, np.ndarray]:
    """(rows, columns): for each position i whose token occurred before at j < i - 1 (the latest such j), i and
    j + 1, where an induction head looks from i. On a repeat probe (L words, then the same L), i - L + 1 for every i
    of the second copy."""
    last, rows, cols = {}, [], []
    for i, token in enumerate(int(t) for t in ids):
        j = last.get(token)
        if j is not None and j + 1 < i:
            rows.append(i)
            cols.append(j + 1)
        last[token] = i
    return np.array(rows, dtype=np.int64), np.array(cols, dtype=np.int64)


def head_properties(attentions: np.ndarray, ids: Sequence[int], special: np.ndarray) -> dict[str, np.ndarray]:
    """{property: (layers, heads) float64} for attentions (layers, heads, T, T) over token ids (T,), with
    special (T,) bool marking the special tokens' positions ([CLS], [SEP], <bos>, <eos>, [PAD]). Read a layer at a
    time (attentions may be any sequence of (heads, T, T) maps)."""
    ids, special = np.asarray(ids), np.asarray(special, dtype=bool)
    t = ids.size
    same = (ids[:, None] == ids[None, :]) & ~np.eye(t, dtype=bool)  # (T, T): other positions, same token
    distance = np.abs(np.arange(t)[:, None] - np.arange(t)[None, :]).astype(np.float32)  # (T, T)
    induction = induction_pairs(ids)
    per_layer = [_layer(np.asarray(p, dtype=np.float32), special, same, distance, induction) for p in attentions]
    return {name: np.stack([layer[name] for layer in per_layer]) for name in PROPERTIES}


def _layer(p: np.ndarray, special: np.ndarray, same: np.ndarray, distance: np.ndarray,
           induction: tuple[np.ndarray, np.ndarray]) -> dict[str, np.ndarray]:
    """The properties of one layer's heads, p (heads, T, T): {property: (heads,)}."""
    t = p.shape[-1]
    nan = np.full(p.shape[0], np.nan)
    with np.errstate(divide="ignore", invalid="ignore"):
        plogp = np.where(p > 0, p * np.log(np.where(p > 0, p, 1)), 0)  # 0 ln 0 = 0
    repeated = same.any(-1)  # (T,) the queries whose token occurs again
    return {
        "entropy": -plogp.sum(-1, dtype=np.float64).mean(-1),
        "previous": np.diagonal(p, offset=-1, axis1=-2, axis2=-1).mean(-1, dtype=np.float64) if t > 1 else nan,
        "induction": p[:, induction[0], induction[1]].mean(-1, dtype=np.float64) if induction[0].size else nan,
        "next": np.diagonal(p, offset=1, axis1=-2, axis2=-1).mean(-1, dtype=np.float64) if t > 1 else nan,
        "self": np.diagonal(p, axis1=-2, axis2=-1).mean(-1, dtype=np.float64),
        "special": p[..., special].sum(-1, dtype=np.float64).mean(-1),
        "first": p[:, 1:, 0].mean(-1, dtype=np.float64) if t > 1 else nan,
        "same": (p[:, repeated] * same[repeated]).sum(-1, dtype=np.float64).mean(-1) if repeated.any() else nan,
        "distance": (p * distance).sum(-1, dtype=np.float64).mean(-1),
    }


def special_shares(attentions: np.ndarray, ids: Sequence[int], specials: dict[str, int]) -> dict[str, np.ndarray]:
    """{token text: (layers, heads)}: the mean over queries of the attention that token receives (all its positions
    together), for each special token {text: id} that occurs in ids. A head that parks its attention on [SEP]
    (an attention sink) shows a share near 1."""
    p = np.asarray(attentions, dtype=np.float32)
    ids = np.asarray(ids)
    return {text: p[..., ids == index].sum(-1, dtype=np.float64).mean(-1)
            for text, index in specials.items() if (ids == index).any()}
