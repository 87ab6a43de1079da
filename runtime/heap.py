"""Freed heap pages given back to the system: glibc keeps a dropped model's weights in its heaps otherwise."""
import ctypes

_libc = None


def release_freed_memory() -> None:
    """Give freed heap pages back to the system (glibc's malloc_trim). A dropped model's weights are tensors of a
    few MB that glibc keeps in its heaps once its mmap threshold has grown: without this, a process that dropped a
    450 MB model still held about 220 MB of it (bench/memory.py)."""
    global _libc
    if _libc is None:
        try:
            _libc = ctypes.CDLL("libc.so.6")
            _libc.malloc_trim.argtypes = [ctypes.c_size_t]
        except (OSError, AttributeError):  # not glibc: nothing to do
            _libc = False
    if _libc:
        _libc.malloc_trim(0)
