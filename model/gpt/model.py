"""A GPT: a decoder-only Transformer that writes the next word, GPT-2's architecture on the layers of model/layers.py.

    x_0 = W_te[ids] + W_pe[0..T-1]                     token + learned position
    x = x + MHA(LN_1(x), causal mask)                  every block, Pre-LN: a query sees itself and the words before
    x = x + FFN(LN_2(x)),  FFN(h) = GELU(h W_1 + b_1) W_2 + b_2
    logits = LN_f(x) W_te^T                            the output tied to the token embedding

Parameter names are ours (model/layers.py's, packed in_proj as torch.nn has it); model.gpt.checkpoint turns GPT-2's
(Conv1D, packed c_attn) into them. Recording is model.recording.TokenEncoder's, with the causal mask always added.
"""
from dataclasses import dataclass

import torch
from torch import Tensor, nn

from model.facts import GPT as GPT_KIND
from model.facts import ModelFacts, SpecialTokens
from model.gpt.checkpoint import load
from model.gpt.config import GPTConfig
from model.layers import ACTIVATIONS, EncoderLayer
from model.masks import causal_mask, hf_blocked, to_additive
from model.positional import LearnedPositionalEmbedding
from model.recording import TokenEncoder
from model.trace import EmbeddingTrace, LayerTrace, StackTrace
from model.transformer import Encoder


@dataclass(frozen=True)
class GPTOutput:
    """What GPT.forward returns (named as in Hugging Face)."""

    logits: Tensor | None  # (B, T, V) next-word scores; None when the pass stopped early (until=L)
    attentions: tuple[Tensor, ...]  # one (B, nh, T, T) per layer: each row sums to 1 over the words up to it
    last_hidden_state: Tensor  # (B, T, E) after the final LayerNorm (layer L's output with until=L)
    hidden_states: tuple[Tensor, ...] | None = None  # embeddings, each layer's output, the last after LN_f (as HF)
    trace: StackTrace | None = None  # only with record=True


class GPT(TokenEncoder):
    """Token + learned position embeddings, Pre-LN blocks with causal self-attention, a final LayerNorm, the output
    tied to the token embedding."""

    def __init__(self, config: GPTConfig, special_tokens: SpecialTokens | None = None):
        super().__init__()
        c = self.config = config
        self.max_positions = c.n_positions
        self.special_tokens = special_tokens or SpecialTokens()
        self.wte = nn.Embedding(c.vocab_size, c.n_embd)
        self.wpe = LearnedPositionalEmbedding(c.n_positions, c.n_embd)
        self.drop = nn.Dropout(c.dropout)
        layer = EncoderLayer(c.n_embd, c.n_head, c.d_ff, c.dropout, ACTIVATIONS[c.activation_function],
                             c.layer_norm_epsilon, batch_first=True, norm_first=True)
        self.encoder = Encoder(layer, c.n_layer, nn.LayerNorm(c.n_embd, eps=c.layer_norm_epsilon),
                               enable_nested_tensor=False)
        self.apply(self._init_weights)
        for layer in self.encoder.layers:  # GPT-2: the projections into the residual stream scaled by 1/sqrt(2 N)
            for w in (layer.self_attn.out_proj.weight, layer.linear2.weight):
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
                          vocab_size=c.vocab_size, token_scale=False, special_tokens=self.special_tokens)

    def embed(self, input_ids, token_type_ids, record):
        """(B, T) ids -> W_te[ids] + W_pe[0..T-1] (B, T, E), EmbeddingTrace or None; token_type_ids is ignored."""
        token = self.wte(input_ids)  # (B, T, E)
        position = self.wpe(input_ids.size(1))  # (1, T, E)
        summed = token + position
        out = self.drop(summed)
        return out, (EmbeddingTrace(token, position, None, summed, out) if record else None)

    def key_padding(self, attention_mask, dtype=None) -> None:
        """Padding goes into the causal mask (causal_attention_mask), as Hugging Face's GPT-2 builds it."""
        return None

    def causal_attention_mask(self, size: int, attention_mask: Tensor | None = None,
                              attn_mask: Tensor | None = None, dtype=torch.float32) -> Tensor:
        """The mask every layer applies: the causal mask (T, T) (True above the diagonal: blocked), with any extra
        attn_mask a page adds (bool or additive) on top. With padding (attention_mask (B, T), 0 = padding), one
        additive (B, 1, T, T) mask whose blocked keys, causal or padding, get the dtype's minimum, exactly as
        Hugging Face's GPT-2 builds it (a padding query that sees nothing then spreads evenly, as there)."""
        blocked = causal_mask(size, device=None if attn_mask is None else attn_mask.device)
        if attention_mask is not None and not bool(attention_mask.all()):
            blocked = blocked | (attention_mask == 0)[:, None, None, :]  # (B, 1, T, T)
            merged = torch.zeros(blocked.shape, dtype=dtype).masked_fill(blocked, hf_blocked(dtype))
            return merged if attn_mask is None else merged + to_additive(attn_mask, dtype)
        if attn_mask is None:
            return blocked
        if attn_mask.dtype == torch.bool:
            return blocked | attn_mask
        return to_additive(blocked, dtype) + attn_mask.to(dtype)

    def lm_logits(self, hidden: Tensor) -> Tensor:
        """(B, T, E) after the final LayerNorm -> (B, T, V): the tied output, h W_te^T."""
        return hidden @ self.wte.weight.T

    def forward(self, input_ids, attention_mask=None, record=False, until: int | None = None, *, attn_mask=None,
                output_hidden_states: bool = False) -> GPTOutput:
        """input_ids (B, T); attention_mask (B, T), 1 = word, 0 = padding; attn_mask (T, T) an extra mask on top of
        the causal one. until=L stops after layer L (no final norm, no logits)."""
        x, embeddings = self.embed(input_ids, None, record)
        mask = self.causal_attention_mask(input_ids.size(1), attention_mask, attn_mask, x.dtype)
        states = [x]
        x, attentions, trace = self.encoder.run(
            x, lambda layer, h: _kept(layer.encode(h, mask, None, record, True), states), record, until, embeddings)
        if until is not None:
            return GPTOutput(None, attentions, x, tuple(states) if output_hidden_states else None, trace)
        x = self.stack_output(x)
        hidden = (*states[:-1], x) if output_hidden_states else None
        return GPTOutput(self.lm_logits(x), attentions, x, hidden,
                         StackTrace(embeddings, trace.layers, x) if record else None)

    def record(self, input_ids, attention_mask=None, attn_mask=None, until: int | None = None,
               token_type_ids=None) -> StackTrace:
        return self.forward(input_ids, attention_mask, True, until, attn_mask=attn_mask).trace

    def inputs_and_attentions(self, input_ids, attention_mask=None, attn_mask=None):
        x, _ = self.embed(input_ids, None, True)
        return self.encoder.inputs_and_attentions(
            x, self.causal_attention_mask(input_ids.size(1), attention_mask, attn_mask, x.dtype), None)

    def trace_layer(self, index: int, x, attention_mask=None, attn_mask=None) -> LayerTrace:
        mask = self.causal_attention_mask(x.size(1), attention_mask, attn_mask, x.dtype)
        return self.encoder.layers[index].encode(x, mask, None, True)[2]

    def position_vectors(self) -> Tensor:
        """(max_positions, E): the learned vector added at each position."""
        return self.wpe(self.max_positions)[0]

    @classmethod
    def from_pretrained(cls, directory) -> "GPT":
        """Read a Hugging Face GPT-2 directory (config.json + model.safetensors, or pytorch_model.bin loaded with
        weights_only=True); raises CheckpointError naming what is wrong, never a path."""
        return load(cls, directory)


def _kept(result, states: list):
    """layer.encode's (out, probs, trace) -> (out, probs, trace), keeping out in `states` (hidden_states)."""
    states.append(result[0])
    return result
