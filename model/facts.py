"""What a model is, said as data: kind, normalisation, activation, positions, sizes, special tokens.

Every model the app builds or reads carries its ModelFacts (`model.facts`, and `loaded.facts` with the
tokenizer's special tokens), written from its configuration when it is made. A page reads them; it never
guesses them from tensors, class names or which attributes a module has.
"""
from dataclasses import dataclass, field

from locales import _, ngettext
from model.family import Capability
from model.kinds import ModelKind

BERT, ENCODER, ENCODER_DECODER, TRANSLATOR, GPT, LLAMA = ModelKind
KINDS = tuple(ModelKind)
POSITIONAL_KINDS = ("sinusoidal", "learned", "rotary")  # rotary: RoPE, q and k rotated inside attention


@dataclass(frozen=True)
class SpecialTokens:
    """The tokenizer's special tokens by role, each as (text, id); None where it has none."""

    pad: tuple[str, int] | None = None
    unk: tuple[str, int] | None = None
    cls: tuple[str, int] | None = None  # starts a sequence ([CLS]; a translator's <bos>)
    sep: tuple[str, int] | None = None  # ends a sequence ([SEP]; a translator's <eos>)
    mask: tuple[str, int] | None = None

    @classmethod
    def from_tokenizer(cls, tokenizer) -> "SpecialTokens":
        """A Hugging Face tokenizer's pad/unk/cls/sep/mask tokens (bos/eos where it has no cls/sep)."""
        def role(*names):
            for name in names:
                text, index = getattr(tokenizer, f"{name}_token", None), getattr(tokenizer, f"{name}_token_id", None)
                if text is not None and index is not None:
                    return str(text), int(index)
            return None

        return cls(role("pad"), role("unk"), role("cls", "bos"), role("sep", "eos"), role("mask"))


@dataclass(frozen=True)
class ModelFacts:
    """One model's architecture as data. Sizes are per stack: an encoder-decoder has `layers` encoder layers and
    `decoder_layers` decoder layers (0 for an encoder alone)."""

    kind: str  # its family's (model.families): a ModelKind for the families built in
    layers: int
    heads: int
    d_model: int
    d_ff: int
    activation: str  # "gelu", "relu", or a Hugging Face name such as "gelu_new"
    norm_first: bool  # Pre-LN: x + f(LN(x)); Post-LN (False): LN(x + f(x))
    final_norm: bool  # a LayerNorm after the last layer of each stack
    positional: str  # one of POSITIONAL_KINDS
    max_positions: int
    vocab_size: int
    decoder_layers: int = 0
    token_types: int = 0  # rows of BERT's segment embedding (0: the model has none)
    embedding_norm: bool = False  # BERT normalises the summed embeddings; the others scale tokens by sqrt(d_model)
    token_scale: bool = True  # tokens scaled by sqrt(d_model) before the positions are added (a GPT adds them as is)
    source_vocab_size: int = 0  # a translator's source vocabulary (vocab_size is then its target's); 0: one vocabulary
    special_tokens: SpecialTokens = field(default_factory=SpecialTokens)
    capabilities: frozenset[Capability] = frozenset()  # what it can do, as its family declares (model.family)
    kv_heads: int = 0  # key/value heads, each shared by heads // kv_heads query heads (grouped-query); 0: one each
    rms_norm: bool = False  # its norms are RMSNorm (no mean, no bias), not LayerNorm
    gated: bool = False  # its feed-forward is gated: down(act(gate(h)) * up(h)) (SwiGLU with SiLU), no biases
    rope_base: float = 0.0  # rotary positions: pair i of a head turns by position x rope_base^(-2i/head_dim)
    biases: bool = True  # its projections and feed-forward add biases (Llama's have none)

    def __post_init__(self):
        if not isinstance(self.kind, str) or not self.kind:
            raise ValueError(f"kind must be a family's name (model.families), not {self.kind!r}")
        if self.kind in KINDS:
            object.__setattr__(self, "kind", ModelKind(self.kind))
        if self.positional not in POSITIONAL_KINDS:
            raise ValueError(f"positional must be one of {POSITIONAL_KINDS}, not {self.positional!r}")
        if self.heads < 1 or self.d_model % self.heads:
            raise ValueError(f"d_model ({self.d_model}) must be a positive multiple of heads ({self.heads})")

    def can(self, capability: Capability) -> bool:
        return capability in self.capabilities

    @property
    def head_dim(self) -> int:
        """d_k = d_model / heads: the width of each head's queries, keys and values."""
        return self.d_model // self.heads

    @property
    def norm_name(self) -> str:
        if self.rms_norm:
            return "Pre-RMSNorm" if self.norm_first else "Post-RMSNorm"
        return "Pre-LN" if self.norm_first else "Post-LN"

    @property
    def key_value_heads(self) -> int:
        """The heads of its keys and values: as many as its query heads, unless grouped."""
        return self.kv_heads or self.heads

    @property
    def activation_name(self) -> str:
        """GELU, RELU, SwiGLU (a SiLU-gated feed-forward)."""
        if self.gated:
            return "SwiGLU" if self.activation == "silu" else f"{self.activation.upper()} (gated)"
        return self.activation.upper()

    def summary(self) -> str:
        """One line for a caption: "6 layers, 12 heads, d_model 384, d_ff 1536, GELU, Post-LN, learned positions",
        in the current language (translated when shown: facts are shared by every session)."""
        if self.decoder_layers:
            layers = _("{encoder} + {decoder} layers").format(encoder=self.layers, decoder=self.decoder_layers)
        else:
            layers = ngettext("{n} layer", "{n} layers", self.layers).format(n=self.layers)
        positions = {"learned": _("learned positions"), "rotary": _("rotary positions (RoPE)")}.get(
            self.positional, _("sinusoidal positions"))
        heads = ngettext("{n} head", "{n} heads", self.heads).format(n=self.heads)
        if self.key_value_heads != self.heads:
            heads = _("{heads} over {kv} key/value heads").format(heads=heads, kv=self.key_value_heads)
        line = _("{layers}, {heads}, d_model {d_model}, d_ff {d_ff}, {activation}, {norm}, {positions}").format(
            layers=layers, heads=heads, d_model=self.d_model, d_ff=self.d_ff,
            activation=self.activation_name, norm=self.norm_name, positions=positions)
        return _("{summary}, segment embeddings").format(summary=line) if self.token_types else line
