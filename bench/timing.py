"""What the benchmark scripts share to time one call: CPU time of the calling thread, median of many; and a busy
Python thread beside it."""
import statistics
import threading
import time


def cpu_ms(fn, repeat: int, warmup: int = 1) -> float:
    """Median CPU ms of fn() on this thread over `repeat` calls, after `warmup` calls not counted."""
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(repeat):
        start = time.thread_time()
        fn()
        times.append(time.thread_time() - start)
    return 1e3 * statistics.median(times)


def wall(fn) -> float:
    """Wall seconds of one fn() call."""
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def rotating_rounds(runs: dict, rounds: int) -> dict[str, list[float]]:
    """Wall seconds of each of runs' calls per round, each one first as often as the others (so that what one
    leaves in the caches favours none)."""
    times = {k: [] for k in runs}
    names = list(runs)
    for i in range(rounds):
        for k in names[i % len(names):] + names[:i % len(names)]:
            times[k].append(wall(runs[k]))
    return times


class Busy:
    """A Python thread that keeps the interpreter busy (a page script, the event loop): always, or `busy` s of every
    `busy + rest` s."""

    def __init__(self, busy: float | None = None, rest: float = 0.0):
        self.busy, self.rest = busy, rest

    def __enter__(self):
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._spin, daemon=True)
        self.thread.start()
        return self

    def _spin(self):
        while not self.stop.is_set():
            if self.busy is None:
                sum(range(1000))
                continue
            start = time.perf_counter()
            while time.perf_counter() - start < self.busy:
                sum(range(1000))
            time.sleep(self.rest)

    def __exit__(self, *exc):
        self.stop.set()
        self.thread.join()
