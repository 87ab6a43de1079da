"""Sizes and cost by the textbook's formulas: parameters and matmul FLOPs per module.

h = d_model, f = d_ff, l = sequence length, b = batch, V = vocabulary, P = positions.
A multiply-add counts as 2 FLOPs, as torch.utils.flop_counter does.
"""
from dataclasses import dataclass


@dataclass(frozen=True)
class Shape:
    """What the counts depend on; build one with from_transformer / from_bert / from_text_encoder."""

    d_model: int
    d_ff: int
    encoder_layers: int
    decoder_layers: int = 0
    vocab_size: int = 0  # token embedding rows (0: the model takes vectors, as nn.Transformer)
    learned_positions: int = 0  # rows of a learned position table (0: sinusoidal or none)
    token_types: int = 0  # BERT's segment embedding rows
    embedding_norm: bool = False  # BERT normalises the embeddings
    final_norms: int = 0  # LayerNorms after the stacks (nn.Transformer: 2; Pre-LN encoder: 1)
    pooler: bool = False
    mlm_head: bool = False  # its decoder weight is tied to the token embedding
    bias: bool = True

    @classmethod
    def from_transformer(cls, d_model=512, d_ff=2048, encoder_layers=6, decoder_layers=6, bias=True) -> "Shape":
        return cls(d_model, d_ff, encoder_layers, decoder_layers, final_norms=2, bias=bias)

    @classmethod
    def from_bert(cls, config, pooler=True, mlm_head=False) -> "Shape":
        return cls(config.hidden_size, config.intermediate_size, config.num_hidden_layers, 0, config.vocab_size,
                   config.max_position_embeddings, config.type_vocab_size, True, 0, pooler, mlm_head)

    @classmethod
    def from_text_encoder(cls, vocab_size, d_model, d_ff, num_layers, norm_first, positional, max_len) -> "Shape":
        return cls(d_model, d_ff, num_layers, 0, vocab_size, max_len if positional == "learned" else 0,
                   final_norms=1 if norm_first else 0)


FORMULAS = {  # what the app shows beside the numbers
    "attention params": r"4h^2 + 4h",
    "ffn params": r"2hf + f + h",
    "layernorm params": r"2h",
    "embedding params": r"Vh + Ph\;(+\,Th + 2h)",
    "attention flops": r"4\,l\,b\,h\,(2h + l)",
    "cross-attention flops": r"2bh\,(2 l_q h + 2 l_k h + 2 l_q l_k)",
    "ffn flops": r"4\,l\,b\,h\,f \;(= 16\,l\,b\,h^2 \text{ for } f = 4h)",
    "grouped attention params": r"2hd\,(n + g)",
    "grouped attention flops": r"4\,l\,h\,d\,(n + g) + 4\,l^2 n\,d",
    "swiglu params": r"3hf",
    "swiglu flops": r"6\,l\,h\,f",
}


def attention_params(h: int, bias: bool = True) -> int:
    return 4 * h * h + (4 * h if bias else 0)  # W_Q, W_K, W_V, W_O and their biases


def ffn_params(h: int, f: int, bias: bool = True) -> int:
    return 2 * h * f + (f + h if bias else 0)


def layer_norm_params(h: int, bias: bool = True) -> int:
    return 2 * h if bias else h


def param_counts(s: Shape) -> dict[str, int]:
    """Parameters per kind of module; the values sum to sum(p.numel() for p in model.parameters())."""
    h, f = s.d_model, s.d_ff
    attention_blocks = s.encoder_layers + 2 * s.decoder_layers
    norms = 2 * s.encoder_layers + 3 * s.decoder_layers + s.final_norms + (1 if s.embedding_norm else 0)
    output = 0
    if s.pooler:
        output += h * h + h
    if s.mlm_head:  # dense + LayerNorm + output bias (the output matrix is the tied token embedding)
        output += h * h + h + layer_norm_params(h) + s.vocab_size
    return {
        "embeddings": (s.vocab_size + s.learned_positions + s.token_types) * h,
        "attention": attention_blocks * attention_params(h, s.bias),
        "ffn": (s.encoder_layers + s.decoder_layers) * ffn_params(h, f, s.bias),
        "layernorm": norms * layer_norm_params(h, s.bias),
        "output": output,
    }


def attention_flops(h: int, query_len: int, key_len: int, batch: int = 1) -> int:
    """Q, K, V and output projections plus q.k and probs.v; 4lbh(2h + l) when query_len == key_len."""
    projections = 2 * batch * h * h * (2 * query_len + 2 * key_len)
    return projections + 4 * batch * query_len * key_len * h


def ffn_flops(h: int, f: int, seq_len: int, batch: int = 1) -> int:
    return 4 * batch * seq_len * h * f


def flops(s: Shape, seq_len: int, batch: int = 1, tgt_len: int | None = None) -> dict[str, int]:
    """Matmul FLOPs of one forward pass, per kind of module (embedding lookups and norms cost no matmul)."""
    h, f, l, b = s.d_model, s.d_ff, seq_len, batch
    t = l if tgt_len is None else tgt_len
    attention = s.encoder_layers * attention_flops(h, l, l, b)
    attention += s.decoder_layers * (attention_flops(h, t, t, b) + attention_flops(h, t, l, b))
    output = (2 * b * h * h if s.pooler else 0) + (2 * b * l * h * (h + s.vocab_size) if s.mlm_head else 0)
    return {
        "attention": attention,
        "ffn": s.encoder_layers * ffn_flops(h, f, l, b) + s.decoder_layers * ffn_flops(h, f, t, b),
        "output": output,
    }


@dataclass(frozen=True)
class DecoderShape:
    """Today's LLM block (Llama's: grouped-query attention, SwiGLU, RMSNorm, RoPE, no biases), decoder-only: n query
    heads and g key/value heads of d dimensions each."""

    d_model: int
    d_ff: int
    layers: int
    heads: int
    kv_heads: int
    head_dim: int
    vocab_size: int
    tied: bool = True  # the output matrix is the token embedding

    @classmethod
    def from_llama(cls, c) -> "DecoderShape":
        return cls(c.hidden_size, c.intermediate_size, c.num_hidden_layers, c.num_attention_heads,
                   c.num_key_value_heads, c.head_dim, c.vocab_size, c.tie_word_embeddings)


def grouped_attention_params(h: int, n: int, g: int, d: int) -> int:
    """W_Q (h x nd), W_K and W_V (h x gd each: one K and V per group of query heads), W_O (nd x h); no biases."""
    return 2 * h * n * d + 2 * h * g * d


def grouped_attention_flops(h: int, n: int, g: int, d: int, seq_len: int) -> int:
    """The four projections, then q.k and probs.v for each of the n query heads (a causal mask skips no multiply)."""
    return 2 * seq_len * h * (2 * n * d + 2 * g * d) + 4 * seq_len * seq_len * n * d


def swiglu_params(h: int, f: int) -> int:
    return 3 * h * f  # gate and up (h x f), down (f x h)


def swiglu_flops(h: int, f: int, seq_len: int) -> int:
    return 6 * seq_len * h * f


def kv_cache_bytes(layers: int, kv_heads: int, head_dim: int, tokens: int = 1, dtype_bytes: int = 4) -> int:
    """Bytes a key/value cache holds for `tokens` tokens: a key and a value of head_dim numbers per key/value head per
    layer (float32 here; a server in bfloat16 halves it)."""
    return 2 * layers * kv_heads * head_dim * tokens * dtype_bytes
