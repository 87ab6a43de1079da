"""The GPT family as the app lists and loads it: the toy GPT (model.gpt.toy, shipped in model/weights/gpt), whose
text is toy English read word by word (model.gpt.vocabulary; a word it has never seen is <unk>, named), and any GPT-2
checkpoint directory (model_type "gpt2") with its own tokenizer (or, written by training.train_gpt, its words)."""
import dataclasses
from dataclasses import dataclass
from pathlib import Path

import torch

from locales import N_
from model.facts import ModelFacts
from model.family import Capability, Reads
from model.gpt.checkpoint import check_checkpoint, read_config
from model.gpt.config import GPTConfig
from model.gpt.model import CAPABILITIES, GPT
from model.gpt.reading import WordReader
from model.gpt.toy import SHIPPED, SHOWCASE_TEXT, WORDS, load, showcase_head
from model.gpt.vocabulary import WordVocabulary
from model.kinds import ModelKind, SourceKey, SourceKind
from model.loading.checkpoint import CONFIG, SAFETENSORS
from model.loading.footprint import loading_bytes
from model.loading.loaded import LoadedModel
from model.loading.shipped import check_shipped, weights_bytes
from model.loading.source_types import Encoded, Family, ModelSource
from model.loading.tokenizers import read_tokenizer
from model.messages import Later

GPT_KEY = SourceKey.GPT  # its name in links: ?model=gpt
GPT_LABEL = Later(N_("Toy GPT (trained here: writes the next word of toy English)"))
FILES = (SAFETENSORS, CONFIG, WORDS)


def check_files(directory: Path = SHIPPED) -> tuple[bool, str]:
    """Whether the toy GPT's files are there and readable, and where it comes from or why it is not."""
    return check_shipped(directory, FILES, "python -m training.train_gpt", Later(N_(
        "trained by this project on the toy English of its language (docs/toy-language.md)")))


def footprint(directory: Path = SHIPPED) -> int:
    """Peak bytes of loading it: the module, and the weights read beside it before they are copied in."""
    return loading_bytes(directory, weights_bytes(directory))


@dataclass(frozen=True)
class LoadedGPT:
    """The toy GPT, loaded once and shared by every session, never mutated; its words read as its vocabulary says."""

    source: ModelSource
    model: GPT
    vocabulary: WordVocabulary

    @property
    def facts(self) -> ModelFacts:
        return self.model.facts

    @property
    def modules(self) -> GPT:
        return self.model

    @property
    def reader(self) -> WordReader:
        """Text <-> ids: a token per word."""
        return WordReader(self.vocabulary)

    def encode(self, text: str) -> Encoded:
        """A toy English text as model.loading.sources.Encoded: a token per word, cut to the model's positions."""
        read, most = self.reader.read(text), self.model.max_positions  # an unseen word shows as <unk>
        return Encoded(torch.tensor([read.ids[:most]], dtype=torch.long), read.tokens[:most], len(read.ids) > most,
                       len(read.ids), read.unknown)


def load_source(source: ModelSource, directory: Path = SHIPPED) -> LoadedGPT:
    model, vocabulary = load(directory)
    if vocabulary is None:
        raise ValueError(f"{WORDS} is missing")
    return LoadedGPT(source, model, vocabulary)


def _layers_and_heads(directory: Path) -> tuple[int, int]:
    config = check_checkpoint(directory)
    return config.n_layer, config.n_head


def _builtin() -> list[ModelSource]:
    return [FAMILY.source(GPT_KEY, GPT_LABEL, SourceKind.SHIPPED, SHIPPED, *check_files(), Capability.SNAPSHOTS,
                          reads=Reads.TOY_ENGLISH, name="toy-gpt", example=SHOWCASE_TEXT, showcase=showcase_head)]


def _load(source: ModelSource, options=None) -> LoadedGPT | LoadedModel:
    if source.kind == SourceKind.SHIPPED or (source.path / WORDS).is_file():  # a toy GPT reads words
        return load_source(dataclasses.replace(source, reads=Reads.TOY_ENGLISH), source.path)
    return LoadedModel(source, GPT.from_pretrained(source.path), read_tokenizer(source.path))


def _footprint(source: ModelSource, options=None) -> int:
    if source.kind == SourceKind.SHIPPED:
        return footprint(source.path)
    return loading_bytes(source.path, read_config(source.path).float32_bytes)


FAMILY = Family(ModelKind.GPT, GPTConfig, CAPABILITIES, Reads.TOKENIZER, _load, _footprint, _builtin,
                model_type="gpt2", check=_layers_and_heads)
