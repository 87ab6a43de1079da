"""Which keys a query may see. PyTorch's convention: a bool mask is True where attention is
blocked; a float mask is added to the scores (-inf blocks, 0 lets through).

Defined here once, for the model, the pages, the links and the tests: the names of the masks a page can ask
for, the score a blocked key gets, and which additive values count as blocked.
"""
import torch
from torch import Tensor

# The masks a page offers, by the name a link carries (?mask=...).
NO_MASK, CAUSAL, PADDING, CUSTOM, CAUSAL_PADDING = "none", "causal", "padding", "custom", "causal+padding"
MASK_KINDS = (NO_MASK, CAUSAL, PADDING, CUSTOM, CAUSAL_PADDING)

BLOCKED = float("-inf")  # what a blocked key's score gets added (PyTorch): e^-inf = 0, exactly
# What an additive mask must be at or below for a key to count as blocked when it is drawn or explained: -inf,
# Hugging Face's dtype minimum (hf_blocked), and the -1e9 that many tutorials fill blocked scores with. Above it,
# a value is a bias (-1e4 still leaves a score of 1e4 a chance).
BLOCKED_AT = -1e9


def hf_blocked(dtype=torch.float32) -> float:
    """The score Hugging Face's BERT adds at padding: the dtype's minimum, not -inf (so that a row of nothing but
    padding stays finite, spread evenly, exactly as it does there)."""
    return torch.finfo(dtype).min


def is_blocked(additive):
    """True where an additive mask (a tensor or a numpy array) blocks: at or below BLOCKED_AT."""
    return additive <= BLOCKED_AT


def shows_future(kind: str) -> bool:
    """Whether a mask of this kind lets a query see later keys (False for the causal kinds)."""
    return kind not in (CAUSAL, CAUSAL_PADDING)


def pads(kind: str) -> bool:
    """Whether a mask of this kind pads the sequence and blocks the padding."""
    return kind in (PADDING, CAUSAL_PADDING)


def attention_mask_of(kind: str, size: int, blocked_keys=()) -> Tensor | None:
    """The (T, T) bool attn_mask (True = blocked) of a page's mask kind over `size` tokens, or None if it blocks
    nothing: causal blocks later keys, custom blocks the keys `blocked_keys` (positions past the end are ignored).
    Padding is not in it: it goes to the model as Hugging Face's attention_mask."""
    if kind not in MASK_KINDS:
        raise ValueError(f"mask kind must be one of {MASK_KINDS}, not {kind!r}")
    blocked = causal_mask(size) if not shows_future(kind) else torch.zeros(size, size, dtype=torch.bool)
    if kind == CUSTOM:
        blocked[:, [i for i in blocked_keys if 0 <= i < size]] = True
    return blocked if blocked.any() else None


def causal_mask(size: int, key_size: int | None = None, device=None) -> Tensor:
    """(T, S) bool (S = T by default), True above the diagonal: query i may not see keys j > i."""
    return torch.ones(size, size if key_size is None else key_size, dtype=torch.bool, device=device).triu(1)


def square_subsequent_mask(size: int, device=None, dtype=torch.float32) -> Tensor:
    """The additive causal mask of torch.nn.Transformer.generate_square_subsequent_mask."""
    blocked = causal_mask(size, device=device)
    return torch.zeros(size, size, device=device, dtype=dtype).masked_fill(blocked, BLOCKED)


def decoder_mask(size: int, past: int = 0, attention_mask: Tensor | None = None, attn_mask: Tensor | None = None,
                 dtype=torch.float32) -> Tensor:
    """The additive mask every layer of a decoder-only model applies, (1|B, 1, T, past + T), as Hugging Face's Llama
    builds it: a later key, a padding key (attention_mask (B, past + T), 0 = padding) and any key an extra attn_mask
    blocks (bool, or additive at or below BLOCKED_AT) at the dtype's finite minimum (hf_blocked). Not -inf: the same
    probabilities, and a CPU softmax over -inf takes twice as long (bench/llm.py)."""
    blocked = torch.ones(size, past + size, dtype=torch.bool).triu(past + 1)[None, None]
    if attention_mask is not None and not bool(attention_mask.all()):
        blocked = blocked | (attention_mask == 0)[:, None, None, :]
    if attn_mask is not None:
        blocked = blocked | (attn_mask if attn_mask.dtype == torch.bool else is_blocked(attn_mask))
    return torch.zeros(blocked.shape, dtype=dtype).masked_fill(blocked, hf_blocked(dtype))


def key_padding_mask(attention_mask: Tensor) -> Tensor:
    """Hugging Face's (B, S) attention_mask (1 = token, 0 = padding) -> PyTorch's (True = padding)."""
    return attention_mask == 0


def hf_padding_mask(attention_mask: Tensor, dtype=torch.float32) -> Tensor:
    """Hugging Face's (B, S) attention_mask -> (B, S) additive, the dtype's minimum at padding (hf_blocked)."""
    return (1.0 - attention_mask.to(dtype)) * hf_blocked(dtype)


def to_additive(mask: Tensor | None, dtype=torch.float32) -> Tensor | None:
    """Bool (True = blocked) -> 0 / -inf; a float mask is returned as it is, in `dtype`."""
    if mask is None:
        return None
    if mask.dtype == torch.bool:
        return torch.zeros(mask.shape, dtype=dtype, device=mask.device).masked_fill(mask, BLOCKED)
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

    attn_mask: (L, S) for every batch and head, (B * heads, L, S) as in nn.MultiheadAttention, or (B|1, heads|1, L, S).
    key_padding_mask: (B, S), the same for every query and head.
    """
    merged = None
    if attn_mask is not None:
        if attn_mask.dim() == 2:
            if not torch.jit.is_tracing() and attn_mask.shape != (query_len, key_len):  # a GPT's causal mask, traced
                raise RuntimeError(f"attn_mask should be of size {(query_len, key_len)}, got {tuple(attn_mask.shape)}")
            merged = to_additive(attn_mask, dtype).view(1, 1, query_len, key_len)
        elif attn_mask.dim() == 3:
            expected = (batch_size * num_heads, query_len, key_len)
            if attn_mask.shape != expected:
                raise RuntimeError(f"attn_mask should be of size {expected}, got {tuple(attn_mask.shape)}")
            merged = to_additive(attn_mask, dtype).view(batch_size, num_heads, query_len, key_len)
        elif attn_mask.dim() == 4:  # (B|1, heads|1, L, S): one mask per sequence, as Hugging Face builds them
            b, h, q, k = attn_mask.shape
            if not torch.jit.is_tracing() and (b not in (1, batch_size) or h not in (1, num_heads)
                                               or (q, k) != (query_len, key_len)):  # a traced Llama's mask
                raise RuntimeError(f"attn_mask should be of size {(batch_size, num_heads, query_len, key_len)} "
                                   f"(or 1 for the batch and heads), got {tuple(attn_mask.shape)}")
            merged = to_additive(attn_mask, dtype)
        else:
            raise RuntimeError(f"attn_mask must be 2-D, 3-D or 4-D, got {attn_mask.dim()}-D")
    if key_padding_mask is not None:
        if key_padding_mask.shape != (batch_size, key_len):
            raise RuntimeError(
                f"key_padding_mask should be of size {(batch_size, key_len)}, got {tuple(key_padding_mask.shape)}"
            )
        padding = to_additive(key_padding_mask, dtype).view(batch_size, 1, 1, key_len)
        merged = padding if merged is None else merged + padding
    return merged


def fully_blocked_rows(mask: Tensor) -> Tensor:
    """(..., L, 1) bool: query rows whose every key is -inf in an additive mask. Only -inf, as in PyTorch's
    scaled_dot_product_attention: a row of Hugging Face's finite minimum is softmaxed as Hugging Face does."""
    return torch.isneginf(mask).all(dim=-1, keepdim=True)
