"""What the benchmark scripts share to time one call: CPU time of the calling thread, median of many."""
import statistics
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
