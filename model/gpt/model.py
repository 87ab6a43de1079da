"""A GPT: a decoder-only Transformer that writes the next word, GPT-2's architecture on the block of model/layers.py.

    x_0 = W_te[ids] + W_pe[0..T-1]                     token + learned position
    x = x + MHA(LN_1(x), causal mask)                  every block, Pre-LN: a query sees itself and the words before
    x = x + FFN(LN_2(x)),  FFN(h) = GELU(h W_1 + b_1) W_2 + b_2
    logits = LN_f(x) W_te^T                            the output tied to the token embedding

GPT -> blocks -> attention, as nanoGPT reads; the stack, its forward (a whole text, or the next words after a Cache)
and the pages' passes are every decoder-only family's (model/decoder_only.py). Parameter names are ours
(model/layers.py's, packed in_proj as torch.nn has it); model.gpt.checkpoint turns GPT-2's (Conv1D, packed c_attn)
into them.
"""
import torch
from torch import Tensor, nn

from model.decoder_only import BLOCKS, CausalLMOutput, DecoderOnly
from model.facts import GPT as GPT_KIND
from model.facts import ModelFacts, SpecialTokens
from model.family import Capability
from model.gpt.checkpoint import load
from model.gpt.config import GPTConfig
from model.layers import ACTIVATIONS, Block
from model.masks import hf_blocked, to_additive
from model.positional import LearnedPositionalEmbedding
from model.trace import EmbeddingTrace

CAPABILITIES = frozenset({Capability.CAUSAL, Capability.GENERATION})  # what a GPT can do (model.family)
__all__ = ["BLOCKS", "CAPABILITIES", "GPT", "GPTOutput"]
GPTOutput = CausalLMOutput  # what GPT.forward returns


class GPT(DecoderOnly):
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

    def lm_logits(self, hidden: Tensor) -> Tensor:
        """(B, T, E) after the final LayerNorm -> (B, T, V): the tied output, h W_te^T."""
        return hidden @ self.wte.weight.T

    @property
    def final_norm(self) -> nn.LayerNorm:
        return self.ln_f

    def position_vectors(self) -> Tensor:
        """(max_positions, E): the learned vector added at each position."""
        return self.wpe(self.max_positions)[0]

    @classmethod
    def from_pretrained(cls, directory) -> "GPT":
        """Read a Hugging Face GPT-2 directory (config.json + model.safetensors, or pytorch_model.bin loaded with
        weights_only=True); raises CheckpointError naming what is wrong, never a path."""
        return load(cls, directory)
