"""Models that read token ids: the app's randomly initialised encoder and encoder-decoder.

Token embedding * sqrt(d) + positions (sinusoidal or learned), then the stacks of transformer.py.
"""
import dataclasses
import math
from dataclasses import dataclass

from torch import Tensor, nn

from model.facts import ENCODER, ENCODER_DECODER, ModelFacts
from model.family import Capability
from model.layers import EncoderLayer
from model.masks import causal_mask
from model.masks import key_padding_mask as to_key_padding_mask
from model.positional import LearnedPositionalEmbedding, SinusoidalPositionalEncoding
from model.recording import TokenEncoder
from model.trace import EmbeddingTrace, TransformerTrace
from model.transformer import Encoder, Transformer

# What the models of token ids can do (model.family): an encoder; an encoder-decoder, whose decoder cross-attends
ENCODER_CAPABILITIES = frozenset({Capability.ENCODER})
ENCODER_DECODER_CAPABILITIES = frozenset({Capability.ENCODER, Capability.CROSS_ATTENTION})


@dataclass(frozen=True)
class TextConfig:
    """A model that reads token ids: its vocabulary, sizes, activation, LayerNorm placement and positions."""

    vocab_size: int
    d_model: int = 128
    nhead: int = 4
    num_layers: int = 2  # the encoder's layers (and as many decoder layers in a TextTransformer)
    d_ff: int = 512
    activation: str = "gelu"  # or "relu" (a function such as F.gelu is accepted too)
    norm_first: bool = False  # Pre-LN (with a final norm) instead of Post-LN
    positional: str = "sinusoidal"  # or "learned"
    max_len: int = 512  # positions
    dropout: float = 0.1


def _name(activation) -> str:
    """An activation given by name ("gelu") or as a function (F.gelu) -> its name."""
    return activation if isinstance(activation, str) else activation.__name__


class TextEmbedding(nn.Module):
    """ids (B, T) -> token embedding * sqrt(d) + position, then dropout."""

    def __init__(self, vocab_size, d_model, positional="sinusoidal", max_len=512, dropout=0.1):
        super().__init__()
        if positional not in ("sinusoidal", "learned"):
            raise ValueError(f"positional must be 'sinusoidal' or 'learned', not {positional!r}")
        self.token_embedding = nn.Embedding(vocab_size, d_model)
        nn.init.normal_(self.token_embedding.weight, std=d_model ** -0.5)  # so that * sqrt(d) has unit scale
        self.position = (SinusoidalPositionalEncoding(d_model, max_len) if positional == "sinusoidal"
                         else LearnedPositionalEmbedding(max_len, d_model))
        self.dropout = nn.Dropout(dropout)

    def forward(self, input_ids: Tensor, record: bool) -> tuple[Tensor, EmbeddingTrace | None]:
        token = self.token_embedding(input_ids) * math.sqrt(self.token_embedding.embedding_dim)  # (B, T, E)
        position = self.position(input_ids.size(1))  # (1, T, E)
        summed = token + position
        x = self.dropout(summed)
        return x, (EmbeddingTrace(token, position, None, summed, x) if record else None)


class EmbeddedTextEncoder(TokenEncoder):
    """A TokenEncoder whose ids go through a TextEmbedding (self.embedding) and whose padding is Hugging Face's
    attention_mask; a subclass builds self.embedding, self.encoder and self.max_positions."""

    def embed(self, input_ids, token_type_ids, record):
        """token_type_ids is accepted for BERT's signature and ignored."""
        return self.embedding(input_ids, record)

    def key_padding(self, attention_mask, dtype=None) -> Tensor | None:
        return None if attention_mask is None else to_key_padding_mask(attention_mask)

    def position_vectors(self) -> Tensor:
        """(max_positions, E): what is added at each position, the sinusoidal table or the learned vectors."""
        return self.embedding.position(self.max_positions)[0]


class TextEncoder(EmbeddedTextEncoder):
    """TextEmbedding -> Encoder (Post-LN, or Pre-LN with a final norm): the app's random model, recorded as
    model.recording.TokenEncoder records."""

    def __init__(self, config: TextConfig):
        super().__init__()
        c = self.config = config
        self.max_positions = c.max_len
        self.embedding = TextEmbedding(c.vocab_size, c.d_model, c.positional, c.max_len, c.dropout)
        layer = EncoderLayer(c.d_model, c.nhead, c.d_ff, c.dropout, c.activation, batch_first=True,
                             norm_first=c.norm_first)
        self.encoder = Encoder(layer, c.num_layers, nn.LayerNorm(c.d_model) if c.norm_first else None,
                               enable_nested_tensor=False)
        self.facts = ModelFacts(ENCODER, c.num_layers, c.nhead, c.d_model, c.d_ff, _name(c.activation),
                                c.norm_first, final_norm=c.norm_first, positional=c.positional,
                                max_positions=c.max_len, vocab_size=c.vocab_size, capabilities=ENCODER_CAPABILITIES)


class TextTransformer(nn.Module):
    """Source and target ids -> one shared TextEmbedding -> encoder-decoder Transformer (causal target)."""

    def __init__(self, config: TextConfig):
        super().__init__()
        c = self.config = config
        self.max_positions = c.max_len
        self.embedding = TextEmbedding(c.vocab_size, c.d_model, c.positional, c.max_len, c.dropout)
        self.transformer = Transformer(c.d_model, c.nhead, c.num_layers, c.num_layers, c.d_ff, c.dropout,
                                       c.activation, batch_first=True, norm_first=c.norm_first)
        self.facts = ModelFacts(ENCODER_DECODER, c.num_layers, c.nhead, c.d_model, c.d_ff, _name(c.activation),
                                c.norm_first, final_norm=True, positional=c.positional, max_positions=c.max_len,
                                vocab_size=c.vocab_size, decoder_layers=c.num_layers,
                                capabilities=ENCODER_DECODER_CAPABILITIES)

    def forward(self, src_ids, tgt_ids, src_attention_mask=None, tgt_attention_mask=None, *, record=False):
        """(B, S), (B, T) ids -> decoder output (B, T, E), and a TransformerTrace when record=True."""
        src, src_emb = self.embedding(src_ids, record)
        tgt, tgt_emb = self.embedding(tgt_ids, record)
        src_kpm = None if src_attention_mask is None else to_key_padding_mask(src_attention_mask)
        tgt_kpm = None if tgt_attention_mask is None else to_key_padding_mask(tgt_attention_mask)
        out = self.transformer(src, tgt, tgt_mask=causal_mask(tgt.size(1), device=tgt.device),
                               src_key_padding_mask=src_kpm, tgt_key_padding_mask=tgt_kpm,
                               memory_key_padding_mask=src_kpm, record=record)
        if not record:
            return out, None
        out, trace = out
        return out, TransformerTrace(dataclasses.replace(trace.encoder, embeddings=src_emb),
                                     dataclasses.replace(trace.decoder, embeddings=tgt_emb))
