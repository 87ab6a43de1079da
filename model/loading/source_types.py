"""What a model source is and what it makes of a text: the plain types every source shares (a leaf module, so that
the sources list (sources.py) and each family's own source, such as model.translator.source, both read them)."""
from dataclasses import dataclass
from pathlib import Path

import torch

from model.kinds import SourceKind


@dataclass(frozen=True)
class ModelSource:
    key: str  # stable id, used in URLs
    label: str
    kind: SourceKind
    path: Path | None
    available: bool
    reason: str  # why it is unavailable, or where it comes from


@dataclass(frozen=True)
class Encoded:
    input_ids: torch.Tensor  # (1, T)
    tokens: tuple[str, ...]
    truncated: bool  # the text had more tokens than the model's positions
    total_tokens: int  # tokens before truncation, special tokens included
    unknown: tuple[str, ...] = ()  # tokens the model has never seen, read as unknown (the translator names them)
