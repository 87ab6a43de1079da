"""Work on the model threads that says how far it has got while it runs: a chat model's answer, word by word, so a
page can write it as it comes (never a frozen page). One stream per key, shared by every session that asks for the
same key meanwhile; its result then goes into the budget (runtime.memory.cached) and the stream is forgotten."""
import threading
import time
from collections.abc import Callable

from runtime.model_thread import QUEUE

MOST_STREAMS = 64  # streams kept at once: each holds one result until a page puts it in the budget
STALE_AFTER = 120.0  # s: a finished stream nobody collected (its page was closed) is dropped after this


class Stream:
    """compute(say) on a model thread; say(item) adds an item (a word id) to what has been said so far."""

    def __init__(self, compute: Callable[[Callable[[object], None]], object]):
        self._items: list = []
        self._lock = threading.Lock()
        self.ended_at: float | None = None
        self.future, self.place = QUEUE.submit(compute, (self._say,))
        self.future.add_done_callback(self._ended)

    def _say(self, item) -> None:
        with self._lock:
            self._items.append(item)

    def _ended(self, _future) -> None:
        self.ended_at = time.monotonic()

    def so_far(self) -> list:
        with self._lock:
            return list(self._items)

    @property
    def done(self) -> bool:
        return self.future.done()

    @property
    def waiting(self) -> bool:
        """Queued behind other work: not started yet."""
        return not (self.future.running() or self.future.done())


class BusyError(Exception):
    """Too many answers are being written at once; the page says so and asks to try again."""


_streams: dict = {}
_lock = threading.Lock()


def stream(key, compute: Callable[[Callable[[object], None]], object]) -> Stream:
    """The stream of key: started once, shared by every session asking for key until it is forgotten; BusyError
    when MOST_STREAMS are already under way."""
    with _lock:
        now = time.monotonic()
        for old, s in list(_streams.items()):
            if s.ended_at is not None and now - s.ended_at > STALE_AFTER:
                del _streams[old]
        found = _streams.get(key)
        if found is not None and not (found.done and found.future.exception() is not None):
            return found
        if len(_streams) >= MOST_STREAMS:
            raise BusyError
        _streams[key] = found = Stream(compute)
        return found


def forget(key, done: Stream) -> None:
    """Drop the stream of key once its result is in the budget (or its failure said)."""
    with _lock:
        if _streams.get(key) is done:
            del _streams[key]


def under_way() -> int:
    with _lock:
        return len(_streams)
