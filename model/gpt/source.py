"""The toy GPT (model.gpt.toy, shipped in model/weights/gpt) as a model source of the app: listed, sized and loaded like
the others. Its text is toy English read word by word (model.gpt.vocabulary); a word it has never seen is <unk>, named.
A GPT-2 checkpoint from a directory or the Hugging Face cache is read by model.loading.sources, with its own
tokenizer."""
import json
import math
from dataclasses import dataclass
from pathlib import Path

import torch

from locales import N_
from model.facts import ModelFacts
from model.gpt.model import GPT
from model.gpt.toy import SHIPPED, WORDS, load
from model.gpt.vocabulary import WordVocabulary, words_of
from model.kinds import SourceKey
from model.loading.checkpoint import CONFIG, SAFETENSORS, weight_shapes
from model.loading.footprint import FLOAT32, loading_bytes
from model.loading.source_types import Encoded
from model.messages import Later

GPT_KEY = SourceKey.GPT  # its name in links: ?model=gpt
GPT_LABEL = Later(N_("Toy GPT (trained here: writes the next word of toy English)"))
FILES = (SAFETENSORS, CONFIG, WORDS)


def check_files(directory: Path = SHIPPED) -> tuple[bool, str]:
    """Whether the toy GPT's files are there and readable, and where it comes from or why it is not."""
    missing = [name for name in FILES if not (directory / name).is_file()]
    if missing:
        return False, Later(N_("its shipped files are missing ({files}): `python -m training.train_gpt` writes them"),
                            files=", ".join(missing))
    try:
        json.loads((directory / CONFIG).read_text())
        weights_bytes(directory)
    except Exception as e:  # noqa: BLE001 - safetensors raises its own SafetensorError; its text may hold the path
        return False, Later(N_("its shipped files could not be read ({error})"), error=type(e).__name__)
    return True, Later(N_("trained by this project on the toy English of its language (docs/toy-language.md)"))


def weights_bytes(directory: Path = SHIPPED) -> int:
    """Bytes of its parameters as float32, from the safetensors header (no tensor is read)."""
    return FLOAT32 * sum(math.prod(shape) for shape in weight_shapes(directory).values())


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
        words = words_of(text)
        ids = self.vocabulary.ids(words)[:self.model.max_positions]
        tokens = tuple(self.vocabulary.tokens[i] for i in ids)  # a word it has never seen shows as <unk>
        return Encoded(torch.tensor([ids], dtype=torch.long), tokens, len(words) > len(ids), len(words),
                       tuple(self.vocabulary.unknown(words)))


def load_source(source, directory: Path = SHIPPED) -> LoadedGPT:
    model, vocabulary = load(directory)
    if vocabulary is None:
        raise ValueError(f"{WORDS} is missing")
    return LoadedGPT(source, model, vocabulary)
