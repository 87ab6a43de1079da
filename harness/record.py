"""A benchmark's output, printed and kept (the bench/ scripts use it): what a script prints while it runs goes to
the terminal and, when it ends, into bench/results/<script>.md between the markers below (the notes written around
them stay), with the command, the date, the machine and the versions it ran with. Each run replaces the last; history
is in git.

    if __name__ == "__main__":
        run(__file__, main)
"""
import contextlib
import io
import os
import platform
import re
import sys
import time
from pathlib import Path

RESULTS = Path(__file__).resolve().parents[1] / "bench" / "results"
BEGIN, END = "<!-- written by the script: begin -->", "<!-- written by the script: end -->"


class _Tee(io.TextIOBase):
    def __init__(self, *streams):
        self.streams = streams

    def write(self, text: str) -> int:
        for stream in self.streams:
            stream.write(text)
        return len(text)

    def flush(self) -> None:
        for stream in self.streams:
            stream.flush()


def _versions() -> str:
    found = [f"Python {platform.python_version()}"]
    for name in ("torch", "transformers", "streamlit", "plotly"):
        module = sys.modules.get(name)
        if module is not None:
            found.append(f"{name} {getattr(module, '__version__', '?')}")
    return ", ".join(found)


def section(script: str, output: str, seconds: float) -> str:
    """The block a run writes: how it was run, then what it printed."""
    command = " ".join([f"python bench/{Path(script).name}", *sys.argv[1:]])
    return (f"{BEGIN}\n## Latest run\n\n`{command}`, {time.strftime('%Y-%m-%d')}, {platform.machine()}, "
            f"{os.cpu_count()} cores, {_versions()}, {seconds:.0f} s.\n\n{output.rstrip()}\n{END}")


def keep(script: str, output: str, seconds: float, results: Path | None = None) -> Path:
    """Write the run's block into results/<script>.md, in place of the last one (or at its end)."""
    path = (results or RESULTS) / f"{Path(script).stem}.md"
    block = section(script, output, seconds)
    text = path.read_text(encoding="utf-8") if path.exists() else f"# `bench/{Path(script).name}`\n"
    pattern = re.compile(re.escape(BEGIN) + ".*?" + re.escape(END), flags=re.S)
    text = pattern.sub(lambda _: block, text) if pattern.search(text) else text.rstrip() + "\n\n" + block
    path.write_text(text.rstrip() + "\n", encoding="utf-8")
    return path


@contextlib.contextmanager
def recorded(script: str):
    """Inside: stdout also kept; on a normal end, kept in results/<script>.md (a failed run writes nothing)."""
    kept, start = io.StringIO(), time.perf_counter()
    with contextlib.redirect_stdout(_Tee(sys.stdout, kept)):
        yield
    path = keep(script, kept.getvalue(), time.perf_counter() - start)
    print(f"(kept in {path})", file=sys.stderr)


def run(script: str, main):
    """main() with its output kept (recorded); what main() returns (an exit code, say)."""
    with recorded(script):
        return main()
