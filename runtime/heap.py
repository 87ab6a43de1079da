"""Freed heap pages given back to the system: glibc keeps a dropped model's weights in its heaps otherwise."""
import ctypes

_libc = None
M_ARENA_MAX = -8  # glibc's mallopt parameter
ARENAS = 2  # heaps the process's threads share: the main one and one more (glibc's default: 8 per core)


def _glibc():
    global _libc
    if _libc is None:
        try:
            _libc = ctypes.CDLL("libc.so.6")
            _libc.malloc_trim.argtypes = [ctypes.c_size_t]
            _libc.mallopt.argtypes = [ctypes.c_int, ctypes.c_int]
        except (OSError, AttributeError):  # not glibc: nothing to do
            _libc = False
    return _libc


def bound_heap_growth() -> None:
    """At most ARENAS heaps for all the process's threads. glibc gives threads heaps of their own (up to 16 on 2
    cores), and a block freed into one is reused only by the threads on it: the script threads and the model threads
    each kept their own freed blocks of a few MB to tens of MB, and SmolLM2's logit lens after any other page took a
    process from 1.2 to 2.5 GB (1.21 GB with two heaps; tests/runtime/test_heap.py: 288 MB kept by six threads, 64
    with two heaps). Fixing the mmap threshold instead (4 MB: every big block its own mapping) kept less (the walk of
    bench/llm_pages.py peaked at 1,635 MB, 1,669 with two heaps) but cost 20-55 % on a 512-token MiniLM pass in page
    faults; two heaps cost nothing measurable there (124 against 130 ms, within the runs' noise)."""
    if _glibc():
        _libc.mallopt(M_ARENA_MAX, ARENAS)


def release_freed_memory() -> None:
    """Give freed heap pages back to the system (glibc's malloc_trim). A dropped model's weights are tensors of a
    few MB that glibc keeps in its heaps once its mmap threshold has grown: without this, a process that dropped a
    450 MB model still held about 220 MB of it (bench/memory.py)."""
    if _glibc():
        _libc.malloc_trim(0)
