"""One byte budget for everything a visitor can cause the server to build or keep: models, forward passes, the
layers recomputed from them, drawn images. A bounded, thread-safe LRU cache, shared by every session.

A model's size is known before it is built (model.loading.footprint), so room is made first, and a model that could
never fit is refused with a message instead of being built. What a session's page drew last is held (`hold`): held
entries go only after every unheld one, so a slider move does not run the model again unless the budget needs the
room. Values are shared by every session and must be treated as read-only.

The caps come from the environment, so an operator can size them to the server: ATTNVIZ_CACHE_MB (everything
above, default 1024) and ATTNVIZ_CACHE_ENTRIES (forward passes and recomputed layers kept, default 32).
"""
import dataclasses
import gc
import os
import threading
import weakref
from collections import Counter, OrderedDict
from collections.abc import Callable
from contextlib import contextmanager, nullcontext

from locales import N_
from model.messages import Later
from runtime.budget_kinds import KIND_ENTRIES, Kind
from runtime.heap import release_freed_memory
from runtime.promises import Promises
from runtime.sizes import megabytes, nbytes  # noqa: F401 - nbytes: what callers measure values with

MAX_ENTRIES = int(os.environ.get("ATTNVIZ_CACHE_ENTRIES", "32"))
MAX_BYTES = int(float(os.environ.get("ATTNVIZ_CACHE_MB", "1024")) * 2**20)
TRIM_AFTER = 32 * 2**20  # bytes dropped before the heap is trimmed (malloc_trim takes a few ms)


class OverBudget(Exception):
    """What was asked would not fit in the server's memory budget, even alone; the message says so plainly."""


class Hold:
    """A session's claim on a cache entry (kept in its session state, released with it)."""

    __slots__ = ("__weakref__", "key")

    def __init__(self, key):
        self.key = key


@dataclasses.dataclass
class _Entry:
    value: object
    size: int
    kind: Kind
    pinned: bool
    cheap: bool = False  # rebuilt in a moment (a random model): the first to go when its kind has too many entries
    holds: weakref.WeakSet = dataclasses.field(default_factory=weakref.WeakSet)
    kept: int = 0  # work under way that needs it (keep / unkeep): pinned meanwhile


@dataclasses.dataclass
class _Build:
    """A value being built by one thread; the others asking for the same key wait for it."""

    done: threading.Event = dataclasses.field(default_factory=threading.Event)
    value: object = None
    error: BaseException | None = None


class BoundedCache(Promises):
    def __init__(self, max_entries: int = MAX_ENTRIES, max_bytes: int = MAX_BYTES,
                 kind_entries: dict[Kind, int] = KIND_ENTRIES):
        self.max_entries, self.max_bytes = max_entries, max_bytes
        self.kind_entries = {Kind(k): n for k, n in kind_entries.items()}
        self._items: OrderedDict = OrderedDict()  # key -> _Entry, least recently used first
        self._building: dict = {}  # key -> _Build
        self._room = threading.Condition()  # the lock; notified when a build ends (its reservation is freed)
        self.bytes = self.reserved = 0  # held by entries; promised to builds under way
        self._pinned = 0  # bytes of the pinned entries
        self._entries: Counter = Counter()  # entries by group (_group): what the caps count, kept as they change
        self.hits = self.misses = 0
        self.evicted: Counter = Counter()  # by kind
        self._freed, self._freed_model = 0, False  # bytes dropped since the heap was last trimmed; a model among them
        self._settle: list = []  # dropped values with work of their own under way (a model's tracing): settle() it

    def get(self, key, count_miss: bool = True):
        """The value of key if held (None if not); count_miss=False: a look before get_or_build, which counts it."""
        with self._room:
            entry = self._items.get(key)
            if entry is None:
                self.misses += count_miss
                return None
            self._items.move_to_end(key)
            self.hits += 1
            return entry.value

    def get_or_build(self, key, build: Callable[[], object], kind: Kind = Kind.FORWARD, estimate: int = 0,
                     size: Callable[[object], int] = nbytes, pinned: bool = False, waiting=nullcontext,
                     cheap: bool = False):
        """The value of key, built once by the first thread to ask (the others wait for it, inside `waiting()`: what
        their pages say meanwhile). Room for `estimate` bytes is made before build() runs; OverBudget if it can never
        fit. cheap: built again in a moment if dropped (a random model), so dropped first when its kind has more
        entries than its cap allows."""
        while True:
            with self._room:
                entry = self._items.get(key)
                if entry is not None:
                    self._items.move_to_end(key)
                    self.hits += 1
                    return entry.value
                self.misses += 1
                pending = self._building.get(key)
                if pending is None:
                    self._reserve(estimate)
                    pending = self._building[key] = _Build()
                    break
            if not pending.done.is_set():
                with waiting():
                    pending.done.wait()
            if isinstance(pending.error, Exception):
                raise pending.error
            if pending.error is None:
                return pending.value
            # the builder was interrupted (its page was rerun or stopped): build it here instead
        self._trim()  # what was dropped to make room goes back to the system before the new value is built
        try:
            pending.value = build()
        except BaseException as e:
            pending.error = e
            raise
        finally:
            with self._room:
                self.reserved -= estimate
                del self._building[key]
                if pending.error is None:
                    self._insert(key, pending.value, size(pending.value), kind, pinned, cheap)
                self._room.notify_all()
            pending.done.set()
            self._trim()
        return pending.value

    @contextmanager
    def room(self, need: int, spare=()):
        """Make room for `need` bytes of work (a forward pass) for the time of the block; OverBudget if it cannot
        fit even alone. `spare`: keys not to drop for it (the model the pass runs on)."""
        with self._room:
            self._reserve(need, spare)
        self._trim()
        try:
            yield
        finally:
            with self._room:
                self.reserved -= need
                self._room.notify_all()

    def put(self, key, value, kind: Kind = Kind.FORWARD, pinned: bool = False) -> None:
        size = nbytes(value)
        with self._room:
            self._insert(key, value, size, kind, pinned)
        self._trim()

    def hold(self, key) -> Hold | None:
        """A claim that keeps the entry until the budget needs its room; None if the key is not cached."""
        with self._room:
            entry = self._items.get(key)
            if entry is None:
                return None
            claim = Hold(key)
            entry.holds.add(claim)
            return claim

    def clear(self) -> None:
        with self._room:
            for key in [k for k, e in self._items.items() if not e.pinned]:
                self._drop(key)
        self._trim()

    def __len__(self) -> int:
        return len(self._items)

    def __contains__(self, key) -> bool:
        return key in self._items

    def kinds(self) -> Counter:
        """Entries by kind (what the budget holds now)."""
        with self._room:
            return Counter(e.kind for e in self._items.values())

    def _trim(self) -> None:
        """After dropping a model, or TRIM_AFTER bytes or more, give the freed memory back to the system. A model
        that has been traced (model.compiled) sits in a reference cycle that torch.jit.trace leaves behind, so
        dropping it frees nothing until Python's cyclic collector runs, which can take minutes: one visitor's links
        stacked up 8 models (3.9 GB) beside a 1 GB budget (bench/memory.py). So a dropped traced model is collected
        at once. A full collection holds every session up (230 ms in a warmed-up server, more with a class's
        sessions), so only then: a model never traced (a random one past MAX_TRACED_RANDOM) is freed when dropped,
        and serve.py freezes what the warm-up made (gc.freeze: never scanned again)."""
        with self._room:
            settle, self._settle = self._settle, []  # and no longer held here: an untraced model is freed with it
            model, enough = self._freed_model, self._freed >= TRIM_AFTER
            if model or enough:
                self._freed, self._freed_model = 0, False
        while settle:  # a dropped model still being traced is still held by its tracing: let that end first
            settle.pop().settle()
        if not (model or enough):
            return
        if model:
            gc.collect()
        release_freed_memory()

    # ------------------------------------------------------------------ under the lock
    def _fits_alone(self, need: int, kept: int) -> None:
        """OverBudget if `need` bytes could never fit beside `kept` (the pinned and spared)."""
        if need > self.max_bytes - kept:
            raise OverBudget(Later(N_("it needs about {need} and this server keeps at most {most} for it"),
                                   need=megabytes(need), most=megabytes(self.max_bytes - kept)))

    def _kept(self, spare) -> int:
        """Bytes that no eviction can free: the pinned entries, and the spared ones (each counted once)."""
        return self._pinned + sum(self._items[k].size for k in spare if k in self._items and not self._items[k].pinned)

    def _reserve(self, need: int, spare=()) -> None:
        """Evict until `need` more bytes fit beside what is kept and promised; wait for work under way if only
        its promises are in the way; OverBudget if it cannot fit even alone (beside the pinned and spared)."""
        kept = self._kept(spare)
        self._fits_alone(need, kept)
        while True:
            while self.bytes + self.reserved + need > self.max_bytes and self._evict_one(spare=spare):
                pass
            if self.bytes + self.reserved + need <= self.max_bytes:
                self.reserved += need
                return
            self._room.wait()  # other builds hold the rest: their reservations end when they finish

    def _group(self, kind: Kind) -> Kind | None:
        """Kinds capped apart (models, images) are their own group; passes and recomputed layers share one."""
        return kind if kind in self.kind_entries else None

    def _insert(self, key, value, size: int, kind: Kind, pinned: bool, cheap: bool = False) -> None:
        kind = Kind(kind)  # a kind that is not one is a mistake: said here, not capped by chance
        if key in self._items:
            self._drop(key)
        if size > self.max_bytes - self._pinned:
            return  # too big to keep: it is used once and dropped
        self._items[key] = _Entry(value, size, kind, pinned, cheap)
        self.bytes += size
        self._pinned += size if pinned else 0
        group = self._group(kind)
        self._entries[group] += 1
        cap = self.max_entries if group is None else self.kind_entries[group]
        # too many entries of its kind: a cheap one goes first (the least recently used of them). A class's tour built
        # four random models and a random encoder-decoder of 17-25 MB each after SmolLM2 (538 MB, read and traced in
        # ~4 s of CPU), which by then was the least recently used model: it was dropped, then read again at the next
        # stop that used it, into a heap the first copy had left in pieces.
        while self._entries[group] > cap and (self._evict_one(group, spare=(key,), cheap=True)
                                              or self._evict_one(group, spare=(key,))):
            pass
        while self.bytes + self.reserved > self.max_bytes and self._evict_one(spare=(key,)):
            pass

    def _evict_one(self, group=..., spare=(), cheap: bool = False) -> bool:
        """Drop the least recently used entry (of `group`, if given; only a cheap one, if `cheap`), not one of `spare`:
        unheld ones first. False if none can go. Looks from the least recently used on, and stops at the first unheld
        one."""
        held = None  # the least recently used candidate, held: dropped only if every candidate is held
        for key, entry in self._items.items():
            if (entry.pinned or key in spare or (group is not ... and self._group(entry.kind) != group)
                    or (cheap and not entry.cheap)):
                continue
            if not len(entry.holds):
                self._drop(key)
                return True
            held = key if held is None else held
        if held is None:
            return False
        self._drop(held)
        return True

    def _drop(self, key) -> None:
        entry = self._items.pop(key)
        self.bytes -= entry.size
        self._pinned -= entry.size if entry.pinned else 0
        self._entries[self._group(entry.kind)] -= 1
        self.evicted[entry.kind] += 1
        self._freed += entry.size
        self._freed_model |= entry.kind == Kind.MODEL and getattr(entry.value, "in_a_cycle", True)
        if hasattr(entry.value, "settle"):
            self._settle.append(entry.value)
