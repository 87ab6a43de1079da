"""The Llama family's one config, read from a Hugging Face `config.json` (model_type "llama"). An option this model
does not implement makes the checkpoint unavailable, with the reason: never a silent difference."""
from dataclasses import dataclass, fields


class UnsupportedLlama(ValueError):
    """A Llama checkpoint with an option this model does not implement; the message says which."""


@dataclass(frozen=True)
class LlamaConfig:
    vocab_size: int = 49152
    hidden_size: int = 576
    intermediate_size: int = 1536
    num_hidden_layers: int = 30
    num_attention_heads: int = 9
    num_key_value_heads: int = 3  # each shared by num_attention_heads // num_key_value_heads query heads
    head_dim: int = 64
    rms_norm_eps: float = 1e-5
    rope_theta: float = 10000.0
    max_position_embeddings: int = 8192
    tie_word_embeddings: bool = True

    def __post_init__(self):
        if min(self.vocab_size, self.hidden_size, self.intermediate_size, self.num_hidden_layers,
               self.num_attention_heads, self.num_key_value_heads, self.head_dim) <= 0:
            raise UnsupportedLlama("every size must be positive")
        if self.num_attention_heads % self.num_key_value_heads:
            raise UnsupportedLlama(f"num_key_value_heads ({self.num_key_value_heads}) must divide "
                                   f"num_attention_heads ({self.num_attention_heads})")
        if self.head_dim % 2:
            raise UnsupportedLlama(f"head_dim ({self.head_dim}) must be even: RoPE rotates pairs of dimensions")

    # the names the causal-LM toolkit asks for (model.causal.Shape)
    @property
    def n_layer(self) -> int:
        return self.num_hidden_layers

    @property
    def n_head(self) -> int:
        return self.num_attention_heads

    @property
    def group(self) -> int:
        """Query heads per key/value head."""
        return self.num_attention_heads // self.num_key_value_heads

    @classmethod
    def from_hf(cls, raw: dict) -> "LlamaConfig":
        """A Hugging Face Llama config (its dict); UnsupportedLlama names an option not implemented here."""
        if raw.get("model_type", "llama") != "llama":
            raise UnsupportedLlama(f"model_type is {raw.get('model_type')!r}, not 'llama'")
        rope = raw.get("rope_parameters") or {}
        if raw.get("rope_scaling") or rope.get("rope_type", "default") != "default":
            raise UnsupportedLlama(f"RoPE scaling ({raw.get('rope_scaling') or rope.get('rope_type')}) is not "
                                   "implemented")
        for option in ("attention_bias", "mlp_bias"):
            if raw.get(option):
                raise UnsupportedLlama(f"{option} is not implemented")
        if raw.get("sliding_window"):
            raise UnsupportedLlama("a sliding window is not implemented")
        if raw.get("hidden_act", "silu") != "silu":
            raise UnsupportedLlama(f"hidden_act {raw['hidden_act']!r}: only SwiGLU (silu) is implemented")
        if raw.get("pretraining_tp", 1) != 1:
            raise UnsupportedLlama("pretraining_tp other than 1 is not implemented")
        heads = raw["num_attention_heads"]
        known = {f.name for f in fields(cls)}
        values = {k: v for k, v in raw.items() if k in known and v is not None}
        values.setdefault("num_key_value_heads", heads)
        values.setdefault("head_dim", raw["hidden_size"] // heads)
        values["rope_theta"] = float(rope.get("rope_theta", raw.get("rope_theta", cls.rope_theta)))
        return cls(**values)
