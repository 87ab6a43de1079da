"""What every causal language model here can be asked, whatever its family (the toy GPT and GPT-2 checkpoints today,
the Llama family next): writing (`decoding`: the next word's distribution, greedy or sampled generation with a
key/value cache), the logit lens (`logit_lens`), induction probes and head scores (`probes`), and heads switched off
(`ablation`). The Language model page asks these, never a family's own modules.

A family's model is a causal LM for this package when it has what `CausalLM` says: the forward pass of model.gpt.GPT
(`until=`, `output_hidden_states=`, `off=`, `cache=`, `use_cache=`; an output with `logits`, `attentions`,
`hidden_states`, `cache`), `heads_off`, `read_out`, `head_blocks` (the attention blocks its heads are in:
model.heads), and a config that says `n_layer` and `n_head`.
"""
from collections.abc import Iterable
from typing import Protocol

from torch import Tensor

from model.heads import Head, HeadsOff
from model.kinds import Block


class Shape(Protocol):
    n_layer: int
    n_head: int


class CausalLM(Protocol):
    config: Shape
    head_blocks: tuple[Block, ...]

    def __call__(self, input_ids: Tensor, *, until: int | None = None, output_hidden_states: bool = False,
                 off: HeadsOff | None = None, cache=None, use_cache: bool = False): ...

    def heads_off(self, heads: Iterable[Head]) -> HeadsOff | None:
        """Heads as forward's off= takes them (None for none); a head the model lacks: ValueError."""

    def read_out(self, hidden: Tensor) -> Tensor:
        """(..., E) a block's output -> (..., V) next-word logits: the final norm, then the output layer."""
