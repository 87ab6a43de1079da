"""One way to record a pass, for every model here.

A stack of layers (transformer.Encoder, transformer.Decoder) records through Stack: the whole trace, a partial
trace up to layer L, or only what the app keeps (each layer's input and its attention maps, without the last
layer's feed-forward, which no map depends on). A model that embeds token ids and runs an Encoder (BertModel,
TextEncoder) gets its recording from TokenEncoder: forward(record=True, until=L), inputs_and_attentions, and one
layer or the embeddings recorded again from what was kept, bit for bit. The encoder-decoder records its two
stacks through the same Stack, the decoder with its masked self-attention and its cross-attention per layer.

Recording returns values (model.trace); nothing is stored on a module, which every session shares.
"""
import copy

import torch
from torch import Tensor, nn

from model.trace import EmbeddingTrace, LayerTrace, ModelOutput, StackTrace


def _clones(layer: nn.Module, n: int) -> nn.ModuleList:
    return nn.ModuleList(copy.deepcopy(layer) for _ in range(n))


class Stack(nn.Module):
    """N copies of a layer and an optional final norm; the loop that runs and records them."""

    def __init__(self, layer: nn.Module, num_layers: int, norm: nn.Module | None = None):
        super().__init__()
        self.layers = _clones(layer, num_layers)
        self.num_layers, self.norm = num_layers, norm

    def layers_until(self, until: int | None):
        """Layers 0..until (every layer when until is None)."""
        if until is None:
            return self.layers
        if not 0 <= until < len(self.layers):
            raise IndexError(f"layer {until} of a stack of {len(self.layers)} layers")
        return self.layers[:until + 1]


def inputs_and_maps(blocks, x: Tensor, maps: bool = True, **run) -> tuple[Tensor, Tensor | None, Tensor | None,
                                                                          LayerTrace]:
    """Each block's input and attention maps as a recorded pass (Block.run(record=True, **run)) computes them, bit
    for bit, without the last block's feed-forward, which no map depends on: with d_ff = 4E, two thirds of that
    block's multiply-adds (2 E d_ff of 4 E^2 + 2 E d_ff per token).

    Returns inputs (layers, B, T, E), self-attention (layers, B, nh, T, S), cross-attention (layers, B, nh, T, M) or
    None, and the last block's trace (the masks every block applied). maps=False: the inputs alone (both maps None),
    for a caller that recomputes a layer's maps when asked rather than keep them all."""
    inputs, self_maps, cross_maps, last = [], [], [], len(blocks) - 1
    for i, block in enumerate(blocks):
        inputs.append(x)
        out = block.run(x, record=True, ffn=i < last, **run)
        x = out.x
        if not maps:
            continue
        self_maps.append(out.trace.self_attn.probs)
        if out.trace.cross_attn is not None:
            cross_maps.append(out.trace.cross_attn.probs)
    return (torch.stack(inputs), torch.stack(self_maps) if self_maps else None,
            torch.stack(cross_maps) if cross_maps else None, out.trace)


class TokenEncoder(nn.Module):
    """A model of token ids: embeddings, then an Encoder (self.encoder), then a final norm if the stack has one.

    A subclass builds self.encoder and defines embed() and key_padding(); pool() is an optional head on the
    first token (BERT's pooler)."""

    def embed(self, input_ids: Tensor, token_type_ids: Tensor | None, record: bool):
        """(B, T) ids -> the first layer's input (B, T, E), EmbeddingTrace or None."""
        raise NotImplementedError

    def key_padding(self, attention_mask: Tensor | None, dtype) -> Tensor | None:
        """Hugging Face's attention_mask (B, T), 1 = token, 0 = padding -> the key padding mask the layers take."""
        raise NotImplementedError

    def pool(self, x: Tensor) -> Tensor | None:
        return None

    def forward(self, input_ids, attention_mask=None, token_type_ids=None, output_attentions=True, *,
                attn_mask=None, record=False, until: int | None = None) -> ModelOutput:
        """input_ids (B, T); attention_mask (B, T), 1 = token, 0 = padding; token_type_ids (B, T) where the model
        has segments; attn_mask (T, T) bool (True = blocked) or additive, e.g. a causal mask, on top of the padding.

        until=L stops after layer L: last_hidden_state is that layer's output (no final norm, no pooler), and
        attentions and the trace hold layers 0..L."""
        x, embeddings = self.embed(input_ids, token_type_ids, record)
        x, attentions, trace = self.encoder.encode(x, attn_mask, self.key_padding(attention_mask, x.dtype), record,
                                                   embeddings, output_attentions, until)
        if until is not None:
            return ModelOutput(x, attentions, None, trace)
        x = self.stack_output(x)
        return ModelOutput(x, attentions, self.pool(x), StackTrace(embeddings, trace.layers, x) if record else None)

    def record(self, input_ids, attention_mask=None, attn_mask=None, until: int | None = None,
               token_type_ids=None) -> StackTrace:
        """The recorded pass's trace: every layer, or layers 0..until."""
        return self.forward(input_ids, attention_mask, token_type_ids, False, attn_mask=attn_mask, record=True,
                            until=until).trace

    def inputs_and_attentions(self, input_ids, attention_mask=None, attn_mask=None, maps: bool = True):
        """forward(record=True) reduced to each layer's input (layers, B, T, E), every attention map
        (layers, B, heads, T, T) and the additive mask the layers applied (or None); bit for bit, without the
        last layer's feed-forward. The app keeps these and recomputes the rest. maps=False: no maps (None)."""
        x, _ = self.embed(input_ids, None, True)
        return self.encoder.inputs_and_attentions(x, attn_mask, self.key_padding(attention_mask, x.dtype), maps)

    def layer_outputs(self, x: Tensor) -> list[Tensor]:
        """Each layer's output (B, T, E) from the embeddings' output x, without a trace (autograd may run)."""
        outputs: list = []
        self.encoder.encode(x, outputs=outputs)
        return outputs

    def layer_output(self, index: int, x: Tensor) -> Tensor:
        """Layer `index`'s output (B, T, E) from its input x, unmasked, without a trace (autograd may run)."""
        return self.encoder.layers[index].run(x).x

    def stack_output(self, x: Tensor) -> Tensor:
        """forward(record=True).trace.output from the last layer's output x: after the final norm, if any."""
        return x if self.encoder.norm is None else self.encoder.norm(x)

    def trace_embeddings(self, input_ids, token_type_ids=None) -> EmbeddingTrace:
        """The embeddings alone, recorded: equal to forward(record=True).trace.embeddings."""
        return self.embed(input_ids, token_type_ids, True)[1]

    def trace_layer(self, index: int, x, attention_mask=None, attn_mask=None) -> LayerTrace:
        """Layer `index` alone, recorded, from its input x (B, T, E) and the forward pass's masks: equal to
        forward(record=True).trace.layers[index], so a caller can keep each layer's input and recompute the rest."""
        return self.encoder.layers[index].run(x, mask=attn_mask, padding=self.key_padding(attention_mask, x.dtype),
                                              record=True).trace
