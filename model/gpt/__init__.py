"""A GPT written by hand: a decoder-only language model, GPT-2's architecture, on the project's own layers."""
from model.gpt.config import GPTConfig
from model.gpt.model import GPT, GPTOutput

__all__ = ["GPT", "GPTConfig", "GPTOutput"]
