"""Answers written together: many prompts decoded in one batch by a model with rotary positions (Llama: SmolLM2),
each row at a position of its own, a row joining between two steps and leaving as soon as it is done. What a
serving engine calls continuous batching, on the app's own model, keeping what the pages show of every answer.

A row joins with its prompt read alone (the same pass model.causal.decoding.generate reads it with), then each step
reads one word of every row in flight at once: the rows' caches left-padded to the longest, the padding blocked
(the dtype's minimum: its probability is exactly 0), each row's new word rotated at its own position
(KeyValues.starts). A row's words are those generate writes alone: the same ops, the rows of a batched matrix product
adding up in another order (a few units in the last place of a score), so a near tie of the two likeliest words is
all that could part them; tests/model/causal/test_batch.py checks greedy and seeded sampled answers of mixed lengths
and arrival times, token for token, and the attention kept against generate's.

Memory: each row's storage is its own (model.causal.rows.Row), allocated once for its prompt and its most words;
a step makes a few layers' padded keys and values (ROOM_BYTES at most), with room for the new word (KeyValues.room:
the attention writes it there instead of concatenating another copy): a row's keys and values of those layers copied
at once (Row.cache), the padding zeroed once a step. What a row keeps for its page is small per step: each layer's
attention row and output at the word read, the step's 10 likeliest words (not the 49,152 scores).
The copies to and from the rows' own storage are TorchScript loops (model.causal.row_ops): a few calls a step,
not a few Python operations per row, each a wait for the GIL while the pages are busy.
"""
import math
from collections.abc import Callable, Collection
from dataclasses import dataclass

import torch
from torch import Tensor

from model.cache import KeyValues
from model.causal.compiled_batch import BatchLayers, layer_step
from model.causal.decoding import choices
from model.causal.row_ops import fill_rooms, keep_choices, keep_step
from model.causal.rows import TOP, Joining, Row, map_entries
from model.heads import HeadsOff, keep_of
from model.kinds import Block as Attention
from model.sampling import Sampling

PREFIXES = 4  # shared beginnings of prompts kept per batch (Batch.join's shared)
# A step's padded keys and values are made for as many layers at once as fit in this (3-4 of SmolLM2's for 40 rows of
# 60-80 words): a row is copied once per few layers, not once a layer (fewer returns to Python, each one a wait for
# the GIL when the pages are busy)
ROOM_BYTES = 16 * 2**20


@dataclass(frozen=True)
class _Read:
    """A pass over some words: what a row keeps of them."""

    keys: Tensor  # (layers, kv, n, d)
    values: Tensor
    maps: Tensor  # (layers, nh, n, past + n)
    hidden: Tensor  # (layers, 1, E) each block's output at the last word: the first step's lens; the last, its word


class Batch:
    """The rows in flight of one model with the same heads switched off. Not thread-safe: one thread (the model
    thread) calls join, admit, step and leave; read_all may run on another, one at a time. The model is shared and
    never changed; every state is here."""

    def __init__(self, model, off: HeadsOff | None = None):
        if getattr(model.facts, "positional", None) != "rotary":
            raise ValueError("answers are written together only by a model with rotary positions")
        self.model, self.off = model, off
        c = model.config
        self.layers, self.kv_heads, self.head_dim = c.n_layer, c.num_key_value_heads, c.head_dim
        self.rows: list[Row] = []
        # each layer's step as a graph (model.causal.compiled_batch), when the model's are traced and no head is off
        self.compiled: BatchLayers | None = None
        self._prefixes: dict[tuple[int, ...], _Read] = {}  # read beginnings, the most recently used last

    def token_bytes(self) -> int:
        """A word's keys and values in every layer (float32)."""
        return 2 * self.layers * self.kv_heads * self.head_dim * 4

    def row_bytes(self, prompt: int, steps: int) -> int:
        """What a row of `prompt` words and `steps` words at most holds (Row.held_bytes): its keys and values, and
        what its page reads as the row keeps it: its maps (a triangle, not the square the finished answer spreads them
        into: that is made once, when the row is done, and goes into the budget as the finished answer), each step's
        layer outputs and likeliest words."""
        return sum(math.prod(shape) * dtype.itemsize for shape, dtype in self._storage(prompt, steps))

    def _steps(self, prompt: int, steps: int) -> int:
        """The words a row writes at most: fewer where the context runs out."""
        return max(0, min(steps, self.model.max_positions - prompt))

    def _storage(self, prompt: int, steps: int) -> list[tuple[tuple[int, ...], torch.dtype]]:
        """The shape and dtype of each of a row's tensors, in Row's order: its keys and values, maps, hidden,
        candidates, final, tempered."""
        c, steps, f = self.model.config, self._steps(prompt, steps), torch.float32
        cache, k = (self.layers, 2, self.kv_heads, prompt + steps, self.head_dim), min(TOP, c.vocab_size)
        return [(cache, f), ((self.layers, c.n_head, map_entries(prompt, steps)), f),
                ((self.layers, steps, c.hidden_size), f), ((steps, k), torch.long), ((steps, k), f), ((steps, k), f)]

    def join(self, prompt: Tensor, steps: int, sampling: Sampling | None = None, stop: Collection[int] = (),
             on_word: Callable[[int], None] | None = None, shared: int = 0) -> Row:
        """Read the prompt (P,) and write its first word (said to on_word); the row then takes part in every step
        until it has written `steps` words (fewer if the context runs out, or after a word of `stop`, which is
        written). A row done at once is not kept. shared: the prompt's first words are a beginning many prompts
        share (a chat template's system prompt): read once, kept (PREFIXES of them), and only the rest read after it
        (the same words: the beginning's keys are what the whole prompt's pass makes of them)."""
        return self.join_all([Joining(prompt, steps, sampling, stop, on_word, shared)])[0]

    def join_all(self, joining: "list[Joining]") -> list[Row]:
        """join each, their prompts read together: those with the same beginning in one pass, each row's rest
        padded on the right (its padding blocked), so that the weights are read once for all of them."""
        rows = self.read_all(joining)
        self.admit(rows)
        return rows

    def read_all(self, joining: "list[Joining]") -> list[Row]:
        """join_all's reading, its rows not in the batch yet (admit adds them): it may run on another thread than
        the steps' (it reads the model and the shared beginnings only), one reading at a time."""
        rows = [self._row(j) for j in joining]
        groups: dict[tuple[int, ...], list[int]] = {}
        for i, j in enumerate(joining):
            shared = j.shared if 0 < j.shared < j.prompt.numel() else 0
            groups.setdefault(tuple(j.prompt[:shared].tolist()), []).append(i)
        for beginning, members in groups.items():
            begun = self._beginning(torch.tensor(beginning, dtype=torch.long)) if beginning else None
            n = len(beginning)
            for i, read in zip(members, self._read([joining[i].prompt[n:] for i in members], begun)):
                self._start(rows[i], begun, read)
        return rows

    def _row(self, j: "Joining") -> Row:
        if j.prompt.numel() == 0:
            raise ValueError("a generation starts from at least one word")
        P = j.prompt.numel()
        return Row(j.prompt, self._steps(P, j.steps), j.sampling, frozenset(j.stop), j.on_word,
                   *(torch.empty(shape, dtype=dtype) for shape, dtype in self._storage(P, j.steps)),
                   generator=None if j.sampling is None else torch.Generator().manual_seed(j.sampling.seed))

    def _start(self, row: Row, begun: "_Read | None", read: "_Read") -> None:
        """The row's prompt read (its beginning, then the rest): kept, its first word chosen."""
        P = row.prompt.numel()
        n = 0 if begun is None else begun.keys.size(2)
        square = row.maps[:, :, :P * P].view(row.maps.size(0), row.maps.size(1), P, P)
        if begun is not None:
            square[:, :, :n, :n], square[:, :, :n, n:] = begun.maps, 0
            row.cache[:, 0, :, :n], row.cache[:, 1, :, :n] = begun.keys, begun.values
        square[:, :, n:] = read.maps
        row._filled = P * P
        row.cache[:, 0, :, n:P], row.cache[:, 1, :, n:P] = read.keys, read.values
        row.length = P
        if row.steps:
            row.hidden[:, 0] = read.hidden[:, 0]
        self._choose(row, self.model.lm_logits(self.model.final_norm(read.hidden[-1])))

    def admit(self, rows: list[Row]) -> None:
        """Rows read (read_all) into the batch: each takes part in the next step, unless it is done already."""
        self.rows.extend(r for r in rows if not r.done)

    def _beginning(self, ids: Tensor) -> "_Read":
        key = tuple(ids.tolist())
        found = self._prefixes.pop(key, None) or self._read([ids])[0]
        self._prefixes[key] = found  # the most recent last
        while len(self._prefixes) > PREFIXES:
            del self._prefixes[next(iter(self._prefixes))]
        return found

    def _read(self, texts: list[Tensor], after: "_Read | None" = None) -> "list[_Read]":
        """One pass over texts (each (n,), after the words `after` read, as their cache), padded on the right: each
        text's keys and values (layers, kv, n, d), maps (layers, nh, n, past + n) and outputs at its last word
        (layers, 1, E)."""
        model, B = self.model, len(texts)
        lengths = [t.numel() for t in texts]
        L, past = max(lengths), 0 if after is None else after.keys.size(2)
        ids = torch.zeros(B, L, dtype=torch.long)
        for b, t in enumerate(texts):
            ids[b, :t.numel()] = t
        x, _ = model.embed(ids, past=past)
        present = None  # one text, or texts of one length: nothing padded
        if min(lengths) < L:
            present = (torch.arange(past + L)[None, :] < (past + torch.tensor(lengths))[:, None]).long()
        mask = model.causal_attention_mask(L, present, dtype=x.dtype, past=past)
        keys, values, maps, hidden = [], [], [], []
        for i, block in enumerate(model.blocks):
            cache = None if after is None else KeyValues(*(t[i, None].expand(B, -1, -1, -1)
                                                           for t in (after.keys, after.values)))
            out = block.run(x, mask=mask, past=cache, keep=keep_of(self.off, Attention.DECODER, i), use_cache=True)
            x = out.x
            keys.append(out.kv.k[:, :, past:])  # (B, kv, L, d)
            values.append(out.kv.v[:, :, past:])
            maps.append(out.attention)  # (B, nh, L, past + L)
            hidden.append(x)  # (B, L, E)
        keys, values, maps, hidden = (torch.stack(t, 1) for t in (keys, values, maps, hidden))  # batch first
        # each its own copy of what it keeps: a row's slice would hold the whole batch's pass while the row lives
        return [_Read(keys[b, :, :, :n], values[b, :, :, :n], maps[b, :, :, :n, :past + n].clone(),
                      hidden[b, :, n - 1:n].clone()) for b, n in enumerate(lengths)]

    def step(self) -> list[Row]:
        """One word of every row in flight, read at once; the rows done by it (they leave the batch)."""
        rows = self.rows
        if not rows:
            return []
        model, B = self.model, len(rows)
        caches, lengths = [r.cache for r in rows], [r.length for r in rows]
        longest, starts = max(lengths), torch.tensor(lengths)
        words = torch.tensor([[r.written[-1]] for r in rows])
        x, _ = model.embed(words, past=longest)
        mask = None  # one row alone: nothing to pad, and its cache is read where it is (generate's very step)
        if B > 1:
            present = torch.arange(longest + 1)[None, :] >= (longest - starts)[:, None]  # (B, S + 1): not padding
            mask = model.causal_attention_mask(1, present.long(), dtype=x.dtype, past=longest)  # (B, 1, 1, S + 1)
        maps, hidden, new = [], [], []
        compiled = self.compiled if self.off is None else None  # read once: another thread may set it meanwhile
        if B > 1:  # a few layers' padded keys and values, (G, 2, B, kv, S + 1, d), made once and rewritten by each G
            group = max(1, min(self.layers, ROOM_BYTES // (2 * B * self.kv_heads * (longest + 1) * self.head_dim * 4)))
            rooms = torch.zeros(group, 2, B, self.kv_heads, longest + 1, self.head_dim)
        if B > 1 and compiled is not None:  # every layer's graph in one call: one wait for the GIL, not one a layer
            x, maps, hidden, new = compiled.stack(x, mask, starts, rooms, caches, lengths, longest)
            return self._kept(rows, x, maps, hidden, new, caches, lengths, longest)
        for i, block in enumerate(model.blocks):
            keep = keep_of(self.off, Attention.DECODER, i)
            if B == 1:  # its cache read where it is
                past = KeyValues(*(rows[0].cache[i, None, j, :, :longest] for j in range(2)))
                out = block.run(x, mask=mask, past=past, keep=keep, use_cache=True)
                x, row, kv = out.x, out.attention[:, :, 0], torch.stack((out.kv.k[:, :, -1], out.kv.v[:, :, -1]))
            else:  # left-padded (B, kv, S + 1, d): each row's words end at column S, where its new word goes
                if i % group == 0:  # a row's keys and values of G layers at once; the padding stays 0 throughout
                    fill_rooms(rooms, caches, lengths, i, min(group, self.layers - i), longest)
                x, row, kv = layer_step(block, x, mask, starts, rooms[i % group], keep)
            new.append(kv)  # (2, B, kv, d)
            maps.append(row)  # (B, nh, S + 1)
            hidden.append(x[:, 0])  # (B, E)
        # (B, layers, nh, S + 1), (B, layers, E), (layers, 2, B, kv, d)
        return self._kept(rows, x, torch.stack(maps, 1), torch.stack(hidden, 1), torch.stack(new), caches, lengths,
                          longest)

    def _kept(self, rows: list[Row], x: Tensor, maps: Tensor, hidden: Tensor, new: Tensor, caches: list[Tensor],
              lengths: list[int], longest: int) -> list[Row]:
        """A step's end: what each row keeps of its layers (maps, hidden, new keys and values), the next word of
        each from the last layer's output x (B, 1, E); the rows done."""
        model, B = self.model, len(rows)
        logits = model.lm_logits(model.final_norm(x[:, -1]))  # (B, V)
        steps = [len(r.written) for r in rows]
        keep_step(caches, lengths, new, [r.maps for r in rows], [r._filled for r in rows], maps,
                  [r.hidden for r in rows], steps, hidden, longest)
        greedy_words = {}
        greedy = [b for b, r in enumerate(rows) if r.sampling is None]  # chosen at once: row by row the same numbers
        if greedy:
            scores = logits if len(greedy) == B else logits[greedy]
            kept = ([rows[b].candidates for b in greedy], [rows[b].final for b in greedy],
                    [rows[b].tempered for b in greedy])
            keep_choices(*kept, [steps[b] for b in greedy], *choices(scores, None, TOP))
            greedy_words = dict(zip(greedy, scores.argmax(-1).tolist()))
        finished = []
        for b, r in enumerate(rows):
            r._filled += r.length + 1
            r.length += 1
            if b in greedy_words:
                self._add(r, greedy_words[b])
            else:
                self._choose(r, logits[b:b + 1])
            if r.done:
                finished.append(r)
        self.rows = [r for r in rows if not r.done]
        return finished

    def leave(self, row: Row) -> None:
        """Take a row out before its end (its page has gone): its memory is freed with it."""
        if row in self.rows:
            self.rows.remove(row)
        row.done = row.left = True

    def _choose(self, row: Row, scores: Tensor) -> None:
        """The row's next word from its scores (1, V), as generate chooses it; said, and kept with the step's
        likeliest words."""
        if row.steps == 0:
            row.done = True
            return
        if row.sampling is None:
            word = int(scores.argmax(-1))
        else:
            word = int(torch.multinomial(row.sampling.probabilities(scores), 1, generator=row.generator)[0, 0])
        t = len(row.written)
        row.candidates[t], row.final[t], row.tempered[t] = (c[0] for c in choices(scores, row.sampling, TOP))
        self._add(row, word)

    @staticmethod
    def _add(row: Row, word: int) -> None:
        """The word written (its likeliest words kept): said, and the row done after a stop word or its last."""
        row.written.append(word)
        if row.on_word is not None:
            row.on_word(word)
        row.done = word in row.stop or len(row.written) >= row.steps
