"""Work that says how far it has got (runtime.streams): an answer's words seen while it is written, one writing per
key however many sessions ask at once, a failed one started again, and the number under way bounded."""
import threading
import time

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
    s = streams.stream("k", waiting_for(gate))
    seen = []
    for n in (1, 2, 3):
        until(lambda n=n: len(s.so_far()) == n)
        assert not s.done
        seen.append(list(s.so_far()))
        gate.set()
    assert s.future.result(5) == "The cat sat" and seen == [["The"], ["The", " cat"], ["The", " cat", " sat"]]


def test_everyone_asking_the_same_follows_one_writing():
    gate, calls = threading.Event(), []

    def compute(say):
        calls.append(1)
        return waiting_for(gate, ("a",))(say)

    got = [streams.stream("same", compute) for _ in range(40)]
    assert all(s is got[0] for s in got) and streams.under_way() == 1
    gate.set()
    assert got[0].future.result(5) == "a" and calls == [1]
    streams.forget("same", got[0])
    assert streams.under_way() == 0


def test_a_failed_writing_is_started_again():
    def fails(say):
        raise RuntimeError("out of luck")

    first = streams.stream("f", fails)
    with pytest.raises(RuntimeError):
        first.future.result(5)
    again = streams.stream("f", lambda say: "fine")
    assert again is not first and again.future.result(5) == "fine"


def test_the_writings_under_way_are_bounded_and_stale_ones_dropped(monkeypatch):
    monkeypatch.setattr(streams, "MOST_STREAMS", 2)
    monkeypatch.setattr(streams, "STALE_AFTER", 0.05)
    a, b = streams.stream("a", lambda say: 1), streams.stream("b", lambda say: 2)
    assert a.future.result(5) == 1 and b.future.result(5) == 2
    monkeypatch.setattr(streams, "STALE_AFTER", 60)
    with pytest.raises(streams.BusyError):
        streams.stream("c", lambda say: 3)  # the two finished ones still wait for their pages
    monkeypatch.setattr(streams, "STALE_AFTER", 0.05)
    time.sleep(0.1)
    assert streams.stream("c", lambda say: 3).future.result(5) == 3  # nobody came for a and b: dropped
    assert streams.under_way() == 1
