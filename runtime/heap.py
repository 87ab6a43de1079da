"""Freed heap pages given back to the system: glibc keeps a dropped model's weights in its heaps otherwise."""
import ctypes

_libc = None
M_MMAP_THRESHOLD = -3  # glibc's mallopt parameter
MMAP_THRESHOLD = 4 * 2**20  # bytes: a block this big or bigger is mapped on its own and unmapped when freed


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
    """Blocks of MMAP_THRESHOLD bytes or more (a layer's maps, a chunk of logits) mapped on their own, so that freeing
    one gives it back at once. glibc's threshold otherwise grows with the blocks freed, up to 32 MB; such blocks then
    stay in the heap of the thread that freed them, which other threads do not reuse: SmolLM2's logit lens after any
    other page took a process from 1.2 to 2.5 GB (1.19 GB with the threshold fixed; bench/llm_pages.py)."""
    if _glibc():
        _libc.mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD)


def release_freed_memory() -> None:
    """Give freed heap pages back to the system (glibc's malloc_trim). A dropped model's weights are tensors of a
    few MB that glibc keeps in its heaps once its mmap threshold has grown: without this, a process that dropped a
    450 MB model still held about 220 MB of it (bench/memory.py)."""
    if _glibc():
        _libc.malloc_trim(0)
