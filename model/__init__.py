"""A Transformer written by hand, module by module, equal to torch.nn and Hugging Face BERT."""
from .attention import MultiHeadAttention, scaled_dot_product_attention
from .layers import DecoderLayer, EncoderLayer
from .text import TextEncoder, TextTransformer
from .transformer import Decoder, Encoder, Transformer

__all__ = ["MultiHeadAttention", "scaled_dot_product_attention", "EncoderLayer", "DecoderLayer",
           "Encoder", "Decoder", "Transformer", "TextEncoder", "TextTransformer"]
