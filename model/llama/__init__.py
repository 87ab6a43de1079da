"""The Llama family written by hand: RoPE, RMSNorm, SwiGLU and grouped-query attention on the one block."""
from model.llama.config import LlamaConfig, UnsupportedLlama
from model.llama.model import Llama, LlamaOutput

__all__ = ["Llama", "LlamaConfig", "LlamaOutput", "UnsupportedLlama"]
