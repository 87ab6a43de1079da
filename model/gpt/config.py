"""A GPT's configuration, in GPT-2's own names, so that a Hugging Face config.json reads into it directly.

Every option of GPT-2 that this model does not implement makes a checkpoint unavailable with the reason
(from_hf), never a silent difference; sizes are bounded before anything is built.
"""
import dataclasses
import math
from dataclasses import dataclass

from locales import N_
from model.layers import ACTIVATIONS
from model.loading import checkpoint
from model.loading.checkpoint import CONFIG, CheckpointError, size_text
from model.messages import Later

# The largest sizes this server builds, above every published GPT-2 (XL: 48 layers, 1600 wide, 25 heads, 50,257
# tokens, 1,024 positions); the model as a whole must also fit MAX_MODEL_BYTES.
LIMITS = {"vocab_size": 524_288, "n_embd": 4096, "n_layer": 64, "n_head": 64, "n_positions": 8192,
          "d_ff": 16_384}
# GPT-2 options that change the computation, with the one value this model implements.
FIXED = {"scale_attn_weights": True, "scale_attn_by_inverse_layer_idx": False, "add_cross_attention": False,
         "tie_word_embeddings": True}


@dataclass(frozen=True)
class GPTConfig:
    """A GPT-2-architecture decoder: sizes, activation, LayerNorm epsilon, dropout (nanoGPT's one small config)."""

    vocab_size: int = 50257
    n_positions: int = 1024  # learned positions: the longest context
    n_embd: int = 768  # d_model
    n_layer: int = 12
    n_head: int = 12
    n_inner: int | None = None  # d_ff; None: 4 * n_embd
    activation_function: str = "gelu_new"  # GPT-2's GELU, the tanh form
    layer_norm_epsilon: float = 1e-5
    dropout: float = 0.1  # embeddings, attention probabilities, residuals (GPT-2's embd/attn/resid_pdrop)

    def __post_init__(self):
        if self.activation_function not in ACTIVATIONS:
            raise ValueError(f"activation_function must be one of {sorted(ACTIVATIONS)}, "
                             f"not {self.activation_function!r}")
        if self.n_head < 1 or self.n_embd % self.n_head:
            raise ValueError(f"n_embd ({self.n_embd}) must be a positive multiple of n_head ({self.n_head})")

    @property
    def d_ff(self) -> int:
        return 4 * self.n_embd if self.n_inner is None else self.n_inner

    @property
    def head_dim(self) -> int:
        return self.n_embd // self.n_head

    @classmethod
    def from_hf(cls, raw: dict, source: str = CONFIG) -> "GPTConfig":
        """A Hugging Face GPT-2 config.json (a dict) -> GPTConfig; raises CheckpointError naming what is not
        implemented here, out of bounds or malformed."""
        if raw.get("model_type") != "gpt2":
            raise CheckpointError(Later(N_("{file} describes a {type} model, not GPT-2 (model_type must be 'gpt2')"),
                                        file=source, type=repr(raw.get("model_type"))))
        for name, value in FIXED.items():
            if raw.get(name, value) != value:
                raise CheckpointError(Later(N_("{file}: {name} {value} is not implemented here (only {supported})"),
                                            file=source, name=name, value=repr(raw[name]), supported=repr(value)))
        activation = raw.get("activation_function", "gelu_new")
        if activation not in ACTIVATIONS:
            raise CheckpointError(Later(N_("{file}: activation_function {value} is not supported (one of {allowed})"),
                                        file=source, value=repr(activation), allowed=str(sorted(ACTIVATIONS))))
        sizes = {name: raw.get(name, getattr(cls, name)) for name in ("vocab_size", "n_positions", "n_embd",
                                                                        "n_layer", "n_head")}
        sizes["d_ff"] = raw.get("n_inner") if raw.get("n_inner") is not None else (
            4 * sizes["n_embd"] if type(sizes["n_embd"]) is int else sizes["n_embd"])
        checkpoint.check_sizes(sizes, source)
        if sizes["n_embd"] % sizes["n_head"]:
            raise CheckpointError(Later(N_("{file}: n_embd {size} is not divisible by n_head {heads}"), file=source,
                                        size=sizes["n_embd"], heads=sizes["n_head"]))
        eps = raw.get("layer_norm_epsilon", 1e-5)
        if type(eps) not in (int, float) or not 0 < eps < 1:
            raise CheckpointError(Later(N_("{file}: {name} must be a number between 0 and 1, got {value}"),
                                        file=source, name="layer_norm_epsilon", value=repr(eps)))
        too_big = [f"{name} is {sizes[name]}, above this server's limit of {limit}" for name, limit in LIMITS.items()
                   if sizes[name] > limit]
        if too_big:
            raise CheckpointError(f"{source}: " + "; ".join(too_big))
        config = cls(sizes["vocab_size"], sizes["n_positions"], sizes["n_embd"], sizes["n_layer"], sizes["n_head"],
                     raw.get("n_inner"), activation, float(eps), 0.0)
        if config.float32_bytes > checkpoint.MAX_MODEL_BYTES:
            raise CheckpointError(f"{source}: it describes a model of {size_text(config.float32_bytes)} as float32; "
                                  f"this server loads at most {size_text(checkpoint.MAX_MODEL_BYTES)}")
        return config

    def parameter_shapes(self) -> dict[str, tuple[int, ...]]:
        """The names and shapes of GPT(self).state_dict(), without building it: a checkpoint's tensors are checked
        against them before any is read (a test holds it to the module)."""
        V, E = self.vocab_size, self.n_embd
        shapes = {"wte.weight": (V, E), "wpe.weight": (self.n_positions, E)}
        for i in range(self.n_layer):
            shapes |= {f"blocks.{i}.{name}": shape for name, shape in self._layer_shapes().items()}
        return shapes | {"ln_f.weight": (E,), "ln_f.bias": (E,)}

    def _layer_shapes(self) -> dict[str, tuple[int, ...]]:
        E, F = self.n_embd, self.d_ff
        return {"self_attn.in_proj_weight": (3 * E, E), "self_attn.in_proj_bias": (3 * E,),
                "self_attn.out_proj.weight": (E, E), "self_attn.out_proj.bias": (E,), "linear1.weight": (F, E),
                "linear1.bias": (F,), "linear2.weight": (E, F), "linear2.bias": (E,), "norm1.weight": (E,),
                "norm1.bias": (E,), "norm2.weight": (E,), "norm2.bias": (E,)}

    @property
    def parameter_count(self) -> int:
        """Parameters of GPT(self), the output tied to the token embedding (counted once)."""
        one = dataclasses.replace(self, n_layer=0).parameter_shapes()
        return sum(math.prod(s) for s in one.values()) + self.n_layer * sum(
            math.prod(s) for s in self._layer_shapes().values())

    @property
    def float32_bytes(self) -> int:
        return 4 * self.parameter_count
