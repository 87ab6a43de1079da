"""A batch step's work on each of its rows (model.causal.batch.Batch.step), as TorchScript functions: one call for
every row instead of a few Python operations per row, the loop run by TorchScript's interpreter, which does not hold
Python's GIL. A 40-row step of SmolLM2 made ~600 such operations (its rows' keys and values copied into the padded
room, then each row's new column, attention, layer outputs and likeliest words written back); while a class asks,
each of them waited for the GIL behind the pages' scripts. The operations are the same copies as in Python: the same
numbers, bit for bit.
"""
from typing import List

import torch
from torch import Tensor


@torch.jit.script
def fill_rooms(rooms: Tensor, caches: List[Tensor], lengths: List[int], first: int, n: int, longest: int) -> None:
    """Layers first .. first + n of each row's keys and values (caches[b] (layers, 2, kv, T, d), lengths[b] words)
    into the padded room (G, 2, B, kv, longest + 1, d), left-padded: row b's words end at column `longest`."""
    for b in range(len(caches)):
        length = lengths[b]
        rooms[:n, :, b, :, longest - length:longest] = caches[b][first:first + n, :, :, :length]


@torch.jit.script
def keep_step(caches: List[Tensor], lengths: List[int], written: Tensor, maps_kept: List[Tensor], filled: List[int],
              maps: Tensor, hidden_kept: List[Tensor], steps: List[int], hidden: Tensor, longest: int) -> None:
    """What each row keeps of a step, in its own storage: the new word's keys and values (written (layers, 2, B, kv,
    d)) at column lengths[b] of caches[b]; its attention rows (maps (B, layers, nh, longest + 1), its own last
    lengths[b] + 1 columns) at entry filled[b] of maps_kept[b] (layers, nh, entries); each layer's output (hidden
    (B, layers, E)) at step steps[b] of hidden_kept[b] (layers, steps, E)."""
    for b in range(len(caches)):
        length = lengths[b]
        caches[b][:, :, :, length] = written[:, :, b]
        maps_kept[b][:, :, filled[b]:filled[b] + length + 1] = maps[b, :, :, longest - length:]
        hidden_kept[b][:, steps[b]] = hidden[b]


@torch.jit.script
def keep_choices(candidates_kept: List[Tensor], final_kept: List[Tensor], tempered_kept: List[Tensor], steps: List[int],
                 candidates: Tensor, final: Tensor, tempered: Tensor) -> None:
    """Row b's likeliest words at step steps[b] (each kept[b] (steps, k)): candidates, final and tempered (B, k) of the
    rows chosen together (model.causal.decoding.choices)."""
    for b in range(len(candidates_kept)):
        candidates_kept[b][steps[b]] = candidates[b]
        final_kept[b][steps[b]] = final[b]
        tempered_kept[b][steps[b]] = tempered[b]
