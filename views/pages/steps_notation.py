"""How the step-by-step page's formulas name a model's parts, from its facts (model.facts.ModelFacts): LayerNorm or
RMSNorm, biases or none, a gated feed-forward (SwiGLU), RoPE on q and k, query heads sharing a key/value head."""
from dataclasses import dataclass


@dataclass(frozen=True)
class Notation:
    """How the formulas name this model's parts (from its facts): its norm, its biases, a gated feed-forward, RoPE,
    and query heads sharing a key/value head."""

    norm: str  # as LaTeX
    name: str  # as text
    bias: bool
    gated: bool
    rotary: bool
    group: int  # query heads per key/value head

    @classmethod
    def of(cls, facts) -> "Notation":
        rms = facts.rms_norm
        return cls(r"\mathrm{RMSNorm}" if rms else r"\mathrm{LN}", "RMSNorm" if rms else "LN", facts.biases,
                   facts.gated, facts.positional == "rotary", facts.heads // facts.key_value_heads)

    def b(self, name: str) -> str:
        """ + b_name, when the model has biases."""
        return rf" + b_{{{name}}}" if self.bias else ""
