"""A decoder-only causal language model's stack, written once for every family that is one (GPT-2's architecture in
model/gpt, Llama in model/llama): the embeddings, the one block (model/layers.py) per layer under one causal mask, a
final norm, the output. The same forward reads a whole text, or, given a Cache, only the next words after it
(incremental decoding: each new word costs one row), with any heads switched off (model.heads) and, on request, every
intermediate recorded (model.trace); the pages' passes (each block's input and map, a layer recorded alone, the
layers' outputs) are cut from it.

A family gives what differs: `embed` (its token and position embeddings), `causal_attention_mask` (the mask its
blocks apply: its own form, as its Hugging Face counterpart builds it, so the two stay equal to the last decimal),
`final_norm`, `lm_logits` (a tied or own output) and its `facts` and `config` (n_layer, n_head).
"""
from collections.abc import Iterable
from dataclasses import dataclass
from typing import ClassVar

import torch
from torch import Tensor, nn

from model.cache import Cache
from model.heads import Head, HeadsOff, heads_off, keep_of
from model.kinds import Block as Attention
from model.recording import inputs_and_maps
from model.trace import EmbeddingTrace, LayerTrace, StackTrace

BLOCKS = (Attention.DECODER,)  # its heads are all of its causal self-attention: ?off=1.2


@dataclass(frozen=True)
class CausalLMOutput:
    """What forward returns (named as in Hugging Face)."""

    logits: Tensor | None  # (B, T, V) next-word scores; None when the pass stopped early (until=L)
    attentions: tuple[Tensor, ...]  # one (B, nh, T, S) per layer: each row sums to 1 over the words up to it
    last_hidden_state: Tensor  # (B, T, E) after the final norm (layer L's output with until=L)
    hidden_states: tuple[Tensor, ...] | None = None  # embeddings, each layer's output, the last after the final norm
    trace: StackTrace | None = None  # only with record=True
    cache: Cache | None = None  # with a cache or use_cache: every layer's keys and values, the next call's cache


class DecoderOnly(nn.Module):
    """The stack and passes every decoder-only family shares; a subclass has `blocks` (model.layers.Block) and the
    parts named in the module's docstring."""

    head_blocks: ClassVar[tuple[Attention, ...]] = BLOCKS  # the attention blocks its heads are in (model.heads)
    blocks: nn.ModuleList

    def embed(self, input_ids, token_type_ids=None, record=False, past: int = 0) \
            -> tuple[Tensor, EmbeddingTrace | None]:
        raise NotImplementedError

    def causal_attention_mask(self, size: int, attention_mask: Tensor | None = None, attn_mask: Tensor | None = None,
                              dtype=torch.float32, past: int = 0) -> Tensor:
        raise NotImplementedError

    @property
    def final_norm(self) -> nn.Module:
        raise NotImplementedError

    def lm_logits(self, hidden: Tensor) -> Tensor:
        raise NotImplementedError

    def forward(self, input_ids, attention_mask=None, record=False, until: int | None = None, *, attn_mask=None,
                output_hidden_states: bool = False, cache: Cache | None = None, use_cache: bool = False,
                off: HeadsOff | None = None) -> CausalLMOutput:
        """input_ids (B, T); attention_mask (B, past + T), 1 = word, 0 = padding (left or right); attn_mask (T, T)
        an extra mask on top of the causal one. until=L stops after layer L (no final norm, no logits). cache: the
        keys and values of the words before input_ids (then they are the next words only, at the positions after);
        with it, or with use_cache, the output's cache holds these words' too. off: heads switched off."""
        use_cache = use_cache or cache is not None
        past = 0 if cache is None else cache.length
        x, embeddings = self.embed(input_ids, None, record, past)
        mask = None  # the next word of a generation sees every word before it: nothing to mask
        if record or input_ids.size(1) > 1 or attention_mask is not None or attn_mask is not None:
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
        if until is None:
            x = self.final_norm(x)
            if output_hidden_states:
                hidden = (*states[:-1], x)
        trace = StackTrace(embeddings, tuple(traces), x) if record else None  # its output: x as returned
        if until is not None:
            return CausalLMOutput(None, tuple(maps), x, hidden, trace)
        return CausalLMOutput(self.lm_logits(x), tuple(maps), x, hidden, trace,
                              Cache(tuple(kv)) if use_cache else None)

    def heads_off(self, heads: Iterable[Head]) -> HeadsOff | None:
        """Heads as forward's off= takes them (None for none); a head the model lacks: ValueError."""
        return heads_off(heads, self.config.n_layer, self.config.n_head, BLOCKS)

    def read_out(self, hidden: Tensor) -> Tensor:
        """A block's output (..., E) -> next-word logits (..., V): the final norm, then the output
        (model.causal.CausalLM)."""
        return self.lm_logits(self.final_norm(hidden))

    def stack_output(self, x: Tensor) -> Tensor:
        """The last block's output (B, T, E) after the final norm."""
        return self.final_norm(x)

    def layer_outputs(self, x: Tensor) -> list[Tensor]:
        """Each block's output (B, T, E) from the embeddings' output x, causal, without a trace (autograd may run)."""
        mask, outputs = self.causal_attention_mask(x.size(1), dtype=x.dtype), []
        for block in self.blocks:
            x = block.run(x, mask=mask).x
            outputs.append(x)
        return outputs

    def layer_output(self, index: int, x: Tensor) -> Tensor:
        """Block `index`'s output (B, T, E) from its input x, causal, without a trace (autograd may run)."""
        return self.blocks[index].run(x, mask=self.causal_attention_mask(x.size(1), dtype=x.dtype)).x

    def record(self, input_ids, attention_mask=None, attn_mask=None, until: int | None = None,
               token_type_ids=None) -> StackTrace:
        """The recorded pass's trace: every layer, or layers 0..until."""
        return self.forward(input_ids, attention_mask, True, until, attn_mask=attn_mask).trace

    def inputs_and_attentions(self, input_ids, attention_mask=None, attn_mask=None, maps: bool = True):
        """forward(record=True) reduced to each block's input (layers, B, T, E), every attention map
        (layers, B, nh, T, T) and the additive mask the blocks applied; bit for bit, without the last block's
        feed-forward. The app keeps these and recomputes the rest. maps=False: no maps (None)."""
        x, _ = self.embed(input_ids, None, True)
        mask = self.causal_attention_mask(input_ids.size(1), attention_mask, attn_mask, x.dtype)
        inputs, probs, _, last = inputs_and_maps(self.blocks, x, maps, mask=mask)
        return inputs, probs, last.self_attn.mask

    def trace_embeddings(self, input_ids, token_type_ids=None) -> EmbeddingTrace | None:
        """The embeddings alone, recorded: equal to forward(record=True).trace.embeddings."""
        return self.embed(input_ids, None, True)[1]

    def trace_layer(self, index: int, x, attention_mask=None, attn_mask=None) -> LayerTrace:
        """Block `index` alone, recorded, from its input x (B, T, E): equal to forward(record=True).trace.layers."""
        mask = self.causal_attention_mask(x.size(1), attention_mask, attn_mask, x.dtype)
        return self.blocks[index].run(x, mask=mask, record=True).trace
