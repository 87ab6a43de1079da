"""The Llama family's one config, read from a Hugging Face `config.json` (model_type "llama"). An option this model
does not implement makes the checkpoint unavailable, with the reason: never a silent difference. Sizes are bounded
before anything is built."""
import dataclasses
import math
from dataclasses import dataclass

from locales import N_
from model.loading import checkpoint
from model.loading.checkpoint import CONFIG, CheckpointError, size_text
from model.messages import Later

# The largest sizes this server builds (SmolLM2-135M: 49,152 tokens, 576 wide, 30 layers, 9 heads); the model as a
# whole must also fit MAX_MODEL_BYTES.
LIMITS = {"vocab_size": 524_288, "hidden_size": 8192, "intermediate_size": 32_768, "num_hidden_layers": 128,
          "num_attention_heads": 128, "num_key_value_heads": 128, "head_dim": 512,
          "max_position_embeddings": 1 << 20}
# Llama options that change the computation, with the one value this model implements.
FIXED = {"attention_bias": False, "mlp_bias": False, "hidden_act": "silu", "pretraining_tp": 1, "rope_scaling": None,
         "sliding_window": None}


class UnsupportedLlama(CheckpointError):
    """A Llama checkpoint with an option this model does not implement, or out of bounds; the message says which."""


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
        checkpoint.check_sizes({name: getattr(self, name) for name in LIMITS}, CONFIG, UnsupportedLlama)
        if self.num_attention_heads % self.num_key_value_heads:
            raise UnsupportedLlama(Later(N_("{file}: num_key_value_heads {kv} does not divide num_attention_heads "
                                            "{heads}"), file=CONFIG, kv=self.num_key_value_heads,
                                         heads=self.num_attention_heads))
        if self.head_dim % 2:
            raise UnsupportedLlama(Later(N_("{file}: head_dim {value} is odd: RoPE rotates pairs of dimensions"),
                                         file=CONFIG, value=self.head_dim))
        too_big = [name for name, limit in LIMITS.items() if getattr(self, name) > limit]
        if too_big:
            raise UnsupportedLlama(Later(N_("{file}: {name} is {value}, above this server's limit of {limit}"),
                                         file=CONFIG, name=too_big[0], value=getattr(self, too_big[0]),
                                         limit=LIMITS[too_big[0]]))

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
        """A Hugging Face Llama config (its dict); UnsupportedLlama names an option not implemented here, a size
        out of bounds or malformed."""
        if raw.get("model_type", "llama") != "llama":
            raise UnsupportedLlama(Later(N_("{file} describes a {type} model, not Llama (model_type must be "
                                            "'llama')"), file=CONFIG, type=repr(raw.get("model_type"))))
        rope = raw.get("rope_parameters") or {}
        if not isinstance(rope, dict) or rope.get("rope_type", "default") != "default":
            raise UnsupportedLlama(Later(N_("{file}: {name} {value} is not implemented here (only {supported})"),
                                         file=CONFIG, name="rope_type", value=repr(rope), supported="'default'"))
        for name, value in FIXED.items():
            got = raw.get(name, value)
            if got != value and not (value is None and not got):  # an option's absence: null, false, 0
                raise UnsupportedLlama(Later(N_("{file}: {name} {value} is not implemented here (only {supported})"),
                                             file=CONFIG, name=name, value=repr(raw[name]), supported=repr(value)))
        known = {f.name for f in dataclasses.fields(cls)}
        values = {k: v for k, v in raw.items() if k in known and v is not None}
        heads = values.get("num_attention_heads")
        if type(heads) is int and heads > 0:
            values.setdefault("num_key_value_heads", heads)
            if type(values.get("hidden_size")) is int:
                values.setdefault("head_dim", values["hidden_size"] // heads)
        theta, eps = rope.get("rope_theta", raw.get("rope_theta", cls.rope_theta)), values.get("rms_norm_eps", 1e-5)
        for name, number in (("rope_theta", theta), ("rms_norm_eps", eps)):
            if type(number) not in (int, float) or not (0 < number < 1 if name == "rms_norm_eps" else number > 1):
                raise UnsupportedLlama(Later(N_("{file}: {name} must be a number between 0 and 1, got {value}")
                                             if name == "rms_norm_eps" else
                                             N_("{file}: {name} must be a number above 1, got {value}"),
                                             file=CONFIG, name=name, value=repr(number)))
        values["rope_theta"] = float(theta)
        values["tie_word_embeddings"] = bool(values.get("tie_word_embeddings", True))
        config = cls(**values)
        if config.float32_bytes > checkpoint.MAX_MODEL_BYTES:
            raise UnsupportedLlama(Later(N_("{file}: it describes a model of {size} as float32; this server loads "
                                            "at most {most}"), file=CONFIG, size=size_text(config.float32_bytes),
                                         most=size_text(checkpoint.MAX_MODEL_BYTES)))
        return config

    def parameter_shapes(self) -> dict[str, tuple[int, ...]]:
        """The Hugging Face names and shapes of a checkpoint of this config (lm_head.weight only when untied): a
        checkpoint's tensors are checked against them before any is read."""
        shapes = {"model.embed_tokens.weight": (self.vocab_size, self.hidden_size),
                  "model.norm.weight": (self.hidden_size,)}
        for i in range(self.num_hidden_layers):
            shapes |= {f"model.layers.{i}.{name}": shape for name, shape in self._layer_shapes().items()}
        if not self.tie_word_embeddings:
            shapes["lm_head.weight"] = (self.vocab_size, self.hidden_size)
        return shapes

    def _layer_shapes(self) -> dict[str, tuple[int, ...]]:
        E, F, q, kv = self.hidden_size, self.intermediate_size, self.num_attention_heads * self.head_dim, \
            self.num_key_value_heads * self.head_dim
        return {"input_layernorm.weight": (E,), "post_attention_layernorm.weight": (E,),
                "self_attn.q_proj.weight": (q, E), "self_attn.k_proj.weight": (kv, E),
                "self_attn.v_proj.weight": (kv, E), "self_attn.o_proj.weight": (E, q), "mlp.gate_proj.weight": (F, E),
                "mlp.up_proj.weight": (F, E), "mlp.down_proj.weight": (E, F)}

    @property
    def parameter_count(self) -> int:
        """Parameters of Llama(self) (a tied output counted once)."""
        outer = (2 - self.tie_word_embeddings) * self.vocab_size * self.hidden_size + self.hidden_size
        return outer + self.num_hidden_layers * sum(math.prod(s) for s in self._layer_shapes().values())

    @property
    def float32_bytes(self) -> int:
        return 4 * self.parameter_count
