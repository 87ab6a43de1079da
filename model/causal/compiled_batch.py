"""A batch's step through each layer as one TorchScript graph (model.causal.batch.Batch.step, rows at positions of
their own, no head switched off).

Why: while a class asks, the pages' scripts and the server's event loop hold Python's GIL about a third of the time,
and an eager step returns to Python between its ~4,000 operations: a 40-row step of SmolLM2 took 0.3 s in the served
class against 0.24 s alone. A layer's graph runs its ~35 operations in C++ without the GIL; and the 30 graphs run
in one scripted call (_Stack) with the copies of the rows' keys and values into the padded rooms, so a step takes the
GIL once instead of thousands of times (bench/batch_layers.py, beside a busy Python thread: 224-242 ms a step, the
graphs called one at a time from Python 277-336 ms, eagerly 289-373 ms).

Each graph is traced on a small batch and checked bit for bit against the eager layer on another (more rows, more
words, other positions), so that nothing of the example's size was frozen into it; compiled_batch_layers returns
None when a check fails or tracing does, and the step runs eagerly. The graphs share the model's weights (no copy)
and hold no state of a batch: one set per model, for every session.
"""
import warnings
from typing import List, Tuple

import torch
from torch import Tensor, nn

from model.cache import KeyValues
from model.causal.row_ops import fill_rooms

# What the tracing says it froze (the one word a step reads) is checked against the eager layer instead.
warnings.filterwarnings("ignore", category=torch.jit.TracerWarning)


def layer_step(block: nn.Module, x: Tensor, mask: Tensor, starts: Tensor, room: Tensor, keep: Tensor | None = None):
    """One block's step of a batch: x (B, 1, E) after a left-padded room (2, B, kv, S + 1, d) whose last column is
    the new word's (written there), at positions starts (B,), mask (B, 1, 1, S + 1), keep (nh,) or None (every head
    on) -> (x, the attention row (B, nh, S + 1), the new word's keys and values (2, B, kv, d), copied: the next layer
    writes its own into the same room)."""
    S = room.size(3) - 1
    past = KeyValues(room[0, :, :, :S], room[1, :, :, :S], starts, (room[0], room[1]))
    out = block.run(x, mask=mask, past=past, keep=keep, use_cache=True)
    return out.x, out.attention[:, :, 0], room[:, :, :, S].clone()


class _LayerStep(nn.Module):
    """layer_step with every head on, as a module to trace."""

    def __init__(self, block: nn.Module):
        super().__init__()
        self.block = block

    def forward(self, x: Tensor, mask: Tensor, starts: Tensor, room: Tensor):
        return layer_step(self.block, x, mask, starts, room)


class _Stack(nn.Module):
    """Every layer's graph in one call: a step's rows' keys and values copied into the padded rooms a group of layers
    at a time (fill_rooms), each layer's graph run on its room. Scripted: the loop runs in TorchScript's interpreter,
    so a step returns to Python (and waits for the GIL) once, not after each of its layers and copies."""

    def __init__(self, graphs: list):
        super().__init__()
        self.graphs = nn.ModuleList(graphs)

    def forward(self, x: Tensor, mask: Tensor, starts: Tensor, rooms: Tensor, caches: List[Tensor],
                lengths: List[int], longest: int) -> Tuple[Tensor, Tensor, Tensor, Tensor]:
        group, n = rooms.size(0), len(self.graphs)
        maps, hidden, new = [], [], []
        for i, graph in enumerate(self.graphs):
            if i % group == 0:
                fill_rooms(rooms, caches, lengths, i, min(group, n - i), longest)
            x, row, kv = graph(x, mask, starts, rooms[i % group])
            new.append(kv)
            maps.append(row)
            hidden.append(x[:, 0])
        return x, torch.stack(maps, 1), torch.stack(hidden, 1), torch.stack(new)


class BatchLayers:
    """Each layer's graph (_LayerStep): layers[i](x, mask, starts, room) -> (x, attention row, new keys and values);
    and all of them in one call (stack)."""

    def __init__(self, model: nn.Module, example: tuple[Tensor, ...]):
        with torch.inference_mode():
            self._graphs = [torch.jit.trace(_LayerStep(b).eval(), example, check_trace=False) for b in model.blocks]
        self._stack = torch.jit.script(_Stack(self._graphs))

    def __len__(self) -> int:
        return len(self._graphs)

    def __call__(self, i: int, x: Tensor, mask: Tensor, starts: Tensor, room: Tensor):
        with torch.jit.optimized_execution(False):  # exactly the eager layer's kernels
            return self._graphs[i](x, mask, starts, room)

    def stack(self, x: Tensor, mask: Tensor, starts: Tensor, rooms: Tensor, caches: list[Tensor], lengths: list[int],
              longest: int) -> tuple[Tensor, Tensor, Tensor, Tensor]:
        """Every layer of a step at once, rooms (G, 2, B, kv, longest + 1, d) filled G layers at a time from each
        row's cache (layers, 2, kv, T, d) of lengths[b] words -> (x (B, 1, E), attention rows (B, layers, nh,
        longest + 1), each layer's output (B, layers, E), the new word's keys and values (layers, 2, B, kv, d))."""
        with torch.jit.optimized_execution(False):
            return self._stack(x, mask, starts, rooms, caches, lengths, longest)


def layer_inputs(model: nn.Module, rows: int, words: int, seed: int) -> tuple[Tensor, ...]:
    """A step's inputs for one layer: `rows` rows of up to `words` words, their padding blocked and zero."""
    c, g = model.config, torch.Generator().manual_seed(seed)
    x = torch.randn(rows, 1, c.hidden_size, generator=g)
    starts = torch.randint(1, words + 1, (rows,), generator=g)
    present = torch.arange(words + 1)[None, :] >= (words - starts)[:, None]  # (B, S + 1)
    mask = model.causal_attention_mask(1, present.long(), dtype=x.dtype, past=words)
    room = torch.randn(2, rows, c.num_key_value_heads, words + 1, c.head_dim, generator=g)
    return x, mask, starts, room * present[None, :, None, :, None]


def compiled_batch_layers(model: nn.Module) -> BatchLayers | None:
    """The model's BatchLayers, traced on 3 rows of 5 words and checked on 6 rows of 17, layer by layer, bit for bit;
    None if this torch cannot trace them or a graph differs (the batch then steps eagerly)."""
    try:
        layers = BatchLayers(model, layer_inputs(model, 3, 5, 0))
        check = layer_inputs(model, 6, 17, 1)
        with torch.inference_mode():
            for i, block in enumerate(model.blocks):
                eager = _LayerStep(block)(*(t.clone() for t in check))
                graph = layers(i, *(t.clone() for t in check))
                if not all(torch.equal(a, b) for a, b in zip(eager, graph)):
                    return None
        return layers
    except Exception:  # noqa: BLE001 - any failure to trace or run means: step eagerly, as before
        return None
