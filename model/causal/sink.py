"""The attention sink (Xiao et al. 2023, "Efficient Streaming Language Models with Attention Sinks"): many heads of a
trained LM give most of their attention to the first token, whatever it is, a place to park attention they do not
need. Is it load-bearing? StreamingLLM evicts the first tokens from the key/value cache: the tokens already read saw
them, the new queries do not. Here: a token's key and value blocked for the queries from `start` on (the answer's),
and the answer's loss measured, or the answer written again, against evicting an ordinary token the same way.

Hidden from every query instead (its column masked from the start), the first token is not missed: the next token
then sees only itself, as a first token does, and becomes the sink (`hiding`)."""
from collections.abc import Collection

import numpy as np
import torch
import torch.nn.functional as F
from torch import Tensor


def first_token_share(attentions: np.ndarray, rows) -> np.ndarray:
    """(layers, heads) the mean attention the query rows give the first token; attentions (layers, heads, T, T)."""
    return np.asarray(attentions[:, :, list(rows), 0], dtype=np.float64).mean(-1)


def evicting(size: int, token: int, start: int, past: int = 0) -> Tensor:
    """(size, past + size) bool, True = blocked: key `token` blocked for the queries at positions >= start (the
    queries at positions past .. past + size - 1); the causal mask is the model's."""
    blocked = torch.zeros(size, past + size, dtype=torch.bool)
    blocked[max(0, start - past):, token] = True
    return blocked


def hiding(size: int, token: int) -> Tensor:
    """(size, size) bool: key `token` blocked for every query but its own."""
    blocked = evicting(size, token, 0)
    blocked[token, token] = False
    return blocked


def answer_loss(model, ids: Tensor, start: int, mask: Tensor | None = None, off=None) -> tuple[float, Tensor]:
    """(mean negative log-likelihood in nats a token of ids[start:] (T,), each read after the tokens before it, under
    the extra mask; the attention maps (layers, heads, T, T)). off: heads switched off (model.heads_off)."""
    out = model(ids[None], attn_mask=mask, off=off)
    loss = float(F.cross_entropy(out.logits[0, start - 1:-1], ids[start:]))
    return loss, torch.stack([a[0] for a in out.attentions])


def greedy_evicting(model, prompt: Tensor, steps: int, token: int, stop: Collection[int] = (), off=None) -> list[int]:
    """Greedy writing after prompt (P,) with `token` evicted from the key/value cache for every query that writes (the
    prompt's last, then each word written): what StreamingLLM's window does to the first token."""
    P = prompt.numel()
    steps = max(0, min(steps, model.max_positions - P))
    out = model(prompt[None], attn_mask=evicting(P, token, P - 1), use_cache=True, off=off)
    written = []
    for _ in range(steps):
        word = out.logits[:, -1].argmax(-1)  # (1,)
        written.append(int(word))
        if written[-1] in stop or len(written) == steps:
            break
        past = out.cache.length
        out = model(word[:, None], cache=out.cache, attn_mask=evicting(1, token, past, past), off=off)
    return written
