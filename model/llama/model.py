"""Llama written by hand, on the project's one block (model.layers.Block): token embedding, Pre-norm blocks of RoPE
grouped-query self-attention (model.llama.attention) and a SwiGLU feed-forward network, RMSNorm throughout, a final
RMSNorm, an output tied to the embedding or its own. The block of today's chat models (SmolLM2, Llama, Qwen, Mistral).

Its parameters are named as the one block names them (blocks.{i}.self_attn.q_proj, blocks.{i}.mlp.gate_proj,
blocks.{i}.norm1 for input_layernorm, blocks.{i}.norm2 for post_attention_layernorm; embed_tokens, norm, lm_head);
`from_pretrained` reads a Hugging Face Llama directory into them.
"""
from pathlib import Path

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from locales import N_
from model.decoder_only import CausalLMOutput, DecoderOnly
from model.facts import ModelFacts
from model.family import Capability
from model.kinds import ModelKind
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
from model.masks import decoder_mask
from model.messages import Later


class SwiGLU(nn.Module):
    """down(silu(gate(h)) * up(h)), no biases."""

    def __init__(self, hidden: int, inner: int):
        super().__init__()
        self.gate_proj = nn.Linear(hidden, inner, bias=False)
        self.up_proj = nn.Linear(hidden, inner, bias=False)
        self.down_proj = nn.Linear(inner, hidden, bias=False)

    def run(self, h: Tensor, record: bool = False) -> tuple[Tensor | None, Tensor, tuple[Tensor, ...]]:
        """(the gated hidden layer (B, T, inner) when recording, else None; the output (B, T, E); when recording,
        its two halves: gate(h) before the SiLU and up(h), each (B, T, inner))."""
        gate, up = self.gate_proj(h), self.up_proj(h)
        gated = F.silu(gate) * up
        return (gated if record else None), self.down_proj(gated), ((gate, up) if record else ())


LlamaOutput = CausalLMOutput  # what Llama.forward returns
CAPABILITIES = frozenset({Capability.CAUSAL, Capability.GENERATION})  # what a Llama can do (model.family)
# The output matrix read OUT_WORDS words at a time for SPLIT_ROWS rows: 30-40 rows took 0.83-0.88x the CPU of one
# product against all 49,152 words (one thread, bench/output_layer.py, two runs); one row is not faster so.
OUT_WORDS = 2048
SPLIT_ROWS = (8, 256)


class Llama(DecoderOnly):
    """Token embeddings, Pre-norm blocks of RoPE grouped-query attention and SwiGLU, RMSNorm throughout, a final
    RMSNorm, an output tied to the embedding or its own. The stack, forward and the pages' passes are every
    decoder-only family's (model/decoder_only.py); the positions are in the attention (RoPE), none is added."""

    def __init__(self, config: LlamaConfig):
        super().__init__()
        c = self.config = config
        self.max_positions = c.max_position_embeddings
        self.embed_tokens = _embedding(c.vocab_size, c.hidden_size)
        self.blocks = nn.ModuleList(
            Block(c.hidden_size, c.num_attention_heads, c.intermediate_size, dropout=0.0, norm_first=True, bias=False,
                  attention=RotaryGroupedAttention(c.hidden_size, c.num_attention_heads, c.num_key_value_heads,
                                                   c.head_dim, c.rope_theta),
                  mlp=SwiGLU(c.hidden_size, c.intermediate_size),
                  norm=lambda d: nn.RMSNorm(d, eps=c.rms_norm_eps))
            for _ in range(c.num_hidden_layers))
        self.norm = nn.RMSNorm(c.hidden_size, eps=c.rms_norm_eps)
        self.lm_head = None if c.tie_word_embeddings else nn.Linear(c.hidden_size, c.vocab_size, bias=False)

    @property
    def facts(self) -> ModelFacts:
        """A causal language model: Pre-RMSNorm, a final norm, rotary positions, SwiGLU, grouped key/value heads."""
        c = self.config
        return ModelFacts(ModelKind.LLAMA, c.num_hidden_layers, c.num_attention_heads, c.hidden_size,
                          c.intermediate_size, "silu", norm_first=True, final_norm=True, positional="rotary",
                          max_positions=c.max_position_embeddings, vocab_size=c.vocab_size, token_scale=False,
                          capabilities=CAPABILITIES, kv_heads=c.num_key_value_heads, rms_norm=True, gated=True,
                          rope_base=c.rope_theta, biases=False)

    def embed(self, input_ids, token_type_ids=None, record=False, past: int = 0) -> tuple[Tensor, None]:
        """(B, T) ids -> W_E[ids] (B, T, E): no position added (RoPE rotates q and k inside attention), so no
        embedding trace of its own (a page shows X = E). token_type_ids is ignored."""
        if past + input_ids.size(1) > self.max_positions:
            raise ValueError(f"{past + input_ids.size(1)} tokens is more than this model's {self.max_positions} "
                             "positions")
        return self.embed_tokens(input_ids), None

    def causal_attention_mask(self, size: int, attention_mask: Tensor | None = None, attn_mask: Tensor | None = None,
                              dtype=torch.float32, past: int = 0) -> Tensor:
        """As Hugging Face's Llama: one additive mask, every blocked key (later, padding, or blocked by an extra
        attn_mask) at the dtype's finite minimum (model.masks.decoder_mask)."""
        return decoder_mask(size, past, attention_mask, attn_mask, dtype)

    @property
    def final_norm(self) -> nn.RMSNorm:
        return self.norm

    def lm_logits(self, hidden: Tensor) -> Tensor:
        """(..., E) after the final norm -> (..., V). A few rows at once (a batch's step, a step's logit lens) are read
        against OUT_WORDS words of the output matrix at a time, a sixth faster than one product against all 49,152
        words: the same dot products over E (on SmolLM2's shapes bit for bit, bench/output_layer.py checks it)."""
        weight = self.embed_tokens.weight if self.lm_head is None else self.lm_head.weight
        rows = hidden.numel() // hidden.size(-1)
        if not SPLIT_ROWS[0] <= rows <= SPLIT_ROWS[1] or weight.size(0) <= OUT_WORDS:
            return F.linear(hidden, weight)
        return torch.cat([F.linear(hidden, part) for part in weight.split(OUT_WORDS)], -1)

    @classmethod
    def from_pretrained(cls, directory) -> "Llama":
        """A Hugging Face Llama directory (config.json, model.safetensors): its tensors, memory-mapped, become the
        parameters (no second copy). UnsupportedLlama names an option not implemented or a size out of bounds,
        model.loading.checkpoint.CheckpointError a file it cannot read or a tensor of another shape."""
        directory = Path(directory)
        config = check_checkpoint(directory)
        return cls.from_state(config, lambda: read_weights(directory))

    @classmethod
    def from_state(cls, config: LlamaConfig, read) -> "Llama":
        """A Llama of `config` whose parameters are the tensors read() gives (Hugging Face's names, each checked
        against the config's shapes): taken as they are, nothing allocated beside them. Raises CheckpointError."""
        try:
            hf = read()
            check_shapes(config, hf)  # again: the file may have changed since it was checked
            with torch.device("meta"):  # nothing allocated: the tensors read become the parameters
                model = cls(config)
            model.load_state_dict(ours(hf, config), strict=True, assign=True)
        except (RuntimeError, MemoryError) as e:  # never torch's own text
            raise CheckpointError(NOT_ENOUGH_MEMORY if out_of_memory(e) else Later(
                N_("its weights do not match its config ({error} while reading them)"), error=type(e).__name__),
            ) from None
        return model.eval()


def _embedding(rows: int, width: int) -> nn.Embedding:
    """nn.Embedding, initialised as torch does, except when built on the meta device (from_state: its weight is
    read, not drawn): there, torch's normal_ imports torch._dynamo, 2.9 s of a start."""
    if torch.empty(0).device.type == "meta":
        return nn.Embedding(rows, width, _weight=torch.empty(rows, width))
    return nn.Embedding(rows, width)


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
            name = name.replace("layers.", "blocks.", 1)
            for theirs, mine in _RENAMED.items():
                name = name.replace(f".{theirs}.", f".{mine}.")
        if tensor.dtype != torch.float32:
            tensor = tensor.float()
        out[name] = tensor.contiguous()
    return out

