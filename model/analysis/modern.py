"""What changed from the 2017 Transformer to today's LLMs, measured on real weights (the From 2017 to today page).

RoPE's relative property on a real model: one query and one key of SmolLM2's own (a layer's attention input for a
text, projected by its W_Q and W_K), scored at their own positions and at the same positions shifted by s: rotated
(RoPE), the score stays the same to float32 rounding; with the sinusoidal table added to the input instead (the 2017
way, the same weights), it does not.

The key/value cache of a configuration: how many numbers writing one more token keeps, from the config alone."""
import json
import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

from model.positional import sinusoidal_table

CONFIGS = Path(__file__).resolve().parents[1] / "weights" / "configs"


@dataclass(frozen=True)
class Shifted:
    shifts: np.ndarray  # (S,) 0, 1, ...
    rotated: np.ndarray  # (S,) the score with q at m + s and k at n + s, RoPE
    added: np.ndarray  # (S,) the same with the sinusoidal table added to the attention's input instead


def residual(model, ids: torch.Tensor, layer: int) -> torch.Tensor:
    """(T, E) the residual stream entering block `layer` for ids (T,): the embeddings, then the layers before it."""
    x, _ = model.embed(ids[None].clone(), None, False)
    for index in range(layer):
        x = model.layer_output(index, x)
    return x[0]


def attention_input(model, ids: torch.Tensor, layer: int) -> torch.Tensor:
    """(T, E) block `layer`'s attention input for ids (T,): its residual, then the block's first norm (RMSNorm)."""
    return model.blocks[layer].norm1(residual(model, ids, layer))


def shifted_scores(model, ids: torch.Tensor, layer: int, head: int, query: int, key: int, shifts: int) -> Shifted:
    """The scaled score q.k/sqrt(d) of token `query` with token `key` (key <= query) in one head, at positions
    (query + s, key + s) for s = 0 .. shifts - 1; at s = 0, the model's own score of the pair (a test compares them)."""
    from model.llama.attention import rotate, rotation  # noqa: PLC0415 - the Llama family's own RoPE

    attn = model.blocks[layer].self_attn
    d, group = attn.head_dim, attn.group
    h = attention_input(model, ids, layer)  # (T, E)
    kv_head = head // group
    q = attn.q_proj(h[query]).view(attn.num_heads, d)[head]  # (d,) before rotation
    k = attn.k_proj(h[key]).view(attn.kv_heads, d)[kv_head]
    scale = 1.0 / math.sqrt(d)
    positions = query + shifts
    cos, sin = rotation(0, positions, d, float(attn.theta))  # (P, d)
    s = torch.arange(shifts)
    rq = rotate(q.expand(shifts, d), cos[query + s], sin[query + s])
    rk = rotate(k.expand(shifts, d), cos[key + s], sin[key + s])
    rotated = (rq * rk).sum(-1) * scale
    table = sinusoidal_table(positions, h.size(-1))  # (P, E): added to the input, as the 2017 Transformer adds it
    aq = attn.q_proj(h[query] + table[query + s]).view(shifts, attn.num_heads, d)[:, head]
    ak = attn.k_proj(h[key] + table[key + s]).view(shifts, attn.kv_heads, d)[:, kv_head]
    added = (aq * ak).sum(-1) * scale
    return Shifted(s.numpy(), rotated.detach().numpy(), added.detach().numpy())


@dataclass(frozen=True)
class CacheShape:
    """What a key/value cache keeps per token: a key and a value of head_dim numbers per key/value head per layer."""

    name: str
    layers: int
    heads: int  # query heads
    kv_heads: int  # key/value heads: fewer than the query heads under grouped-query attention
    head_dim: int

    def bytes(self, tokens: int, dtype_bytes: int = 2, heads: int | None = None) -> int:
        """The cache at `tokens` tokens (bfloat16 by default, as LLMs are served); heads: as many key/value heads as
        that instead (full multi-head: the query heads)."""
        return 2 * self.layers * (heads or self.kv_heads) * self.head_dim * tokens * dtype_bytes


def cache_shape(name: str, config: dict) -> CacheShape:
    """From a Hugging Face config.json's fields: a BERT or GPT-2 (one key/value head per query head) or a Llama."""
    if "num_key_value_heads" in config:
        heads = config["num_attention_heads"]
        d = config.get("head_dim") or config["hidden_size"] // heads
        return CacheShape(name, config["num_hidden_layers"], heads, config["num_key_value_heads"], d)
    if "n_layer" in config:  # GPT-2's names
        return CacheShape(name, config["n_layer"], config["n_head"], config["n_head"],
                          config["n_embd"] // config["n_head"])
    heads = config["num_attention_heads"]
    return CacheShape(name, config["num_hidden_layers"], heads, heads, config["hidden_size"] // heads)


def reference_config(name: str) -> dict:
    """A published config this repository keeps (model/weights/configs: GPT-2 small, Llama-3-8B)."""
    return json.loads((CONFIGS / f"{name}.json").read_text())


def cache_shapes() -> list[CacheShape]:
    """MiniLM's (the packaged BERT), GPT-2 small's, SmolLM2's (its GGUF's metadata) and Llama-3-8B's, from their
    configs; a packaged model that is not installed is left out."""
    from model.llama import smollm2  # noqa: PLC0415
    from model.loading.bert_source import packaged_model_dir  # noqa: PLC0415 - the packages, read when asked
    from model.loading.checkpoint import read_raw_config  # noqa: PLC0415

    shapes = []
    minilm = packaged_model_dir()
    if minilm is not None:
        shapes.append(cache_shape("all-MiniLM-L6-v2", read_raw_config(minilm)))
    shapes.append(cache_shape("GPT-2 small", reference_config("gpt2")))
    found = smollm2.packaged()
    if found is not None:
        shapes.append(cache_shape("SmolLM2-135M", read_raw_config(smollm2.prepared(found))))
    shapes.append(cache_shape("Llama-3-8B", reference_config("llama-3-8b")))
    return shapes


@dataclass(frozen=True)
class Norms:
    x: np.ndarray  # (E,) a residual vector
    layer_norm: np.ndarray  # (E,) (x - mean) / std, no gain
    rms_norm: np.ndarray  # (E,) x / rms, no gain
    mean: float
    std: float
    rms: float


def norms_of(x: torch.Tensor, eps: float = 1e-5) -> Norms:
    """LayerNorm (centred, then scaled) and RMSNorm (scaled only: the mean kept) of one vector, without their gains."""
    x = x.double()
    mean, var = x.mean(), x.var(unbiased=False)
    rms = x.pow(2).mean().sqrt()
    return Norms(x.float().numpy(), ((x - mean) / (var + eps).sqrt()).float().numpy(),
                 (x / (x.pow(2).mean() + eps).sqrt()).float().numpy(), float(mean), float(var.sqrt()), float(rms))
