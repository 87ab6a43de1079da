"""serve.py's coalesced_wakeups: work handed to the event loop from other threads (each message of a script run) wakes
it once per burst, not once per callback, and no callback is ever left waiting for a wake-up that was skipped."""
import asyncio
import contextlib
import threading
from asyncio import selector_events

import pytest

import serve
from harness.wakeups import counted_wakeups


@pytest.fixture(autouse=True)
def plain_asyncio(monkeypatch):
    """The test's own change to asyncio is undone after it (the server's lasts for its process)."""
    loop = selector_events.BaseSelectorEventLoop
    monkeypatch.setattr(loop, "_write_to_self", loop._write_to_self)
    monkeypatch.setattr(loop, "_read_from_self", loop._read_from_self)


def wakeups_for_a_burst(callbacks: int) -> tuple[int, int]:
    """A thread hands `callbacks` callbacks to a loop busy with something else (as a script run hands over its
    messages while the loop writes the last ones): (how many bytes woke the loop, how many callbacks ran)."""
    loop = asyncio.new_event_loop()
    counted = counted_wakeups(loop)
    ran = []
    try:
        handed = threading.Event()

        def hand_over():
            for i in range(callbacks):
                loop.call_soon_threadsafe(ran.append, i)
            handed.set()

        async def busy_then_wait():
            threading.Thread(target=hand_over).start()
            handed.wait(5)  # the loop is busy (it does not read its self-pipe) while the thread hands over
            while len(ran) < callbacks:
                await asyncio.sleep(0.001)

        loop.run_until_complete(asyncio.wait_for(busy_then_wait(), 5))
    finally:
        loop.close()
    return counted.sends, len(ran)


def test_a_burst_handed_over_while_the_loop_is_busy_wakes_it_once():
    assert wakeups_for_a_burst(33) == (33, 33)  # asyncio: a byte for each callback
    assert serve.coalesced_wakeups()
    assert wakeups_for_a_burst(33) == (1, 33)


def test_installing_twice_wraps_once():
    assert serve.coalesced_wakeups()
    once = selector_events.BaseSelectorEventLoop._write_to_self
    assert serve.coalesced_wakeups()
    assert selector_events.BaseSelectorEventLoop._write_to_self is once
    assert wakeups_for_a_burst(5) == (1, 5)


def test_callbacks_handed_over_while_the_loop_reads_still_run_and_wake_it_later(monkeypatch):
    """The races the flag must not lose. While the loop reads its self-pipe, one thread hands a callback over just
    before the read (its byte is read with the others) and one just after (the flag is still up: no byte). Both must
    run, and a callback handed over later, once the loop sleeps in select() with nothing else to wake it, must wake
    it: it would not if the flag stayed up with no byte left to read."""
    loop_class = selector_events.BaseSelectorEventLoop
    read = loop_class._read_from_self
    ran, reads = [], []

    def reading(self):
        reads.append(1)
        if len(reads) == 1:
            self.call_soon_threadsafe(ran.append, "before the read")
        read(self)
        if len(reads) == 1:
            self.call_soon_threadsafe(ran.append, "after the read")

    monkeypatch.setattr(loop_class, "_read_from_self", reading)
    assert serve.coalesced_wakeups()  # wraps `reading`
    loop = asyncio.new_event_loop()
    try:
        async def main():
            done = loop.create_future()
            threading.Thread(target=loop.call_soon_threadsafe, args=(ran.append, "first")).start()
            await asyncio.wait_for(until(lambda: len(ran) == 3), 5)

            def later():  # from another thread, once the loop sleeps
                loop.call_soon_threadsafe(done.set_result, None)
                timely.append(woken.wait(2))
                if not timely[-1]:
                    loop._csock.send(b"\0")  # rescue it: a byte the flag does not know of

            woken, timely = threading.Event(), []
            threading.Timer(0.05, later).start()
            await done
            woken.set()
            while not timely:
                await asyncio.sleep(0.001)
            return timely[0]

        async def until(done):
            while not done():
                await asyncio.sleep(0.001)

        assert loop.run_until_complete(main()), "the loop slept through a callback handed over"
    finally:
        loop.close()
    assert sorted(ran) == ["after the read", "before the read", "first"]


def test_no_callback_waits_for_a_wakeup_that_was_skipped():
    """Four threads hand over 20,000 callbacks in all, each waiting for its last one to run, to a loop that has nothing
    else to do (it sleeps in select() between them). A skipped wake-up with no byte left would leave the loop asleep:
    the thread's wait would time out (and it would wake the loop itself, so the test ends)."""
    assert serve.coalesced_wakeups()
    loop = asyncio.new_event_loop()
    stuck, wake = [], loop._csock

    def hand_over(n):
        for i in range(n):
            done = threading.Event()
            loop.call_soon_threadsafe(done.set)
            if not done.wait(2):
                stuck.append(i)
                wake.send(b"\0")
                done.wait(2)
                return

    try:
        async def main():
            finished = loop.create_future()
            threads = [threading.Thread(target=hand_over, args=(5000,)) for _ in range(4)]

            def all_done():
                for thread in threads:
                    thread.join()
                loop.call_soon_threadsafe(finished.set_result, None)
                with contextlib.suppress(OSError):  # the loop may have ended and closed its socket
                    wake.send(b"\0")  # the end is not what is tested: make sure it is seen

            for thread in threads:
                thread.start()
            threading.Thread(target=all_done).start()
            await finished

        loop.run_until_complete(main())
    finally:
        loop.close()
    assert stuck == []
