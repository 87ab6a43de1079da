"""How many bytes a value the budget keeps holds (runtime/budget.py), and how a size is said."""
import dataclasses

import numpy as np
import torch


def nbytes(value, _seen=None) -> int:
    """Memory held by the tensors and arrays inside dataclasses / tuples / dicts (shared storage counted once)."""
    seen = set() if _seen is None else _seen
    if isinstance(value, torch.Tensor):
        storage = value.untyped_storage()
        if storage.data_ptr() in seen:
            return 0
        seen.add(storage.data_ptr())
        return storage.nbytes()
    if isinstance(value, np.ndarray):
        return 0 if id(value) in seen or seen.add(id(value)) else value.nbytes
    if isinstance(value, (bytes, bytearray)):
        return len(value)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return sum(nbytes(getattr(value, f.name), seen) for f in dataclasses.fields(value))
    if isinstance(value, (tuple, list)):
        return sum(nbytes(v, seen) for v in value)
    if isinstance(value, dict):
        return sum(nbytes(v, seen) for v in value.values())
    return 0


def megabytes(size: int) -> str:
    return f"{size / 2**20:,.0f} MB"
