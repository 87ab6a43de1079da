"""A Transformer written by hand, module by module, equal to torch.nn and Hugging Face BERT."""
from model.attention import MultiHeadAttention, scaled_dot_product_attention
from model.layers import DecoderLayer, EncoderLayer
from model.text_models import TextConfig, TextEncoder, TextTransformer
from model.transformer import Decoder, Encoder, Transformer

__all__ = ["MultiHeadAttention", "scaled_dot_product_attention", "EncoderLayer", "DecoderLayer",
           "Encoder", "Decoder", "Transformer", "TextConfig", "TextEncoder", "TextTransformer"]
