"""A model family that exists only in the tests: a one-layer causal decoder whose norms are RMSNorm, on the project's
one block (model.layers.Block). It is what docs/architecture.md says a new family adds, and nothing more: a model, a
config, a Family with one built-in source, and its line in the registry (here added by the test, see `registered`).
No file of views/ or runtime/ knows it."""
import re
from dataclasses import dataclass

import torch
from torch import Tensor, nn

from model.facts import ModelFacts
from model.family import Capability, Reads
from model.kinds import SourceKind
from model.layers import Block
from model.loading.source_types import Encoded, Family, ModelSource
from model.positional import LearnedPositionalEmbedding
from model.trace import EmbeddingTrace, LayerTrace, StackTrace

KIND, KEY = "tiny-rms", "tiny-rms"
WORDS = ("<unk>", "the", "cat", "sat", "on", "mat", "a", "dog", "ran", ".")


@dataclass(frozen=True)
class TinyRMSConfig:
    vocab_size: int = len(WORDS)
    d_model: int = 16
    heads: int = 2
    d_ff: int = 32
    max_positions: int = 24


class TinyRMS(nn.Module):
    """Token + learned positions, one Pre-norm causal Block with RMSNorm instead of LayerNorm, a final RMSNorm."""

    def __init__(self, c: TinyRMSConfig):
        super().__init__()
        self.config, self.max_positions = c, c.max_positions
        self.wte = nn.Embedding(c.vocab_size, c.d_model)
        self.wpe = LearnedPositionalEmbedding(c.max_positions, c.d_model)
        self.block = Block(c.d_model, c.heads, c.d_ff, dropout=0.0, norm_first=True)
        self.block.norm1, self.block.norm2 = nn.RMSNorm(c.d_model), nn.RMSNorm(c.d_model)  # the different norm
        self.norm = nn.RMSNorm(c.d_model)
        self.facts = ModelFacts(KIND, 1, c.heads, c.d_model, c.d_ff, "gelu", norm_first=True, final_norm=True,
                                positional="learned", max_positions=c.max_positions, vocab_size=c.vocab_size,
                                token_scale=False, capabilities=frozenset({Capability.CAUSAL}))

    def embed(self, input_ids: Tensor, token_type_ids=None, record: bool = False):
        token, position = self.wte(input_ids), self.wpe(input_ids.size(1))
        x = token + position
        return x, (EmbeddingTrace(token, position, None, x, x) if record else None)

    def causal(self, size: int) -> Tensor:
        return torch.ones(size, size, dtype=torch.bool).triu(1)

    def inputs_and_attentions(self, input_ids, attention_mask=None, attn_mask=None, maps: bool = True):
        x, _ = self.embed(input_ids)
        out = self.block.run(x, mask=self.causal(x.size(1)), record=True, ffn=False)
        return x[None], out.trace.self_attn.probs[None] if maps else None, out.trace.self_attn.mask

    def trace_embeddings(self, input_ids, token_type_ids=None) -> EmbeddingTrace:
        return self.embed(input_ids, None, True)[1]

    def trace_layer(self, index: int, x, attention_mask=None, attn_mask=None) -> LayerTrace:
        return self.block.run(x, mask=self.causal(x.size(1)), record=True).trace

    def layer_outputs(self, x: Tensor) -> list[Tensor]:
        return [self.layer_output(0, x)]

    def layer_output(self, index: int, x: Tensor) -> Tensor:
        return self.block.run(x, mask=self.causal(x.size(1))).x

    def stack_output(self, x: Tensor) -> Tensor:
        return self.norm(x)

    def record(self, input_ids, attention_mask=None, attn_mask=None, until=None, token_type_ids=None) -> StackTrace:
        x, embeddings = self.embed(input_ids, None, True)
        layer = self.trace_layer(0, x)
        return StackTrace(embeddings, (layer,), self.norm(layer.output))

    def position_vectors(self) -> Tensor:
        return self.wpe(self.max_positions)[0]


@dataclass(frozen=True)
class LoadedTinyRMS:
    source: ModelSource
    model: TinyRMS

    @property
    def modules(self) -> TinyRMS:
        return self.model

    @property
    def facts(self) -> ModelFacts:
        return self.model.facts

    def encode(self, text: str) -> Encoded:
        words = re.findall(r"\w+|\.", text.lower())
        ids = [WORDS.index(w) if w in WORDS else 0 for w in words] or [0]
        cut = ids[:self.model.max_positions]
        return Encoded(torch.tensor([cut]), tuple(WORDS[i] for i in cut), len(ids) > len(cut), len(ids))


def _load(source: ModelSource, options=None) -> LoadedTinyRMS:
    with torch.random.fork_rng():
        torch.manual_seed(0)
        return LoadedTinyRMS(source, TinyRMS(TinyRMSConfig()).eval())


def _builtin() -> list[ModelSource]:
    return [FAMILY.source(KEY, "Tiny RMSNorm decoder (a test family)", SourceKind.BUILT, None, True,
                          "built by the tests", name="tiny-rms")]


FAMILY = Family(KIND, TinyRMSConfig, frozenset({Capability.CAUSAL}), Reads.TOKENIZER, _load,
                lambda source, options=None: 64 * 1024, _builtin)
