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
