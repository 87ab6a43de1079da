"""model.causal.row_ops: the step's per-row copies as TorchScript loops write what the Python slicing writes."""
import torch

from model.causal.row_ops import fill_rooms, keep_choices, keep_step


def rows_of(lengths, layers=3, kv=2, d=4, total=9, seed=0):
    g = torch.Generator().manual_seed(seed)
    return [torch.randn(layers, 2, kv, total, d, generator=g) for _ in lengths]


def test_fill_rooms_left_pads_each_row_to_the_longest():
    lengths, longest = [2, 5, 3], 5
    caches = rows_of(lengths)
    rooms = torch.zeros(2, 2, 3, 2, longest + 1, 4)
    fill_rooms(rooms, caches, lengths, 1, 2, longest)
    for b, (c, n) in enumerate(zip(caches, lengths)):
        assert torch.equal(rooms[:, :, b, :, longest - n:longest], c[1:3, :, :, :n])
        assert not rooms[:, :, b, :, :longest - n].any()  # the padding untouched
    assert not rooms[..., longest, :].any()  # the new word's column: the attention writes it


def test_keep_step_writes_each_rows_column_maps_and_outputs_in_place():
    lengths, longest, layers, nh, E = [2, 4], 4, 3, 5, 6
    caches = rows_of(lengths, layers=layers)
    before = [c.clone() for c in caches]
    written = torch.randn(layers, 2, 2, 2, 4)
    maps = torch.randn(2, layers, nh, longest + 1)
    hidden = torch.randn(2, layers, E)
    maps_kept = [torch.zeros(layers, nh, 40) for _ in lengths]
    hidden_kept = [torch.zeros(layers, 7, E) for _ in lengths]
    filled, steps = [4, 16], [1, 3]
    keep_step(caches, lengths, written, maps_kept, filled, maps, hidden_kept, steps, hidden, longest)
    for b, n in enumerate(lengths):
        expected = before[b].clone()
        expected[:, :, :, n] = written[:, :, b]
        assert torch.equal(caches[b], expected)
        assert torch.equal(maps_kept[b][:, :, filled[b]:filled[b] + n + 1], maps[b, :, :, longest - n:])
        assert maps_kept[b].count_nonzero() == layers * nh * (n + 1)
        assert torch.equal(hidden_kept[b][:, steps[b]], hidden[b])
        assert hidden_kept[b].count_nonzero() == layers * E


def test_keep_choices_writes_each_rows_step():
    kept = [[torch.zeros(4, 3, dtype=dtype) for _ in range(2)] for dtype in (torch.long, torch.float, torch.float)]
    chosen = (torch.tensor([[5, 6, 7], [8, 9, 10]]), torch.rand(2, 3), torch.rand(2, 3))
    keep_choices(*kept, [0, 2], *chosen)
    for t, c in zip(kept, chosen):
        assert torch.equal(t[0][0], c[0]) and torch.equal(t[1][2], c[1])
        assert t[0][1:].count_nonzero() == 0 and t[1][:2].count_nonzero() == 0
