"""The toy GPT (model.gpt.toy, shipped in model/weights/gpt) as a model source of the app: listed, sized and loaded like
the others. Its text is toy English read word by word (model.gpt.vocabulary); a word it has never seen is <unk>, named.
A GPT-2 checkpoint from a directory or the Hugging Face cache is read by model.loading.sources, with its own
tokenizer."""
from dataclasses import dataclass
from pathlib import Path

import torch

from locales import N_
from model.facts import ModelFacts
from model.gpt.model import GPT
from model.gpt.reading import WordReader
from model.gpt.toy import SHIPPED, WORDS, load
from model.gpt.vocabulary import WordVocabulary
from model.kinds import SourceKey
from model.loading.checkpoint import CONFIG, SAFETENSORS
from model.loading.footprint import loading_bytes
from model.loading.shipped import check_shipped, weights_bytes
from model.loading.source_types import Encoded
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

    source: object  # model.loading.sources.ModelSource
    model: GPT
    vocabulary: WordVocabulary

    @property
    def facts(self) -> ModelFacts:
        return self.model.facts

    def encode(self, text: str) -> Encoded:
        """A toy English text as model.loading.sources.Encoded: a token per word, cut to the model's positions."""
        read, most = WordReader(self.vocabulary).read(text), self.model.max_positions  # an unseen word shows as <unk>
        return Encoded(torch.tensor([read.ids[:most]], dtype=torch.long), read.tokens[:most], len(read.ids) > most,
                       len(read.ids), read.unknown)


def load_source(source, directory: Path = SHIPPED) -> LoadedGPT:
    model, vocabulary = load(directory)
    if vocabulary is None:
        raise ValueError(f"{WORDS} is missing")
    return LoadedGPT(source, model, vocabulary)
