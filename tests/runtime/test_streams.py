"""Work that says how far it has got (runtime.streams): an answer's words seen while it is written, one writing per
key however many sessions ask at once, a failed one started again, and the number under way bounded."""
import threading
import time
from concurrent.futures import Future

import pytest

from runtime import streams


@pytest.fixture(autouse=True)
def no_streams(monkeypatch):
    monkeypatch.setattr(streams, "_streams", {})


def waiting_for(gate: threading.Event, words=("The", " cat", " sat")):
    def compute(say):
        for word in words:
            say(word)
            assert gate.wait(5)
            gate.clear()
        return "".join(words)
    return compute


def until(condition, timeout: float = 5.0) -> None:
    end = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < end, "not in time"
        time.sleep(0.005)


def test_the_words_are_seen_while_they_are_written():
    gate = threading.Event()
    s = streams.stream("k", streams.queued(waiting_for(gate)))
    seen = []
    for n in (1, 2, 3):
        until(lambda n=n: len(s.so_far()) == n)
        assert not s.done
        seen.append(list(s.so_far()))
        gate.set()
    assert s.future.result(5) == "The cat sat" and seen == [["The"], ["The", " cat"], ["The", " cat", " sat"]]


def test_a_pause_between_two_writes_lasts_through_words_and_ends_with_the_answer():
    gate = threading.Event()
    s = streams.stream("paused", streams.queued(waiting_for(gate, ("a", "b", "c"))))
    until(lambda: len(s.so_far()) == 1)
    gate.set()
    start = time.monotonic()
    s.until_end(0.3)  # a word said meanwhile does not end the pause
    assert time.monotonic() - start >= 0.29 and len(s.so_far()) == 2 and not s.done
    threading.Timer(0.05, gate.set).start()
    threading.Timer(0.1, gate.set).start()
    start = time.monotonic()
    s.until_end(10)  # the answer's end does, at once
    assert s.done and time.monotonic() - start < 5 and s.future.result() == "abc"
    streams.leave("paused", s)


def test_a_follower_waiting_wakes_at_the_next_word_and_at_the_end_not_on_a_clock():
    gate = threading.Event()
    s = streams.stream("woken", streams.queued(waiting_for(gate, ("a", "b"))))
    until(lambda: len(s.so_far()) == 1)
    start = time.monotonic()
    s.wait(1, 0.2)  # nothing more said: it waits its whole timeout
    assert time.monotonic() - start >= 0.19 and len(s.so_far()) == 1
    threading.Timer(0.05, gate.set).start()
    start = time.monotonic()
    s.wait(1, 10)
    assert len(s.so_far()) == 2 and time.monotonic() - start < 5
    threading.Timer(0.05, gate.set).start()
    s.wait(2, 10)  # no third word: woken by the end
    assert s.done and s.future.result() == "ab"
    streams.leave("woken", s)
    streams.forget("woken", s)


def test_everyone_asking_the_same_follows_one_writing():
    gate, calls = threading.Event(), []

    def compute(say):
        calls.append(1)
        return waiting_for(gate, ("a",))(say)

    got = [streams.stream("same", streams.queued(compute)) for _ in range(40)]
    assert all(s is got[0] for s in got) and streams.under_way() == 1
    gate.set()
    assert got[0].future.result(5) == "a" and calls == [1]
    streams.forget("same", got[0])
    assert streams.under_way() == 0


def test_a_failed_writing_is_started_again():
    def fails(say):
        raise RuntimeError("out of luck")

    first = streams.stream("f", streams.queued(fails))
    with pytest.raises(RuntimeError):
        first.future.result(5)
    again = streams.stream("f", streams.queued(lambda say: "fine"))
    assert again is not first and again.future.result(5) == "fine"


def test_the_writings_under_way_are_bounded_and_stale_ones_dropped(monkeypatch):
    monkeypatch.setattr(streams, "MOST_STREAMS", 2)
    monkeypatch.setattr(streams, "STALE_AFTER", 0.05)
    a, b = streams.stream("a", streams.queued(lambda say: 1)), streams.stream("b", streams.queued(lambda say: 2))
    assert a.future.result(5) == 1 and b.future.result(5) == 2
    monkeypatch.setattr(streams, "STALE_AFTER", 60)
    with pytest.raises(streams.BusyError):
        streams.stream("c", streams.queued(lambda say: 3))  # the two finished ones still wait for their pages
    monkeypatch.setattr(streams, "STALE_AFTER", 0.05)
    time.sleep(0.1)
    assert streams.stream("c", streams.queued(lambda say: 3)).future.result(5) == 3  # nobody came for a and b: dropped
    assert streams.under_way() == 1


def test_the_last_session_to_stop_following_cancels_the_writing_and_frees_its_place():
    gate = threading.Event()
    blocker = streams.stream("busy", streams.queued(waiting_for(gate, ("x",))))  # holds the model thread(s)
    others = [streams.stream(f"hold{i}", streams.queued(waiting_for(gate, ("x",)))) for i in range(3)]
    answer = streams.queued(lambda say: "answer")
    a, b = streams.stream("q", answer), streams.stream("q", answer)
    assert a is b and a.followers == 2 and a.waiting
    streams.leave("q", a)
    assert not a.future.cancelled() and streams.under_way() == 5  # the other session still follows it
    streams.leave("q", b)
    assert a.future.cancelled() and streams.under_way() == 4  # out of the line at once, and forgotten
    again = streams.stream("q", answer)  # asked again: a new writing
    assert again is not a
    for _ in range(8):
        gate.set()
        time.sleep(0.01)
    assert again.future.result(5) == "answer" and blocker.future.result(5) == "x"
    assert all(o.future.result(5) == "x" for o in others)


class Held:
    """A job of its own kind (runtime.batching's): its line, and its cancel."""

    def __init__(self, say):
        self.future, self.cancelled, self.say = Future(), False, say

    def ahead(self):
        return None if self.cancelled else 2

    def cancel(self):
        self.cancelled = True
        self.future.cancel()


def test_a_stream_follows_any_job_its_start_gives():
    s = streams.stream("j", Held)
    assert s.waiting and s.ahead() == 2
    s.job.say(7)
    assert s.so_far() == [7]
    streams.leave("j", s)
    assert s.job.cancelled and streams.under_way() == 0
