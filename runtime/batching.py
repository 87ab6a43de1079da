"""Answers written together on the model threads (model.causal.batch): when a class asks at once, every question in
flight is answered in one batch, one word of each per step, instead of one answer after another.

One Writer per (model, heads switched off). Its work is two kinds of jobs in the model threads' one line
(runtime.model_thread.QUEUE), like any page's pass: a reading takes the questions that have arrived (JOINS at most)
and reads their prompts together, each its first word; a tick lets the questions read join the batch, writes one word
of every answer in it, then queues the next tick. The two run on the two model threads at once: the answers in
flight do not wait while newcomers' prompts are read (a class's fourteen readings took 0.46 s each in the middle of
every answer). A page's pass waits at most one job behind a class's answers, never for a whole answer; an answer
leaves the batch when it is done, or at once when nobody follows it any more (runtime.streams.leave).

Bounded: at most LIMIT answers in flight per model, the others wait in order (`ahead` says how many are before
one); each answer's keys and values and what its page will read are promised in the process's one memory budget
(runtime.budget.try_reserve) before its prompt is read, and given back when it leaves; a question that cannot get
its room waits, one that could never fit is refused with the budget's message.
"""
import threading
import time
from collections import deque
from collections.abc import Callable, Collection
from concurrent.futures import CancelledError, Future

from torch import Tensor

from model.causal.batch import Batch
from model.causal.rows import Joining, Row, Written
from model.sampling import Sampling
from runtime.memory import budget
from runtime.model_thread import QUEUE

# Answers in flight per model. A step's time grows with the rows it reads (SmolLM2-135M, 2 cores: ~0.10 s at 8,
# ~0.2-0.3 s at 40; bench/class_asks.py), so 40 answers of 48 words take ~15 s together where one after another the
# last waits ~2 minutes. Memory bounds it too: each answer's room is promised in the budget (11.7 MB for 48 words after
# a 36-token question), so with the default budget and SmolLM2 in it 38 are in flight and the rest wait.
LIMIT = 40
JOINS = 4  # prompts read together at most (a reading: the first words of that many wait for one pass)
IDLE = 0.05  # s a reading waits when nothing could start (the budget's room promised to other work)


class Asked:
    """One question in a Writer's line, then in its batch: a runtime.streams Job."""

    def __init__(self, writer: "Writer", prompt: Tensor, steps: int, sampling: Sampling | None,
                 stop: Collection[int], say: Callable[[int], None], shared: int = 0,
                 done: Callable[[Written], object] | None = None):
        self.writer, self.prompt, self.steps, self.sampling, self.stop, self.say, self.shared, self.done = \
            writer, prompt, steps, sampling, stop, say, shared, done
        self.future: Future = Future()
        self.row: Row | None = None
        self.reserved = 0
        self.cancelled = False

    def ahead(self) -> int | None:
        return self.writer.ahead(self)

    def cancel(self) -> None:
        self.writer.cancel(self)


class Writer:
    """The answers of one model (with the same heads off) in flight and waiting. Thread-safe: sessions submit and
    cancel; its ticks run on the model threads one at a time, and so do its readings, a tick and a reading at once."""

    def __init__(self, model, off=None, limit: int = LIMIT, on_idle: Callable[["Writer"], None] | None = None,
                 spare: tuple = ()):
        """spare: the budget's keys its room must never be made by dropping (the model's own: dropped from the
        budget while it writes, it would be loaded again beside itself)."""
        self.batch, self.spare, self.limit = Batch(model, off), spare, limit
        self._kept = False  # the spare keys kept in the budget while it has work
        self._lock = threading.Lock()
        self._waiting: deque[Asked] = deque()
        self._flight: list[Asked] = []  # promised their room: being read, read (ready) or in the batch (admitted)
        self._ready: list[Asked] = []  # read, joining the batch at the next tick
        self._admitted: list[Asked] = []  # in the batch
        self._ticking = self._reading = False  # a tick, a reading queued or running
        self._blocked = False  # a question waits for the room of an answer in flight
        self._on_idle = on_idle
        self.ticks = 0

    def ask(self, prompt: Tensor, steps: int, sampling: Sampling | None, stop: Collection[int],
            say: Callable[[int], None], shared: int = 0, done: Callable[[Written], object] | None = None) -> Asked:
        """A question (its prompt's first `shared` words a beginning others share: model.causal.batch.Batch.join)
        in the line; answered word by word to say(id). done(written), on the model thread as soon as it is written
        (its room given back first): what its future gives instead (the page's answer, put in the budget there, so
        that no finished answer waits outside the budget for its page to come and read it)."""
        asked = Asked(self, prompt, steps, sampling, stop, say, shared, done)
        with self._lock:
            self._waiting.append(asked)
            self._start()
        return asked

    def ahead(self, asked: Asked) -> int | None:
        """How many questions are before it in the line; None once it is being written (or done)."""
        with self._lock:
            for i, other in enumerate(self._waiting):
                if other is asked:
                    return i
        return None

    def cancel(self, asked: Asked) -> None:
        with self._lock:
            asked.cancelled = True
            if asked in self._waiting:
                self._waiting.remove(asked)
                asked.future.cancel()

    @property
    def in_flight(self) -> int:
        with self._lock:
            return len(self._flight)

    @property
    def idle(self) -> bool:
        with self._lock:
            return self._idle()

    def _idle(self) -> bool:
        """Under the lock: nothing in flight, waiting or queued."""
        return not (self._flight or self._waiting or self._ticking or self._reading)

    # ------------------------------------------------------------------ on the model threads
    def _start(self) -> None:
        """Under the lock: each job its work needs, queued unless it is: a tick while answers are in the batch or
        read for it; a reading while questions wait and the batch has room (on the other model thread when it is
        free, so that the answers in flight do not wait for the newcomers' prompts)."""
        if not self._kept and (self._waiting or self._flight):
            self._kept = True
            for key in self.spare:
                budget().keep(key)
        if not self._ticking and (self._admitted or self._ready):
            self._ticking = True
            QUEUE.submit(self._tick, ())
        held = self._blocked and self._flight  # until one of them gives its room back
        if not self._reading and not held and self._waiting and len(self._flight) < self.limit:
            self._reading = True
            QUEUE.submit(self._read, ())

    def _ended(self) -> None:
        """At a job's end: the jobs its work still needs queued; when it has none, its spare keys let go."""
        with self._lock:
            self._start()
            settled = self._idle()
            if settled and self._kept:  # under the lock: a question asked now keeps them again
                self._kept = False
                for key in self.spare:
                    budget().unkeep(key)
        if settled and self._on_idle is not None:
            self._on_idle(self)

    def _tick(self) -> None:
        """The answers read since the last tick join the batch; one word of each is written."""
        try:
            with self._lock:
                ready, self._ready = self._ready, []
                self._admitted += [a for a in ready if not a.cancelled]
            self.batch.admit([a.row for a in ready if not a.cancelled])
            for asked in ready:
                if asked.cancelled:
                    self._end(asked)
            self._leave_cancelled()
            for row in self.batch.step():
                self._finish(next(a for a in self._admitted if a.row is row))
            self.ticks += 1
        except BaseException as e:  # noqa: BLE001 - said to every answer in the batch, never lost on a model thread
            for asked in list(self._admitted):
                self._end(asked, error=e, leave=True)
        with self._lock:
            self._ticking = False
        self._ended()

    def _read(self) -> None:
        """The prompts of the questions that may start now, read (JOINS at most, together) for the next tick."""
        started = False
        try:
            started = self._join()
        except BaseException as e:  # noqa: BLE001 - said to the questions being read, never lost on a model thread
            started = True
            with self._lock:
                reading = [a for a in self._flight if a not in self._admitted and a not in self._ready]
            for asked in reading:
                self._end(asked, error=e)
        finally:
            with self._lock:
                self._reading = False
                stalled = not started and self._waiting and not self._flight
            if stalled:
                time.sleep(IDLE)  # only the budget's room held it back: let other work end first
            self._ended()

    def _leave_cancelled(self) -> None:
        for asked in [a for a in self._admitted if a.cancelled]:
            self._end(asked, leave=True)

    def _join(self) -> bool:
        """Read the prompts of the questions that may start now (JOINS at most, together); whether any did."""
        b, joining = self.batch, []
        for _ in range(JOINS):
            with self._lock:
                if not self._waiting or len(self._flight) >= self.limit:
                    break
                asked = self._waiting.popleft()
                if asked.cancelled:
                    continue
                self._flight.append(asked)
            need = b.row_bytes(asked.prompt.numel(), asked.steps)  # promised while it is written
            try:
                if not budget().try_reserve(need, self.spare):
                    with self._lock:  # back to the front of the line, until an answer gives its room back
                        self._flight.remove(asked)
                        self._waiting.appendleft(asked)
                        self._blocked = bool(self._flight)
                    break
            except Exception as e:  # noqa: BLE001 - its page says it (the budget's message)
                self._end(asked, error=e)
                continue
            asked.reserved = need
            if asked.future.set_running_or_notify_cancel():
                joining.append(asked)
            else:
                self._end(asked)
        if not joining:
            return False
        try:
            rows = b.read_all([Joining(a.prompt, a.steps, a.sampling, a.stop, a.say, a.shared) for a in joining])
        except Exception as e:  # noqa: BLE001 - said to each of them (a model error)
            for asked in joining:
                self._end(asked, error=e)
            return True
        for asked, row in zip(joining, rows):
            asked.row = row
            if row.done:
                self._finish(asked)
            else:
                with self._lock:
                    self._ready.append(asked)
        return True

    def _finish(self, asked: Asked) -> None:
        try:
            result = asked.row.result()
            asked.row = None  # its record freed before what is made of it
            if asked.done is not None:
                self._give_back(asked)
                result = asked.done(result)
        except Exception as e:  # noqa: BLE001 - its page says it
            self._end(asked, error=e)
            return
        self._end(asked, result=result)

    def _give_back(self, asked: Asked) -> None:
        if asked.reserved:
            budget().release(asked.reserved)
            asked.reserved = 0
            with self._lock:
                self._blocked = False  # room given back: a question held back by the budget may try again

    def _end(self, asked: Asked, result: object = None, error: BaseException | None = None,
             leave: bool = False) -> None:
        """It leaves the flight (and the batch, if `leave`), its room given back, its future set."""
        with self._lock:
            if asked in self._flight:
                self._flight.remove(asked)
            if asked in self._admitted:
                self._admitted.remove(asked)
        if leave and asked.row is not None:
            self.batch.leave(asked.row)
        self._give_back(asked)
        asked.row = None
        if asked.future.done():
            return
        if error is not None:
            asked.future.set_exception(error)
        elif asked.cancelled:  # a running future cannot be cancelled: it ends with the reason
            asked.future.set_exception(CancelledError("nobody follows this answer any more"))
        else:
            asked.future.set_result(result)


_writers: dict = {}
_writers_lock = threading.Lock()


def writer(key, model, off=None, spare: tuple = (), layers=None) -> Writer:
    """The Writer of key (a model and its heads off), made when first asked; forgotten when it has nothing to do.
    spare: the model's key in the budget (Writer). layers: the model's batch layer graphs, once traced
    (model.causal.compiled_batch): its next steps take them (the same numbers, without the GIL)."""
    with _writers_lock:
        found = _writers.get(key)
        if found is None or found.batch.model is not model:
            found = _writers[key] = Writer(model, off, on_idle=lambda w: _idle(key, w), spare=spare)
        if layers is not None:
            found.batch.compiled = layers
        return found


def _idle(key, w: Writer) -> None:
    with _writers_lock:
        if _writers.get(key) is w and w.idle:
            del _writers[key]
