"""Work on the model threads that says how far it has got while it runs: a chat model's answer, word by word, so a
page can write it as it comes (never a frozen page). One stream per key, shared by every session that asks for the
same key meanwhile; its result then goes into the budget (runtime.memory.cached) and the stream is forgotten.

A stream's work is a job: a computation queued for a model thread (`queued`, runtime.model_thread.QUEUE), or an
answer written with others in one batch (runtime.batching). Each session that follows a stream says so (`stream`)
and says when it stops following (`leave`: its page was rerun, reloaded or closed); when nobody follows a stream any
more before its end, its job is cancelled, so that its place in the line or in the batch is free at once."""
import threading
import time
from collections.abc import Callable
from typing import Protocol

from runtime.model_thread import QUEUE

MOST_STREAMS = 64  # streams kept at once: each holds one result until a page puts it in the budget
STALE_AFTER = 120.0  # s: a finished stream nobody collected (its page was closed) is dropped after this


class Job(Protocol):
    """What a stream runs: its future, where it waits, and how it is cancelled."""

    future: object  # concurrent.futures.Future

    def ahead(self) -> int | None:
        """Jobs ahead of it in its line while it waits; None once it has started."""

    def cancel(self) -> None:
        """Stop it: out of its line if it waits, out of the batch if it is being written."""


class _Queued:
    def __init__(self, compute: Callable, say: Callable):
        self.future, self._place = QUEUE.submit(compute, (say,))

    def ahead(self) -> int | None:
        return None if self.future.running() or self.future.done() else QUEUE.ahead(self._place)

    def cancel(self) -> None:
        self.future.cancel()  # only while it waits: a computation that runs goes to its end


def queued(compute: Callable[[Callable[[object], None]], object]) -> Callable[[Callable], Job]:
    """A stream's start: compute(say) on a model thread, in the one line of the model threads' jobs."""
    return lambda say: _Queued(compute, say)


class Stream:
    """A job said word by word: say(item) adds an item (a word id) to what has been said so far."""

    def __init__(self, start: Callable[[Callable[[object], None]], Job]):
        self._items: list = []
        self._lock = threading.Lock()
        self._said = threading.Condition(self._lock)  # a word said, or the end
        self.ended_at: float | None = None
        self.followers = 0  # sessions following it now (stream / leave)
        self.job = start(self._say)
        self.future = self.job.future
        self.future.add_done_callback(self._ended)

    def _say(self, item) -> None:
        with self._said:
            self._items.append(item)
            self._said.notify_all()

    def _ended(self, _future) -> None:
        self.ended_at = time.monotonic()
        with self._said:
            self._said.notify_all()

    def wait(self, seen: int, timeout: float) -> None:
        """Until more than `seen` items are said, or the job ends, or `timeout` s: a page following the stream wakes
        once per word, not on a clock (forty pages looking ten times a second took the GIL from the model's steps)."""
        with self._said:
            self._said.wait_for(lambda: len(self._items) > seen or self.future.done(), timeout)

    def until_end(self, timeout: float) -> None:
        """Until the job ends, or `timeout` s: a page's pause between two writes of the answer, cut short by its end."""
        with self._said:
            self._said.wait_for(self.future.done, timeout)

    def so_far(self) -> list:
        with self._lock:
            return list(self._items)

    @property
    def done(self) -> bool:
        return self.future.done()

    @property
    def waiting(self) -> bool:
        """Queued behind other work: not started yet."""
        return self.ahead() is not None

    def ahead(self) -> int | None:
        return None if self.done else self.job.ahead()


class BusyError(Exception):
    """Too many answers are being written at once; the page says so and asks to try again."""


_streams: dict = {}
_lock = threading.Lock()


def stream(key, start: Callable[[Callable], Job]) -> Stream:
    """The stream of key, followed by one more session (which calls leave when it stops following): started once
    (start(say) -> its Job: `queued(compute)` for a computation of its own, a runtime.batching Writer's ask for an
    answer), shared by every session asking for key until it is forgotten; BusyError when MOST_STREAMS are already
    under way."""
    with _lock:
        now = time.monotonic()
        for old, s in list(_streams.items()):
            if s.ended_at is not None and now - s.ended_at > STALE_AFTER:
                del _streams[old]
        found = _streams.get(key)
        if found is None or found.future.cancelled() or (found.done and found.future.exception() is not None):
            if len(_streams) >= MOST_STREAMS:
                raise BusyError
            _streams[key] = found = Stream(start)
        found.followers += 1
        return found


def leave(key, followed: Stream) -> None:
    """A session stops following the stream of key (its page's rerun, or the page is gone). The last to leave a
    stream before its end cancels its job and forgets it: its place is free at once."""
    with _lock:
        followed.followers -= 1
        if followed.followers > 0 or followed.done:
            return
        if _streams.get(key) is followed:
            del _streams[key]
    followed.job.cancel()


def forget(key, done: Stream) -> None:
    """Drop the stream of key once its result is in the budget (or its failure said)."""
    with _lock:
        if _streams.get(key) is done:
            del _streams[key]


def under_way() -> int:
    with _lock:
        return len(_streams)
