"""The budget's room for work that outlives a block (runtime.budget.BoundedCache, of which this is a part: it reads
and changes the cache's own state, under its lock): bytes promised to an answer while it is written, given back when
it ends (runtime.batching), and an entry kept while such work needs it (the model the answers are written with)."""


class Promises:
    """BoundedCache's methods for work that outlives a block (its `room` is for the time of one block)."""

    def try_reserve(self, need: int, spare=()) -> bool:
        """Promise `need` bytes to work that outlives a block (an answer being written, runtime.batching) if they
        fit now, evicting what it takes; False, promising nothing, if only other work's promises are in the way
        (ask again later; nothing is evicted for it then); OverBudget if they can never fit. `spare`: keys not to drop
        for it (the model the work runs on). The caller gives them back with release(need)."""
        with self._room:
            kept = self._kept(spare)
            self._fits_alone(need, kept)
            if kept + self.reserved + need > self.max_bytes:
                return False
            while self.bytes + self.reserved + need > self.max_bytes and self._evict_one(spare=spare):
                pass
            if self.bytes + self.reserved + need > self.max_bytes:
                return False
            self.reserved += need
        self._trim()
        return True

    def keep(self, key) -> bool:
        """Pin the entry of key while work that needs it is under way (a model while its answers are written: dropped
        meanwhile, it would be loaded again beside itself), until as many unkeep(key); False if it is not here."""
        with self._room:
            entry = self._items.get(key)
            if entry is None:
                return False
            if entry.pinned and not entry.kept:
                return True  # pinned for good (the default model): nothing to undo
            entry.kept += 1
            if entry.kept == 1:
                entry.pinned = True
                self._pinned += entry.size
            return True

    def unkeep(self, key) -> None:
        with self._room:
            entry = self._items.get(key)
            if entry is None or entry.kept <= 0:
                return
            entry.kept -= 1
            if entry.kept == 0:
                entry.pinned = False
                self._pinned -= entry.size

    def release(self, need: int) -> None:
        """Give back what try_reserve promised."""
        with self._room:
            self.reserved -= need
            self._room.notify_all()
