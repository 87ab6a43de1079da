"""The block's three kernels written over their own input, for inference without a trace. Beside the formula, never
in it: the block's arithmetic is written once (model/attention.py, model/layers.py) and calls its kernels
(model.attention.Kernels); these compute the same numbers with no fresh (heads x T x T) or (T x d_ff) tensor per step,
which is where the time goes at a few hundred tokens.
- attention: the scale, the mask and the softmax written over the scores tensor (no scores kept: nothing records);
- activation: written over the FFN's hidden tensor (ReLU and GELU; another activation runs as the formula's);
- residual: the sum written over the sub-layer's output.
Q, K and V in one matrix multiply saved under 3 % and is not here (bench/README.md).

Chosen explicitly: `accelerate(model)` gives the model's attention and blocks these kernels (same parameters, same
module tree, nothing copied). Equal to the formula's outputs, tests/model/test_fast.py; the measured gain is in
bench/README.md (bench/forward.py).
"""
import torch
import torch.nn.functional as F
from torch import Tensor, nn

from model.attention import FORMULA, Kernels, dot_products
from model.masks import fully_blocked_rows

_IN_PLACE = {F.relu: torch.relu_, F.gelu: torch.ops.aten.gelu_}


def _attention_probs(q: Tensor, k: Tensor, scale: float, mask: Tensor | None,
                     product=dot_products) -> tuple[None, Tensor]:
    scores = product(q, k).mul_(scale)  # (B, nh, L, S)
    if mask is not None:
        scores.add_(mask)
    probs = torch._softmax(scores, -1, False, out=scores)  # over the scores: no second (B, nh, L, S) tensor
    if mask is not None:
        blocked = fully_blocked_rows(mask)
        if blocked.any():
            probs.masked_fill_(blocked, 0.0)
    return None, probs


def _activate(hidden: Tensor, activation) -> Tensor:
    in_place = _IN_PLACE.get(activation)
    return activation(hidden) if in_place is None else in_place(hidden)


FAST = Kernels(_attention_probs, _activate, lambda x, out: out.add_(x))


def accelerate(model: nn.Module) -> nn.Module:
    """The model with FAST kernels in every module that has kernels (its attention and blocks); returned."""
    for module in model.modules():
        if getattr(module, "kernels", None) is FORMULA:
            module.kernels = FAST
    return model
