"""Models that read token ids: the app's randomly initialised encoder and encoder-decoder.

Token embedding * sqrt(d) + positions (sinusoidal or learned), then the stacks of transformer.py.
"""
import dataclasses
import math

from torch import Tensor, nn

from model.facts import ENCODER, ENCODER_DECODER, ModelFacts
from model.layers import EncoderLayer
from model.masks import causal_mask
from model.masks import key_padding_mask as to_key_padding_mask
from model.positional import LearnedPositionalEmbedding, SinusoidalPositionalEncoding
from model.recording import TokenEncoder
from model.trace import EmbeddingTrace, TransformerTrace
from model.transformer import Encoder, Transformer


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

    def __init__(self, vocab_size, d_model=128, nhead=4, num_layers=2, dim_feedforward=512, activation="gelu",
                 norm_first=False, positional="sinusoidal", max_len=512, dropout=0.1):
        super().__init__()
        self.max_positions = max_len
        self.embedding = TextEmbedding(vocab_size, d_model, positional, max_len, dropout)
        layer = EncoderLayer(d_model, nhead, dim_feedforward, dropout, activation, batch_first=True,
                             norm_first=norm_first)
        self.encoder = Encoder(layer, num_layers, nn.LayerNorm(d_model) if norm_first else None,
                               enable_nested_tensor=False)
        self.facts = ModelFacts(ENCODER, num_layers, nhead, d_model, dim_feedforward, _name(activation), norm_first,
                                final_norm=norm_first, positional=positional, max_positions=max_len,
                                vocab_size=vocab_size)



class TextTransformer(nn.Module):
    """Source and target ids -> one shared TextEmbedding -> encoder-decoder Transformer (causal target)."""

    def __init__(self, vocab_size, d_model=128, nhead=4, num_layers=2, dim_feedforward=512, activation="gelu",
                 norm_first=False, positional="sinusoidal", max_len=512, dropout=0.1):
        super().__init__()
        self.max_positions = max_len
        self.embedding = TextEmbedding(vocab_size, d_model, positional, max_len, dropout)
        self.transformer = Transformer(d_model, nhead, num_layers, num_layers, dim_feedforward, dropout, activation,
                                       batch_first=True, norm_first=norm_first)
        self.facts = ModelFacts(ENCODER_DECODER, num_layers, nhead, d_model, dim_feedforward, _name(activation),
                                norm_first, final_norm=True, positional=positional, max_positions=max_len,
                                vocab_size=vocab_size, decoder_layers=num_layers)

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
