"""The attention maps of a run too big to keep whole, read a layer at a time.

SmolLM2 at 512 tokens has 30 layers x 9 heads x 512 x 512 attention weights: 283 MB in float32, more than a page
ever shows (one layer's 9 maps are 9.4 MB). Such a run keeps each layer's input only (runtime.runs.Run.hidden), and
its `attentions` is a LayerMaps: indexed as the (layers, heads, T, T) array it stands for (maps[layer],
maps[layer, head], maps[a:b, ...]), a layer's maps are computed from its input when asked, the same computation as
the forward pass's, so the same numbers, bit for bit. One layer asked for by a page is kept in the budget; a page that
reads every layer (the mosaic, the atlas, the rollout) iterates, one layer at a time, and keeps only what it makes of
them. It is never made into one array: np.asarray(maps) is a TypeError, so a page that would hold it all fails its
test rather than the server's memory.
"""
import math
import operator
from collections.abc import Callable, Iterator

import numpy as np

# A run's maps are kept whole up to this many bytes (runtime.runs.compute_run): every model at the lengths the pages
# open at, and all-MiniLM-L6-v2 up to 340 tokens (6 x 12 x 340^2 x 4 bytes).
WHOLE_MAPS_BYTES = 32 * 2**20


def maps_bytes(layers: int, heads: int, tokens: int) -> int:
    """Bytes of every attention map of one pass, float32."""
    return 4 * layers * heads * tokens * tokens


class LayerMaps:
    """(layers, heads, T, S) float32 attention maps, a layer at a time: layer(index, cache) -> (heads, T, S)."""

    ndim = 4
    dtype = np.dtype(np.float32)

    def __init__(self, shape: tuple[int, int, int, int], layer: Callable[[int, bool], np.ndarray],
                 summary: Callable[[str, Callable[[], object]], object] | None = None):
        self.shape = tuple(shape)
        self._layer = layer
        self._summary = summary

    @property
    def size(self) -> int:
        return math.prod(self.shape)

    @property
    def nbytes(self) -> int:
        return self.size * self.dtype.itemsize

    def __len__(self) -> int:
        return self.shape[0]

    def layer(self, index: int, cache: bool = True) -> np.ndarray:
        """(heads, T, S) of layer `index` (negative counts from the end)."""
        index = operator.index(index)
        if not -len(self) <= index < len(self):
            raise IndexError(f"layer {index} of {len(self)}")
        return self._layer(index % len(self), cache)

    def __getitem__(self, index):
        first, rest = (index[0], index[1:]) if isinstance(index, tuple) else (index, ())
        if isinstance(first, slice):  # several layers at once (a mosaic's chunk): read once, not kept
            layers = range(*first.indices(len(self)))
            if not layers:
                return np.empty((0, *self.shape[1:]), self.dtype)[(slice(None), *rest)]
            return np.stack([self.layer(i, cache=False)[rest] for i in layers])
        return self.layer(first)[rest]

    def __iter__(self) -> Iterator[np.ndarray]:
        """Every layer's (heads, T, S) in turn, none kept."""
        return (self.layer(i, cache=False) for i in range(len(self)))

    def __array__(self, dtype=None, copy=None):
        raise TypeError(f"attention maps of shape {self.shape} are read a layer at a time, never held whole")

    def mapped(self, transform: Callable[[np.ndarray], np.ndarray], shape: tuple[int, int, int, int]) -> "LayerMaps":
        """The maps with transform applied to each layer's (heads, T, S) (as views.widgets.special_tokens hides
        tokens), of the given shape."""
        return LayerMaps(shape, lambda index, cache: transform(self._layer(index, cache)))

    def summary(self, name: str, compute: Callable[[], object]):
        """compute() (a reduction over every layer), once per run in the budget when these are a run's own maps."""
        return compute() if self._summary is None else self._summary(name, compute)
