"""How many bytes a model holds, and how many it will hold, known before it is built (from the textbook's parameter
counts in model.stats): so a server shared by a class can make room first, or refuse a model that cannot fit."""
from pathlib import Path

from torch import nn

from .stats import Shape, param_counts

WEIGHT_FILES = ("model.safetensors", "pytorch_model.bin")
FLOAT32 = 4


def module_bytes(module: nn.Module) -> int:
    """Bytes of the module's parameters and buffers (a tied or shared tensor counted once)."""
    storages = {t.untyped_storage().data_ptr(): t.untyped_storage().nbytes()
                for t in (*module.parameters(), *module.buffers())}
    return sum(storages.values())


def planned_bytes(shape: Shape, positions: int = 0) -> int:
    """Bytes of a float32 model of this shape: its parameters, and a sinusoidal table of `positions` rows (a
    buffer, not a parameter); module_bytes of the built model is at most this (tests/model/test_footprint.py)."""
    return FLOAT32 * (sum(param_counts(shape).values()) + positions * shape.d_model)


def loading_bytes(directory: Path, module_size: int) -> int:
    """Peak bytes of loading a checkpoint: the module, and its weights read beside it before they are copied in."""
    weights = next((directory / f for f in WEIGHT_FILES if (directory / f).is_file()), None)
    return module_size + (weights.stat().st_size if weights is not None else module_size)
