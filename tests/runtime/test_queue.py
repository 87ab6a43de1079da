"""The model threads' one line (runtime.model_thread._Queue): in order, but a class's batch step (urgent) starts
first while all the model threads but one are free of urgent jobs, and a page's pass that has waited AGED s goes
first again: a class's step never waits behind a line of page passes, and a page's pass waits a bounded time."""
import threading
from concurrent.futures import ThreadPoolExecutor

import pytest

from runtime import model_thread


@pytest.fixture
def line(monkeypatch):
    """(a fresh line on `n` model threads, what its jobs did in order, a gate that holds jobs)."""
    pools = []

    def make(n: int):
        pool = ThreadPoolExecutor(n, thread_name_prefix="attnviz-model")
        pools.append(pool)
        monkeypatch.setattr(model_thread, "model_threads", lambda: pool)
        return model_thread._Queue()

    yield make
    for pool in pools:
        pool.shutdown(wait=True, cancel_futures=True)


def _busy(queue, n: int, urgent: bool = False):
    """n jobs that hold a model thread each until the returned event is set (started before this returns)."""
    go, started = threading.Event(), threading.Semaphore(0)

    def hold():
        started.release()
        go.wait(10)

    futures = [queue.submit(hold, (), urgent)[0] for _ in range(n)]
    for _ in range(n):
        assert started.acquire(timeout=10)
    return go, futures


def _done(futures) -> None:
    for future in futures:
        future.result(timeout=10)


def test_a_class_step_goes_before_the_pages_passes_queued_before_it(line):
    queue, order = line(2), []
    go, busy = _busy(queue, 2)
    page = [queue.submit(order.append, (f"page {i}",))[0] for i in range(3)]
    step = queue.submit(order.append, ("step",), True)[0]
    go.set()
    _done(busy + page + [step])
    assert order[0] == "step"
    assert order[1:] == ["page 0", "page 1", "page 2"]  # the rest in order


def test_a_waiting_page_pass_counts_the_urgent_steps_as_ahead_of_it(line):
    queue = line(2)
    go, busy = _busy(queue, 2)
    _, first = queue.submit(lambda: None, ())
    _, second = queue.submit(lambda: None, ())
    queue.submit(lambda: None, (), True)
    assert [queue.ahead(first), queue.ahead(second)] == [1, 2]
    go.set()


def test_a_page_pass_that_waited_long_goes_before_a_class_step(line, monkeypatch):
    monkeypatch.setattr(model_thread, "AGED", 0.05)
    queue, order = line(2), []
    go, busy = _busy(queue, 2)
    page = queue.submit(order.append, ("page",))[0]
    threading.Event().wait(0.1)  # the page's pass has now waited AGED
    step = queue.submit(order.append, ("step",), True)[0]
    go.set()
    _done(busy + [page, step])
    assert order == ["page", "step"]


def test_while_a_class_step_runs_another_urgent_job_waits_in_order(line):
    """With a class's step running on one of two threads, another class's step (another model's) does not go before
    the pages' passes: urgent jobs jump the line on all the model threads but one."""
    queue, order = line(2), []
    step_go, steps = _busy(queue, 1, urgent=True)
    go, busy = _busy(queue, 1)
    page = queue.submit(order.append, ("page",))[0]
    other = queue.submit(order.append, ("other class",), True)[0]
    go.set()
    _done(busy + [page, other])
    assert order == ["page", "other class"]
    step_go.set()
    _done(steps)


def test_on_one_model_thread_the_line_is_in_order(line):
    queue, order = line(1), []
    go, busy = _busy(queue, 1)
    page = queue.submit(order.append, ("page",))[0]
    step = queue.submit(order.append, ("step",), True)[0]
    go.set()
    _done(busy + [page, step])
    assert order == ["page", "step"]


def test_a_job_s_error_is_its_future_s_and_a_cancelled_job_never_runs(line):
    queue, ran = line(2), []
    go, busy = _busy(queue, 2)
    cancelled = queue.submit(ran.append, ("cancelled",))[0]
    failing = queue.submit(lambda: 1 / 0, ())[0]
    assert cancelled.cancel()
    go.set()
    _done(busy)
    with pytest.raises(ZeroDivisionError):
        failing.result(timeout=10)
    assert ran == [] and cancelled.cancelled()
