"""What a model source is, what a family declares, and what a source makes of a text: the plain types every source
shares (a leaf module, so that the sources list (sources.py), the registry (model.families) and each family's own
source, such as model.translator.source, all read them)."""
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import torch
from torch import nn

from model.facts import ModelFacts
from model.family import Capability, Reads
from model.kinds import SourceKind


@dataclass(frozen=True)
class ModelSource:
    key: str  # stable id, used in URLs
    label: str
    kind: SourceKind  # where it comes from
    path: Path | None
    available: bool
    reason: str  # why it is unavailable, or where it comes from
    family: str | None = None  # its family's kind (model.families; None: an architecture read nowhere here)
    capabilities: frozenset[Capability] = frozenset()  # its family's, and what this source adds
    reads: Reads = Reads.TOKENIZER
    name: str = ""  # in the names of the files a page gives away (views.widgets.file_names); "" = from its key
    example: str = ""  # the text its text box starts with ("" = the app's default for what it reads)
    showcase: Callable[[], tuple[int, int]] | None = None  # the (layer, head) a page opens at, measured on `example`
    # (its block's model.stats shape, the parameters its checkpoint's tensors hold), from its files alone
    shape: Callable[[], tuple[Any, int]] | None = None

    def can(self, capability: Capability) -> bool:
        return capability in self.capabilities


@dataclass(frozen=True)
class Encoded:
    input_ids: torch.Tensor  # (1, T)
    tokens: tuple[str, ...]
    truncated: bool  # the text had more tokens than the model's positions
    total_tokens: int  # tokens before truncation, special tokens included
    unknown: tuple[str, ...] = ()  # tokens the model has never seen, read as unknown (the translator names them)


class Loaded(Protocol):
    """A loaded model as the app holds it: shared by every session, never mutated."""

    source: ModelSource

    @property
    def model(self) -> nn.Module:
        """What a page of one stack runs (a model.recording.TokenEncoder, or a GPT)."""

    @property
    def modules(self) -> nn.Module:
        """Everything it holds, whose parameters its size counts (a translator's whole model)."""

    @property
    def facts(self) -> ModelFacts: ...

    def encode(self, text: str) -> Encoded: ...


@dataclass(frozen=True)
class Family:
    """A model family, declared once (model.families lists them): what it is and can do, how it reads text, the
    sources it ships or builds, the Hugging Face checkpoints it reads, and how a source of it is sized (before
    anything is built) and loaded."""

    kind: str  # its name: a ModelKind for the families built in, any other name for a new one
    config: type  # its one config dataclass
    capabilities: frozenset[Capability]
    reads: Reads
    load: Callable[[ModelSource, Any], Loaded]  # (source, options such as a RandomConfig) -> Loaded; CheckpointError
    footprint: Callable[[ModelSource, Any], int]  # peak bytes of load(source, options), from files alone
    builtin: Callable[[], Iterable[ModelSource]] = tuple  # the sources it ships or builds, listed first
    model_type: str | None = None  # the model_type of the Hugging Face checkpoint directories it reads
    check: Callable[[Path], tuple[int, int]] | None = None  # such a directory checked from its files alone, no tensor
    # read: (layers, heads); raises CheckpointError

    def source(self, key: str, label: str, kind: SourceKind, path: Path | None, available: bool, reason: str,
               *extra: Capability, reads: Reads | None = None, name: str = "", example: str = "",
               showcase: Callable[[], tuple[int, int]] | None = None,
               shape: Callable[[], tuple[Any, int]] | None = None) -> ModelSource:
        """A source of this family: its capabilities and its reading, with what the source adds (extra)."""
        return ModelSource(key, label, kind, path, available, reason, self.kind,
                           self.capabilities | frozenset(extra), reads or self.reads, name, example, showcase, shape)
