"""One recorded encoder-decoder pass as the page shows it (Seq2SeqRun): the three attentions as read-only arrays.
Both of the page's models make one: the random encoder-decoder (page.py) and the translator (translator_part.py)."""
from dataclasses import dataclass

import numpy as np

from model.masks import is_blocked
from views.widgets.special_tokens import special_positions


@dataclass(frozen=True)
class Seq2SeqRun:
    """One recorded encoder-decoder pass as read-only float32 arrays. Shared by every session."""

    src_tokens: tuple[str, ...]
    tgt_tokens: tuple[str, ...]
    src_total: int  # source tokens before cutting to the model's positions
    tgt_total: int
    encoder_self: np.ndarray  # (layers, heads, S, S)
    decoder_self: np.ndarray  # (layers, heads, T, T), NaN where the causal mask blocks
    cross: np.ndarray  # (layers, heads, T, S): target queries over source keys
    src_special: np.ndarray  # (S,) bool: the model's special tokens in the source (by id)
    tgt_special: np.ndarray  # (T,) bool: and in the target (the translator's <bos>)


def _read_only(array: np.ndarray) -> np.ndarray:
    array = np.ascontiguousarray(array, dtype=np.float32)
    array.flags.writeable = False
    return array


def _probs(layers, block: str) -> np.ndarray:
    return np.stack([getattr(layer, block).probs[0].numpy() for layer in layers])  # (layers, heads, L, S)


def _blocked(layer) -> np.ndarray:
    """(T, T) True where the decoder's additive mask blocks (-inf or a huge negative)."""
    mask = layer.self_attn.mask
    T = layer.self_attn.probs.shape[-1]
    if mask is None:
        return np.zeros((T, T), dtype=bool)
    return np.broadcast_to(is_blocked(mask.numpy()), layer.self_attn.probs.shape)[0, 0]


def attentions(trace, src_tokens, tgt_tokens, src_total: int, tgt_total: int, src_ids, tgt_ids,
               special) -> Seq2SeqRun:
    """The three attentions of a recorded encoder-decoder pass (model.trace.TransformerTrace, a batch of one); ids of
    both texts as read, and the model's special tokens (model.facts.SpecialTokens)."""
    decoder = trace.decoder.layers
    decoder_self = _probs(decoder, "self_attn")
    decoder_self[:, :, _blocked(decoder[0])] = np.nan  # (layers, heads, T, T)
    return Seq2SeqRun(tuple(src_tokens), tuple(tgt_tokens), src_total, tgt_total,
                      _read_only(_probs(trace.encoder.layers, "self_attn")), _read_only(decoder_self),
                      _read_only(_probs(decoder, "cross_attn")), special_positions(np.ravel(src_ids), special),
                      special_positions(np.ravel(tgt_ids), special))
