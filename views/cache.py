"""A bounded, thread-safe LRU cache for forward passes: capped in entries and in bytes.

The caps come from the environment (ATTNVIZ_CACHE_ENTRIES, ATTNVIZ_CACHE_MB) so an operator can
size them to the server. Values are shared by every session and must be treated as read-only.
"""
import dataclasses
import os
import threading
from collections import OrderedDict

import numpy as np
import torch

MAX_ENTRIES = int(os.environ.get("ATTNVIZ_CACHE_ENTRIES", "32"))
MAX_BYTES = int(float(os.environ.get("ATTNVIZ_CACHE_MB", "1024")) * 2**20)


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
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return sum(nbytes(getattr(value, f.name), seen) for f in dataclasses.fields(value))
    if isinstance(value, (tuple, list)):
        return sum(nbytes(v, seen) for v in value)
    if isinstance(value, dict):
        return sum(nbytes(v, seen) for v in value.values())
    return 0


class BoundedCache:
    def __init__(self, max_entries: int = MAX_ENTRIES, max_bytes: int = MAX_BYTES):
        self.max_entries, self.max_bytes = max_entries, max_bytes
        self._items: OrderedDict = OrderedDict()  # key -> (value, size)
        self._lock = threading.Lock()
        self.bytes = 0
        self.hits = self.misses = 0

    def get(self, key):
        with self._lock:
            if key in self._items:
                self._items.move_to_end(key)
                self.hits += 1
                return self._items[key][0]
            self.misses += 1
            return None

    def put(self, key, value) -> None:
        size = nbytes(value)
        with self._lock:
            if key in self._items:
                self.bytes -= self._items.pop(key)[1]
            if size > self.max_bytes:
                return  # too big to keep: it is used once and dropped
            self._items[key] = (value, size)
            self.bytes += size
            while len(self._items) > self.max_entries or self.bytes > self.max_bytes:
                self.bytes -= self._items.popitem(last=False)[1][1]

    def __len__(self) -> int:
        return len(self._items)
