"""A GPT: a decoder-only Transformer that writes the next word, GPT-2's architecture on the block of model/layers.py.

    x_0 = W_te[ids] + W_pe[0..T-1]                     token + learned position
    x = x + MHA(LN_1(x), causal mask)                  every block, Pre-LN: a query sees itself and the words before
    x = x + FFN(LN_2(x)),  FFN(h) = GELU(h W_1 + b_1) W_2 + b_2
    logits = LN_f(x) W_te^T                            the output tied to the token embedding

GPT -> blocks -> attention, as nanoGPT reads. The same forward reads a whole text, or, given a Cache, only the next
words after it (incremental decoding: each new word costs one row), with any heads switched off (model.heads) and, on
request, every intermediate recorded (model.trace). Parameter names are ours (model/layers.py's, packed in_proj as
torch.nn has it); model.gpt.checkpoint turns GPT-2's (Conv1D, packed c_attn) into them.
"""
from collections.abc import Iterable
from dataclasses import dataclass
from typing import ClassVar

import torch
from torch import Tensor, nn

from model.cache import Cache
from model.facts import GPT as GPT_KIND
from model.facts import ModelFacts, SpecialTokens
from model.family import Capability
from model.gpt.checkpoint import load
from model.gpt.config import GPTConfig
from model.heads import Head, HeadsOff, heads_off, keep_of
from model.kinds import Block as Attention
from model.layers import ACTIVATIONS, Block
from model.masks import hf_blocked, to_additive
from model.positional import LearnedPositionalEmbedding
from model.recording import inputs_and_maps
from model.trace import EmbeddingTrace, LayerTrace, StackTrace

CAPABILITIES = frozenset({Capability.CAUSAL, Capability.GENERATION})  # what a GPT can do (model.family)
BLOCKS = (Attention.DECODER,)  # a GPT's heads are all of its causal self-attention: ?off=1.2


@dataclass(frozen=True)
class GPTOutput:
    """What GPT.forward returns (named as in Hugging Face)."""

    logits: Tensor | None  # (B, T, V) next-word scores; None when the pass stopped early (until=L)
    attentions: tuple[Tensor, ...]  # one (B, nh, T, S) per layer: each row sums to 1 over the words up to it
    last_hidden_state: Tensor  # (B, T, E) after the final LayerNorm (layer L's output with until=L)
    hidden_states: tuple[Tensor, ...] | None = None  # embeddings, each layer's output, the last after LN_f (as HF)
    trace: StackTrace | None = None  # only with record=True
    cache: Cache | None = None  # with a cache or use_cache: every layer's keys and values, the next call's cache


class GPT(nn.Module):
    """Token + learned position embeddings, Pre-LN blocks with causal self-attention, a final LayerNorm, the output
    tied to the token embedding."""

    head_blocks: ClassVar[tuple[Attention, ...]] = BLOCKS  # the attention blocks its heads are in (model.heads)

    def __init__(self, config: GPTConfig, special_tokens: SpecialTokens | None = None):
        super().__init__()
        c = self.config = config
        self.max_positions = c.n_positions
        self.special_tokens = special_tokens or SpecialTokens()
        self.wte = nn.Embedding(c.vocab_size, c.n_embd)
        self.wpe = LearnedPositionalEmbedding(c.n_positions, c.n_embd)
        self.drop = nn.Dropout(c.dropout)
        self.blocks = nn.ModuleList(Block(c.n_embd, c.n_head, c.d_ff, c.dropout, ACTIVATIONS[c.activation_function],
                                          c.layer_norm_epsilon, norm_first=True) for _ in range(c.n_layer))
        self.ln_f = nn.LayerNorm(c.n_embd, eps=c.layer_norm_epsilon)
        self.apply(self._init_weights)
        for block in self.blocks:  # GPT-2: the projections into the residual stream scaled by 1/sqrt(2 N)
            for w in (block.self_attn.out_proj.weight, block.linear2.weight):
                nn.init.normal_(w, std=0.02 / (2 * c.n_layer) ** 0.5)

    @staticmethod
    def _init_weights(module: nn.Module):
        """GPT-2's initialisation: weights N(0, 0.02), biases 0 (LayerNorm: 1 and 0, as built)."""
        if isinstance(module, (nn.Linear, nn.Embedding)):
            nn.init.normal_(module.weight, std=0.02)
            if getattr(module, "bias", None) is not None:
                nn.init.zeros_(module.bias)
        elif isinstance(module, LearnedPositionalEmbedding):
            nn.init.normal_(module.weight, std=0.02)
        elif hasattr(module, "in_proj_weight") and module.in_proj_weight is not None:
            nn.init.normal_(module.in_proj_weight, std=0.02)
            nn.init.zeros_(module.in_proj_bias)

    @property
    def facts(self) -> ModelFacts:
        """A causal language model: Pre-LN, a final norm, learned positions, GELU."""
        c = self.config
        return ModelFacts(GPT_KIND, c.n_layer, c.n_head, c.n_embd, c.d_ff, c.activation_function, norm_first=True,
                          final_norm=True, positional="learned", max_positions=c.n_positions,
                          vocab_size=c.vocab_size, token_scale=False, special_tokens=self.special_tokens,
                          capabilities=CAPABILITIES)

    def forward(self, input_ids, attention_mask=None, record=False, until: int | None = None, *, attn_mask=None,
                output_hidden_states: bool = False, cache: Cache | None = None, use_cache: bool = False,
                off: HeadsOff | None = None) -> GPTOutput:
        """input_ids (B, T); attention_mask (B, T), 1 = word, 0 = padding; attn_mask (T, T) an extra mask on top of
        the causal one. until=L stops after layer L (no final norm, no logits). cache: the keys and values of the
        words before input_ids (then they are the next words only, at the positions after); with it, or with
        use_cache, the output's cache holds these words' too. off: heads switched off."""
        use_cache = use_cache or cache is not None
        past = 0 if cache is None else cache.length
        x, embeddings = self.embed(input_ids, None, record, past)
        mask = self.causal_attention_mask(input_ids.size(1), attention_mask, attn_mask, x.dtype, past)
        if until is not None and not 0 <= until < len(self.blocks):
            raise IndexError(f"layer {until} of a stack of {len(self.blocks)} layers")
        states, maps, traces, kv = [x], [], [], []
        for i, block in enumerate(self.blocks[:None if until is None else until + 1]):
            out = block.run(x, mask=mask, past=None if cache is None else cache.self_attn[i],
                            keep=keep_of(off, Attention.DECODER, i), record=record, use_cache=use_cache)
            x = out.x
            states.append(x)
            maps.append(out.attention)
            traces.append(out.trace)
            kv.append(out.kv)
        hidden = tuple(states) if output_hidden_states else None
        if until is not None:
            return GPTOutput(None, tuple(maps), x, hidden, StackTrace(embeddings, tuple(traces), x) if record else None)
        x = self.ln_f(x)
        if output_hidden_states:
            hidden = (*states[:-1], x)
        return GPTOutput(self.lm_logits(x), tuple(maps), x, hidden,
                         StackTrace(embeddings, tuple(traces), x) if record else None,
                         Cache(tuple(kv)) if use_cache else None)

    def embed(self, input_ids, token_type_ids=None, record=False, past: int = 0):
        """(B, T) ids at positions past.. -> W_te[ids] + W_pe[positions] (B, T, E), EmbeddingTrace or None;
        token_type_ids is ignored."""
        T = input_ids.size(1)
        if past + T > self.max_positions:
            raise ValueError(f"{past + T} words is more than this model's {self.max_positions} positions")
        token = self.wte(input_ids)  # (B, T, E)
        position = self.wpe(past + T)[:, past:]  # (1, T, E)
        summed = token + position
        out = self.drop(summed)
        return out, (EmbeddingTrace(token, position, None, summed, out) if record else None)

    def causal_attention_mask(self, size: int, attention_mask: Tensor | None = None,
                              attn_mask: Tensor | None = None, dtype=torch.float32, past: int = 0) -> Tensor:
        """The mask every layer applies: the causal mask (T, past + T) (True where a word would see a later one:
        blocked), with any extra attn_mask a page adds (bool or additive) on top. With padding (attention_mask
        (B, T), 0 = padding), one additive (B, 1, T, T) mask whose blocked keys, causal or padding, get the dtype's
        minimum, exactly as Hugging Face's GPT-2 builds it (a padding query that sees nothing then spreads evenly,
        as there)."""
        device = None if attn_mask is None else attn_mask.device
        blocked = torch.ones(size, past + size, dtype=torch.bool, device=device).triu(past + 1)  # past+q sees 0..past+q
        if attention_mask is not None and not bool(attention_mask.all()):
            blocked = blocked | (attention_mask == 0)[:, None, None, :]  # (B, 1, T, T)
            merged = torch.zeros(blocked.shape, dtype=dtype).masked_fill(blocked, hf_blocked(dtype))
            return merged if attn_mask is None else merged + to_additive(attn_mask, dtype)
        if attn_mask is None:
            return blocked
        if attn_mask.dtype == torch.bool:
            return blocked | attn_mask
        return to_additive(blocked, dtype) + attn_mask.to(dtype)

    def heads_off(self, heads: Iterable[Head]) -> HeadsOff | None:
        """Heads to switch off, as forward's off= takes them (None for none); a head the model lacks: ValueError."""
        return heads_off(heads, self.config.n_layer, self.config.n_head, BLOCKS)

    def lm_logits(self, hidden: Tensor) -> Tensor:
        """(B, T, E) after the final LayerNorm -> (B, T, V): the tied output, h W_te^T."""
        return hidden @ self.wte.weight.T

    def read_out(self, hidden: Tensor) -> Tensor:
        """A block's output (..., E) -> next-word logits (..., V): the final LayerNorm, then the tied output."""
        return self.lm_logits(self.ln_f(hidden))

    def stack_output(self, x: Tensor) -> Tensor:
        """The last block's output (B, T, E) after the final LayerNorm."""
        return self.ln_f(x)

    def layer_outputs(self, x: Tensor) -> list[Tensor]:
        """Each block's output (B, T, E) from the embeddings' output x, causal, without a trace (autograd may run)."""
        mask, outputs = self.causal_attention_mask(x.size(1), dtype=x.dtype), []
        for block in self.blocks:
            x = block.run(x, mask=mask).x
            outputs.append(x)
        return outputs

    def record(self, input_ids, attention_mask=None, attn_mask=None, until: int | None = None,
               token_type_ids=None) -> StackTrace:
        """The recorded pass's trace: every layer, or layers 0..until."""
        return self.forward(input_ids, attention_mask, True, until, attn_mask=attn_mask).trace

    def inputs_and_attentions(self, input_ids, attention_mask=None, attn_mask=None):
        """forward(record=True) reduced to each block's input (layers, B, T, E), every attention map
        (layers, B, nh, T, T) and the additive mask the blocks applied; bit for bit, without the last block's
        feed-forward. The app keeps these and recomputes the rest."""
        x, _ = self.embed(input_ids, None, True)
        mask = self.causal_attention_mask(input_ids.size(1), attention_mask, attn_mask, x.dtype)
        inputs, maps, _, last = inputs_and_maps(self.blocks, x, mask=mask)
        return inputs, maps, last.self_attn.mask

    def trace_embeddings(self, input_ids, token_type_ids=None) -> EmbeddingTrace:
        """The embeddings alone, recorded: equal to forward(record=True).trace.embeddings."""
        return self.embed(input_ids, None, True)[1]

    def trace_layer(self, index: int, x, attention_mask=None, attn_mask=None) -> LayerTrace:
        """Block `index` alone, recorded, from its input x (B, T, E): equal to forward(record=True).trace.layers."""
        mask = self.causal_attention_mask(x.size(1), attention_mask, attn_mask, x.dtype)
        return self.blocks[index].run(x, mask=mask, record=True).trace

    def position_vectors(self) -> Tensor:
        """(max_positions, E): the learned vector added at each position."""
        return self.wpe(self.max_positions)[0]

    @classmethod
    def from_pretrained(cls, directory) -> "GPT":
        """Read a Hugging Face GPT-2 directory (config.json + model.safetensors, or pytorch_model.bin loaded with
        weights_only=True); raises CheckpointError naming what is wrong, never a path."""
        return load(cls, directory)
