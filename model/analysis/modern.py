"""What changed from the 2017 Transformer to today's LLMs, measured on real weights (the From 2017 to today page).

RoPE's relative property on a real model: one query and one key of SmolLM2's own (a layer's attention input for a
text, projected by its W_Q and W_K), scored at their own positions and at the same positions shifted by s: rotated
(RoPE), the score stays the same to float32 rounding; with the sinusoidal table added to the input instead (the 2017
way, the same weights), it does not.

A configuration's architecture, from the config alone: how many numbers its key/value cache keeps per token, and
what its block's modules cost (parameters, and FLOPs for one token).

SwiGLU's gate on a text: the feed-forward's two halves, gate(h) before its SiLU and up(h), in one of SmolLM2's
layers."""
import functools
import json
import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

from model import stats
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
class Architecture:
    """A Transformer's shape from its config: what its block is made of, what a key/value cache keeps per token
    (a key and a value of head_dim numbers per key/value head per layer), and what each module costs."""

    name: str
    layers: int
    heads: int  # query heads
    kv_heads: int  # key/value heads: fewer than the query heads under grouped-query attention
    head_dim: int
    hidden: int = 0  # h = d_model
    inner: int = 0  # f = the feed-forward's inner size
    vocab: int = 0
    positions: int = 0  # rows of a learned position table (0: none, RoPE)
    token_types: int = 0  # BERT's segment table
    ffn: str = "gelu"  # "relu", "gelu" or "swiglu"
    norm: str = "layer"  # "layer" (LayerNorm: a gain and a bias) or "rms" (RMSNorm: a gain)
    bias: bool = True  # the linear layers' biases
    tied: bool = True  # the output matrix is the token embedding
    decoder: bool = True  # a language model: a final norm and an output matrix; else BERT's embedding norm
    pooler: bool = False  # BERT's pooler (a dense layer over the first token)
    position: str = "learned"  # "sinusoidal" (the 2017 table, added), "learned" (a table, added) or "rope"
    pre_norm: bool = True  # the norm before each sublayer (GPT-2, Llama), or after its add (2017, BERT: Post-LN)

    def bytes(self, tokens: int, dtype_bytes: int = 2, heads: int | None = None) -> int:
        """The cache at `tokens` tokens (bfloat16 by default, as LLMs are served); heads: as many key/value heads as
        that instead (full multi-head: the query heads)."""
        return 2 * self.layers * (heads or self.kv_heads) * self.head_dim * tokens * dtype_bytes

    def block_params(self) -> dict[str, int]:
        """One block's parameters by module: attention (W_Q, W_K, W_V, W_O and their biases), feed-forward, norms."""
        h, f, n, g, d = self.hidden, self.inner, self.heads, self.kv_heads, self.head_dim
        attention = stats.grouped_attention_params(h, n, g, d) + ((n + 2 * g) * d + h if self.bias else 0)
        ffn = stats.swiglu_params(h, f) if self.ffn == "swiglu" else stats.ffn_params(h, f, self.bias)
        return {"attention": attention, "ffn": ffn, "norms": 2 * self.norm_params()}

    def norm_params(self) -> int:
        return 2 * self.hidden if self.norm == "layer" else self.hidden

    def block_flops(self, context: int) -> dict[str, int]:
        """One block's matmul FLOPs for one token that attends to `context` keys (a multiply-add is 2): the four
        projections, the scores q.k and the mix of values for each query head, the feed-forward."""
        h, f, n, g, d = self.hidden, self.inner, self.heads, self.kv_heads, self.head_dim
        return {"projections": 2 * stats.grouped_attention_params(h, n, g, d), "scores": 4 * context * n * d,
                "ffn": 2 * (3 if self.ffn == "swiglu" else 2) * h * f}

    def params(self) -> dict[str, int]:
        """The whole model's parameters: embeddings (tokens, positions, segments; BERT's norm of them), the blocks,
        the final norm and an untied output matrix (or BERT's pooler). Sums to the checkpoint's
        (tests/model/analysis/test_modern.py)."""
        h = self.hidden
        block = sum(self.block_params().values())
        embeddings = (self.vocab + self.positions + self.token_types) * h + (0 if self.decoder else self.norm_params())
        head = (self.norm_params() + (0 if self.tied else self.vocab * h)) if self.decoder else 0
        head += h * h + h if self.pooler else 0
        return {"embeddings": embeddings, "blocks": self.layers * block, "head": head}


def architecture(name: str, config: dict) -> Architecture:
    """From a Hugging Face config.json's fields: a BERT, a GPT-2 (one key/value head per query head) or a Llama; or
    from the 2017 Transformer's (the translator's config: d_model, nhead, d_ff, num_layers)."""
    if "d_model" in config:
        h, n = config["d_model"], config["nhead"]
        return Architecture(name, config["num_layers"], n, n, h // n, h, config["d_ff"], ffn="relu", decoder=False,
                            position="sinusoidal", pre_norm=False)
    if "n_layer" in config:  # GPT-2's names
        h, n = config["n_embd"], config["n_head"]
        return Architecture(name, config["n_layer"], n, n, h // n, h, config.get("n_inner") or 4 * h,
                            config["vocab_size"], config["n_positions"], tied=config.get("tie_word_embeddings", True))
    heads, h = config["num_attention_heads"], config["hidden_size"]
    shape = {"hidden": h, "inner": config.get("intermediate_size", 4 * h), "vocab": config.get("vocab_size", 0)}
    if "num_key_value_heads" in config:  # a Llama: RoPE (no table), SwiGLU, RMSNorm, no biases
        d = config.get("head_dim") or h // heads
        return Architecture(name, config["num_hidden_layers"], heads, config["num_key_value_heads"], d, **shape,
                            ffn="swiglu", norm="rms", bias=False, tied=config.get("tie_word_embeddings", False),
                            position="rope")
    pooler = "BertModel" in config.get("architectures", ["BertModel"])  # BertModel has one; a masked LM's head not
    return Architecture(name, config["num_hidden_layers"], heads, heads, h // heads, **shape,
                        positions=config.get("max_position_embeddings", 0),
                        token_types=config.get("type_vocab_size", 0), ffn=config.get("hidden_act", "gelu"),
                        decoder=False, pooler=pooler, pre_norm=False)


def reference_config(name: str) -> dict:
    """A published config this repository keeps (model/weights/configs: GPT-2 small, Llama-3-8B)."""
    return json.loads((CONFIGS / f"{name}.json").read_text())


def translator_config() -> dict:
    """The shipped translator's config (model/weights/translator): the tutorials' 2017 Transformer, small."""
    return json.loads((CONFIGS.parent / "translator" / "config.json").read_text())


@functools.cache
def architectures() -> tuple[Architecture, ...]:
    """MiniLM's (the packaged BERT), GPT-2 small's, SmolLM2's (its GGUF's metadata) and Llama-3-8B's, from their
    configs; a packaged model that is not installed is left out. Read once per process: the installed packages do
    not change under a running server, and the page's parts that draw them rerun on every click."""
    from model.llama import smollm2  # noqa: PLC0415
    from model.loading.bert_source import packaged_model_dir  # noqa: PLC0415 - the packages, read when asked
    from model.loading.checkpoint import read_raw_config  # noqa: PLC0415

    shapes = []
    minilm = packaged_model_dir()
    if minilm is not None:
        shapes.append(architecture("all-MiniLM-L6-v2", read_raw_config(minilm)))
    shapes.append(architecture("GPT-2 small", reference_config("gpt2")))
    found = smollm2.packaged()
    if found is not None:
        shapes.append(architecture("SmolLM2-135M", read_raw_config(smollm2.prepared(found))))
    shapes.append(architecture("Llama-3-8B", reference_config("llama-3-8b")))
    return tuple(shapes)


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


@dataclass(frozen=True)
class Gates:
    """SwiGLU's two halves in one block for a text: FFN(h) = down(SiLU(gate) * up), h the block's normed residual."""

    gate: np.ndarray  # (T, F) gate(h), before the SiLU
    up: np.ndarray  # (T, F) up(h)

    @property
    def opened(self) -> np.ndarray:
        """(T, F) SiLU(gate): how far each gate lets its up value through."""
        g = self.gate.astype(np.float64)
        return (g / (1.0 + np.exp(-g))).astype(np.float32)

    @property
    def product(self) -> np.ndarray:
        """(T, F) SiLU(gate) * up: what the down matrix reads."""
        return self.opened * self.up

    def shares(self, closed: float = 0.05) -> dict[str, float]:
        """Of all the gates: below 0 (ReLU would give exactly 0), nearly closed (|SiLU(g)| < closed), and with a
        negative product (the up half's sign: a ReLU or GELU layer's activations are almost never below 0)."""
        return {"below_zero": float((self.gate < 0).mean()), "closed": float((np.abs(self.opened) < closed).mean()),
                "negative_product": float((self.product < 0).mean())}

    def histogram(self, low: float = -6.0, high: float = 6.0, bins: int = 96) -> tuple[np.ndarray, np.ndarray]:
        """The gate values' histogram: (bins + 1,) edges and (bins,) shares of all the gates summing to 1; a value
        out of [low, high] counts in the end bin."""
        edges = np.linspace(low, high, bins + 1)
        counts, _ = np.histogram(np.clip(self.gate, low, high), edges)
        return edges, counts / max(self.gate.size, 1)

    def strongest(self, k: int = 24) -> np.ndarray:
        """The k hidden units with the largest |SiLU(gate) * up| on any token, in order of it."""
        peak = np.abs(self.product).max(axis=0)
        return np.argsort(-peak, kind="stable")[:k]


def gates_of(model, ids: torch.Tensor, layer: int) -> Gates:
    """The feed-forward's gate and up halves in block `layer` of a Llama for ids (T,): the residual after the
    block's attention, through its second norm, then gate_proj and up_proj."""
    x = residual(model, ids, layer)[None]
    block = model.blocks[layer]
    mid = block.run(x, mask=model.causal_attention_mask(x.size(1), dtype=x.dtype), ffn=False).x
    h = block.ffn_norm(mid)[0]
    return Gates(block.mlp.gate_proj(h).detach().numpy(), block.mlp.up_proj(h).detach().numpy())
