"""The shipped translator (model.translator) as a model source of the app: listed, sized and loaded like the others.

One loaded translator serves two kinds of page. The encoder-decoder page runs the whole model (.translator): the
Chinese source, the English target, the three attentions. A page of one stack (the masks page) runs its encoder
(.model, a TokenEncoder that shares the translator's own modules, nothing copied): its self-attention over the
Chinese characters, recorded like every other encoder's. Nothing here changes the translator.
"""
import dataclasses
import json
from dataclasses import dataclass
from pathlib import Path

import torch

from locales import N_
from model.facts import ENCODER, ModelFacts
from model.family import Capability, Reads
from model.kinds import ModelKind, SourceKey, SourceKind
from model.loading.footprint import FLOAT32, loading_bytes
from model.loading.shipped import check_shipped, weights_bytes
from model.loading.source_types import Encoded, Family, ModelSource
from model.messages import Later
from model.text_models import ENCODER_CAPABILITIES, EmbeddedTextEncoder
from model.translator import (
    CAPABILITIES,
    CONFIG,
    SHIPPED,
    SOURCE_VOCAB,
    TARGET_VOCAB,
    WEIGHTS,
    Translator,
    TranslatorConfig,
)
from model.translator.vocabulary import chinese_tokens, english_tokens

TRANSLATOR_KEY = SourceKey.TRANSLATOR  # its name in links: ?model=translator
TRANSLATOR_LABEL = Later(N_("Translator (trained here: Chinese → English)"))
FILES = (WEIGHTS, CONFIG, SOURCE_VOCAB, TARGET_VOCAB)


def check_files(directory: Path = SHIPPED) -> tuple[bool, str]:
    """Whether the translator's files are there and readable, and where it comes from or why it is not."""
    return check_shipped(directory, FILES, "python -m training.train",
                         Later(N_("trained by this project on its toy language (docs/toy-language.md)")))


def footprint(directory: Path = SHIPPED) -> int:
    """Peak bytes of loading it: the module (parameters and the two sinusoidal tables) and the weights read beside
    it before they are copied in."""
    config = json.loads((directory / CONFIG).read_text())
    tables = 2 * FLOAT32 * config["max_len"] * config["d_model"]
    return loading_bytes(directory, weights_bytes(directory) + tables)


class TranslatorEncoder(EmbeddedTextEncoder):
    """The translator's encoder alone: its source embedding and its encoder stack (with the final norm), shared
    with the translator, as a TokenEncoder. Its padding is <pad>, as in the translator."""

    def __init__(self, translator: Translator):
        super().__init__()
        self.embedding = translator.source_embedding
        self.encoder = translator.transformer.encoder
        self.max_positions = translator.max_positions
        f = translator.facts
        self.facts = dataclasses.replace(f, kind=ENCODER, decoder_layers=0, vocab_size=f.source_vocab_size,
                                         source_vocab_size=0, capabilities=ENCODER_CAPABILITIES)


@dataclass(frozen=True)
class Target:
    """An English target typed by a visitor, as the translator reads it."""

    words: tuple[str, ...]  # each word as the vocabulary spells it where it knows it ("The" -> "the")
    ids: tuple[int, ...]
    unknown: tuple[str, ...]  # words the translator has never seen, read as <unk>


@dataclass(frozen=True)
class LoadedTranslator:
    """The shipped translator, loaded once: .translator for the encoder-decoder page, .model (its encoder) for a
    page of one stack. Shared by every session, never mutated."""

    source: ModelSource
    translator: Translator
    model: TranslatorEncoder  # the translator's own encoder modules

    @property
    def facts(self) -> ModelFacts:
        return self.model.facts

    @property
    def modules(self) -> Translator:
        return self.translator

    def encode(self, text: str):
        """A Chinese text as model.loading.sources.Encoded: one token per character, cut to the model's positions."""
        total = len(chinese_tokens(text))
        tokens, ids, unknown = self.translator.encode_source(text)
        return Encoded(torch.tensor([ids], dtype=torch.long), tuple(tokens), total > len(ids), total, tuple(unknown))

    def target(self, text: str) -> Target:
        """An English text -> its words as the vocabulary spells them (lower case but `I`), their ids (<unk> for a
        word it has never seen)."""
        vocabulary = self.translator.target
        words = []
        for word in english_tokens(text):
            if word not in vocabulary:
                word = next((w for w in (word.lower(), word.upper()) if w in vocabulary), word)
            words.append(word)
        return Target(tuple(words), tuple(vocabulary.ids(words)), tuple(vocabulary.unknown(words)))


def load(source: ModelSource, directory: Path = SHIPPED) -> LoadedTranslator:
    """The shipped translator, in eval mode, and its encoder."""
    translator = Translator.from_directory(directory)
    return LoadedTranslator(source, translator, TranslatorEncoder(translator))


def _builtin() -> list[ModelSource]:
    return [FAMILY.source(TRANSLATOR_KEY, TRANSLATOR_LABEL, SourceKind.SHIPPED, SHIPPED, *check_files(),
                          Capability.SNAPSHOTS, name="translator")]


FAMILY = Family(ModelKind.TRANSLATOR, TranslatorConfig, CAPABILITIES, Reads.CHINESE,
                lambda source, options=None: load(source, source.path), lambda source, options=None: footprint(
                    source.path), _builtin)
