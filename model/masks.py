"""Which keys a query may see. PyTorch's convention: a bool mask is True where attention is
blocked; a float mask is added to the scores (-inf blocks, 0 lets through)."""
import torch
from torch import Tensor


def causal_mask(size: int, key_size: int | None = None, device=None) -> Tensor:
    """(T, S) bool (S = T by default), True above the diagonal: query i may not see keys j > i."""
    return torch.ones(size, size if key_size is None else key_size, dtype=torch.bool, device=device).triu(1)


def square_subsequent_mask(size: int, device=None, dtype=torch.float32) -> Tensor:
    """The additive causal mask of torch.nn.Transformer.generate_square_subsequent_mask."""
    blocked = causal_mask(size, device=device)
    return torch.zeros(size, size, device=device, dtype=dtype).masked_fill(blocked, float("-inf"))


def key_padding_mask(attention_mask: Tensor) -> Tensor:
    """Hugging Face's (B, S) attention_mask (1 = token, 0 = padding) -> PyTorch's (True = padding)."""
    return attention_mask == 0


def to_additive(mask: Tensor | None, dtype=torch.float32) -> Tensor | None:
    """Bool (True = blocked) -> 0 / -inf; a float mask is returned as it is, in `dtype`."""
    if mask is None:
        return None
    if mask.dtype == torch.bool:
        return torch.zeros(mask.shape, dtype=dtype, device=mask.device).masked_fill(mask, float("-inf"))
    if not mask.is_floating_point():
        raise TypeError(f"a mask must be bool or float, got {mask.dtype}")
    return mask.to(dtype)


def merge_masks(
    attn_mask: Tensor | None,
    key_padding_mask: Tensor | None,
    batch_size: int,
    num_heads: int,
    query_len: int,
    key_len: int,
    dtype=torch.float32,
) -> Tensor | None:
    """One additive mask broadcastable over (B, heads, L, S), or None when nothing is masked.

    attn_mask: (L, S) for every batch and head, or (B * heads, L, S) as in nn.MultiheadAttention.
    key_padding_mask: (B, S), the same for every query and head.
    """
    merged = None
    if attn_mask is not None:
        if attn_mask.dim() == 2:
            if attn_mask.shape != (query_len, key_len):
                raise RuntimeError(f"attn_mask should be of size {(query_len, key_len)}, got {tuple(attn_mask.shape)}")
            merged = to_additive(attn_mask, dtype).view(1, 1, query_len, key_len)
        elif attn_mask.dim() == 3:
            expected = (batch_size * num_heads, query_len, key_len)
            if attn_mask.shape != expected:
                raise RuntimeError(f"attn_mask should be of size {expected}, got {tuple(attn_mask.shape)}")
            merged = to_additive(attn_mask, dtype).view(batch_size, num_heads, query_len, key_len)
        else:
            raise RuntimeError(f"attn_mask must be 2-D or 3-D, got {attn_mask.dim()}-D")
    if key_padding_mask is not None:
        if key_padding_mask.shape != (batch_size, key_len):
            raise RuntimeError(
                f"key_padding_mask should be of size {(batch_size, key_len)}, got {tuple(key_padding_mask.shape)}"
            )
        padding = to_additive(key_padding_mask, dtype).view(batch_size, 1, 1, key_len)
        merged = padding if merged is None else merged + padding
    return merged


def fully_blocked_rows(mask: Tensor) -> Tensor:
    """(..., L, 1) bool: query rows whose every key is blocked (-inf) in an additive mask."""
    return torch.isneginf(mask).all(dim=-1, keepdim=True)
