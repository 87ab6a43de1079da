"""A server's long-lived threads share the process's freed memory: with glibc's default heaps (up to 8 per core),
16 MB blocks freed by six threads in turn stayed in six heaps (288 MB here; SmolLM2's logit lens after another page:
+1.3 GB), unless runtime.heap.bound_heap_growth capped the heaps first (the budget does, once per process)."""
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = """
import sys, threading
from pathlib import Path
import numpy as np
from runtime.heap import bound_heap_growth

def rss():
    line = next(l for l in Path("/proc/self/status").read_text().splitlines() if l.startswith("VmRSS"))
    return int(line.split()[1]) // 1024

if sys.argv[1] == "bounded":
    bound_heap_growth()
big = np.ones(40 * 2**20 // 8)
del big  # glibc's mmap threshold grows past 16 MB: such blocks now come from the heaps
before, turn, done, worked = rss(), threading.Lock(), threading.Event(), []

def work():  # a long-lived thread (a server's), each in turn
    with turn:
        kept = []
        for _ in range(12):
            block = np.ones(16 * 2**20 // 8)
            kept.append(np.ones(1000))  # small blocks after each: the heap cannot shrink from its top
        del block
        worked.append(kept)
    done.wait()

threads = [threading.Thread(target=work) for _ in range(6)]
for thread in threads:
    thread.start()
while len(worked) < len(threads):
    pass
print(rss() - before)
done.set()
for thread in threads:
    thread.join()
"""


def grown(mode: str) -> int:
    out = subprocess.run([sys.executable, "-c", SCRIPT, mode], cwd=ROOT, capture_output=True, text=True, check=True)
    return int(out.stdout.split()[-1])


def test_freed_blocks_are_shared_by_a_server_s_threads():
    plain, bounded = grown("plain"), grown("bounded")
    assert plain >= 200  # the case it fixes, shown to happen here (MB)
    assert bounded <= 100 and bounded <= plain / 3
