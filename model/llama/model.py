"""Llama written by hand, on the project's one block (model.layers.Block): token embedding, Pre-norm blocks of RoPE
grouped-query self-attention (model.llama.attention) and a SwiGLU feed-forward network, RMSNorm throughout, a final
RMSNorm, an output tied to the embedding or its own. The block of today's chat models (SmolLM2, Llama, Qwen, Mistral).

Its parameters are named as the one block names them (blocks.{i}.self_attn.q_proj, blocks.{i}.mlp.gate_proj,
blocks.{i}.norm1 for input_layernorm, blocks.{i}.norm2 for post_attention_layernorm; embed, norm, lm_head);
`from_pretrained` reads a Hugging Face Llama directory into them.
"""
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from locales import N_
from model.cache import Cache
from model.heads import HeadsOff, heads_off, keep_of
from model.kinds import Block as Attention
from model.layers import Block
from model.llama.attention import RotaryGroupedAttention
from model.llama.config import LlamaConfig
from model.loading.checkpoint import (
    NOT_ENOUGH_MEMORY,
    CheckpointError,
    check_shape,
    out_of_memory,
    read_raw_config,
    read_weights,
    weight_shapes,
)
from model.messages import Later
from model.trace import EmbeddingTrace, StackTrace

BLOCKS = (Attention.DECODER,)  # its heads are all of its causal self-attention: ?off=1.2


class SwiGLU(nn.Module):
    """down(silu(gate(h)) * up(h)), no biases."""

    def __init__(self, hidden: int, inner: int):
        super().__init__()
        self.gate_proj = nn.Linear(hidden, inner, bias=False)
        self.up_proj = nn.Linear(hidden, inner, bias=False)
        self.down_proj = nn.Linear(inner, hidden, bias=False)

    def run(self, h: Tensor, record: bool = False) -> tuple[Tensor | None, Tensor]:
        """(the gated hidden layer (B, T, inner) when recording, else None; the output (B, T, E))."""
        gated = F.silu(self.gate_proj(h)) * self.up_proj(h)
        return (gated if record else None), self.down_proj(gated)


@dataclass(frozen=True)
class LlamaOutput:
    logits: Tensor | None  # (B, T, V); None when the pass stopped early (until=L)
    attentions: tuple[Tensor, ...]  # one (B, query heads, T, S) per layer
    last_hidden_state: Tensor  # (B, T, E) after the final RMSNorm (layer L's output with until=L)
    hidden_states: tuple[Tensor, ...] | None = None  # the embeddings, then each layer's output, the last normed
    trace: StackTrace | None = None  # only with record=True
    cache: Cache | None = None  # with a cache or use_cache: every layer's rotated keys and values (kv heads wide)


class Llama(nn.Module):
    head_blocks: ClassVar[tuple[Attention, ...]] = BLOCKS

    def __init__(self, config: LlamaConfig):
        super().__init__()
        c = self.config = config
        self.max_positions = c.max_position_embeddings
        self.embed = nn.Embedding(c.vocab_size, c.hidden_size)
        self.blocks = nn.ModuleList(
            Block(c.hidden_size, c.num_attention_heads, c.intermediate_size, dropout=0.0, norm_first=True, bias=False,
                  attention=RotaryGroupedAttention(c.hidden_size, c.num_attention_heads, c.num_key_value_heads,
                                                   c.head_dim, c.rope_theta),
                  mlp=SwiGLU(c.hidden_size, c.intermediate_size),
                  norm=lambda d: nn.RMSNorm(d, eps=c.rms_norm_eps))
            for _ in range(c.num_hidden_layers))
        self.norm = nn.RMSNorm(c.hidden_size, eps=c.rms_norm_eps)
        self.lm_head = None if c.tie_word_embeddings else nn.Linear(c.hidden_size, c.vocab_size, bias=False)

    def forward(self, input_ids, attention_mask=None, record=False, until: int | None = None, *,
                output_hidden_states: bool = False, cache: Cache | None = None, use_cache: bool = False,
                off: HeadsOff | None = None) -> LlamaOutput:
        """input_ids (B, T); attention_mask (B, T), 1 = token, 0 = padding (left or right; positions count from
        0 at the first column, as Hugging Face's). until=L stops after layer L (no final norm, no logits). cache:
        the keys and values of the tokens before (then input_ids are the next ones); with it or use_cache, the
        output's cache holds these tokens' too. off: heads switched off."""
        use_cache = use_cache or cache is not None
        past = 0 if cache is None else cache.length
        T = input_ids.size(1)
        if past + T > self.max_positions:
            raise ValueError(f"{past + T} tokens is more than this model's {self.max_positions} positions")
        if until is not None and not 0 <= until < len(self.blocks):
            raise IndexError(f"layer {until} of a stack of {len(self.blocks)} layers")
        x = self.embed(input_ids)
        embeddings = EmbeddingTrace(x, torch.zeros_like(x[:1]), None, x, x) if record else None
        mask = torch.ones(T, past + T, dtype=torch.bool).triu(past + 1)  # True: a later token, blocked
        padding = None if attention_mask is None or bool(attention_mask.all()) else attention_mask == 0
        states, maps, traces, kv = [x], [], [], []
        for i, block in enumerate(self.blocks[:None if until is None else until + 1]):
            out = block.run(x, mask=mask, padding=padding, past=None if cache is None else cache.self_attn[i],
                            keep=keep_of(off, Attention.DECODER, i), record=record, use_cache=use_cache)
            x = out.x
            states.append(x)
            maps.append(out.attention)
            traces.append(out.trace)
            kv.append(out.kv)
        trace = StackTrace(embeddings, tuple(traces), x) if record else None
        if until is not None:
            return LlamaOutput(None, tuple(maps), x, tuple(states) if output_hidden_states else None, trace)
        x = self.norm(x)
        hidden = (*states[:-1], x) if output_hidden_states else None
        return LlamaOutput(self.lm_logits(x), tuple(maps), x, hidden, trace, Cache(tuple(kv)) if use_cache else None)

    def lm_logits(self, hidden: Tensor) -> Tensor:
        """(..., E) after the final norm -> (..., V)."""
        return F.linear(hidden, self.embed.weight if self.lm_head is None else self.lm_head.weight)

    def read_out(self, hidden: Tensor) -> Tensor:
        """A block's output -> next-token logits: the final RMSNorm, then the output (model.causal.CausalLM)."""
        return self.lm_logits(self.norm(hidden))

    def heads_off(self, heads) -> HeadsOff | None:
        """Heads as forward's off= takes them (None for none); a head the model lacks: ValueError."""
        return heads_off(heads, self.config.num_hidden_layers, self.config.num_attention_heads, BLOCKS)

    @classmethod
    def from_pretrained(cls, directory) -> "Llama":
        """A Hugging Face Llama directory (config.json, model.safetensors): its tensors, memory-mapped, become the
        parameters (no second copy). UnsupportedLlama names an option not implemented or a size out of bounds,
        model.loading.checkpoint.CheckpointError a file it cannot read or a tensor of another shape."""
        directory = Path(directory)
        config = check_checkpoint(directory)
        try:
            hf = read_weights(directory)
            check_shapes(config, hf)  # again: the file may have changed since it was checked
            with torch.device("meta"):  # nothing allocated: the file's tensors become the parameters
                model = cls(config)
            model.load_state_dict(ours(hf, config), strict=True, assign=True)
        except (RuntimeError, MemoryError) as e:  # never torch's own text
            raise CheckpointError(NOT_ENOUGH_MEMORY if out_of_memory(e) else Later(
                N_("its weights do not match its config ({error} while reading them)"), error=type(e).__name__),
            ) from None
        return model.eval()


def check_shapes(config: LlamaConfig, shapes: dict) -> None:
    """Raises CheckpointError naming the first tensor missing or of another shape (by its Hugging Face name)."""
    for name, expected in config.parameter_shapes().items():
        check_shape(name, shapes.get(name), expected)


def check_checkpoint(directory: Path) -> LlamaConfig:
    """Would from_pretrained accept this directory? Its config, and every tensor's shape from the weights file's
    header: no tensor read, no module built. Raises CheckpointError."""
    config = LlamaConfig.from_hf(read_raw_config(directory))
    check_shapes(config, weight_shapes(directory))
    return config


_RENAMED = {"input_layernorm": "norm1", "post_attention_layernorm": "norm2"}


def ours(hf: dict[str, Tensor], config: LlamaConfig) -> dict[str, Tensor]:
    """Hugging Face's parameter names -> this model's."""
    out = {}
    for name, tensor in hf.items():
        if name == "lm_head.weight" and config.tie_word_embeddings:
            continue  # the same tensor as the embedding
        if name.endswith("rotary_emb.inv_freq"):
            continue  # old checkpoints' RoPE buffer: computed here from rope_theta
        if name.startswith("model."):
            name = name.removeprefix("model.")
            name = name.replace("embed_tokens.", "embed.").replace("layers.", "blocks.", 1)
            for theirs, mine in _RENAMED.items():
                name = name.replace(f".{theirs}.", f".{mine}.")
        if tensor.dtype != torch.float32:
            tensor = tensor.float()
        out[name] = tensor.contiguous()
    return out

