"""Checkpoint directories on this server: those the operator names in ATTNVIZ_MODEL_DIRS and the snapshots of
the local Hugging Face cache, each checked without reading a tensor. What this module says about a directory is
shown in the page, so it names a directory by its name and never by its path."""
import contextlib
import functools
import os
from collections.abc import Callable
from pathlib import Path

from locales import N_
from model.loading.checkpoint import (
    CONFIG,
    NOT_ENOUGH_MEMORY,
    PICKLE,
    SAFETENSORS,
    CheckpointError,
    out_of_memory,
    read_raw_config,
)
from model.messages import Later

ENV_DIRS = "ATTNVIZ_MODEL_DIRS"  # os.pathsep-separated checkpoint directories, or folders of them
TOKENIZER_FILES = ("tokenizer.json", "vocab.txt", "vocab.json", "merges.txt", "words.json")
WORDS = "words.json"  # the toy GPT's word vocabulary (model.gpt.toy), its tokenizer
TOKENIZER_TEXT = "tokenizer.json, vocab.txt, vocab.json + merges.txt, or words.json"


def has_tokenizer(path: Path) -> bool:
    """A tokenizer transformers reads (tokenizer.json; BERT's vocab.txt; GPT-2's vocab.json and merges.txt), or the
    toy GPT's words.json."""
    return any((path / f).is_file() for f in ("tokenizer.json", "vocab.txt", WORDS)) or all(
        (path / f).is_file() for f in ("vocab.json", "merges.txt"))


def model_type(path: Path) -> object:
    """The model_type of a checkpoint directory's config.json (whatever it holds); raises CheckpointError if the
    config cannot be read."""
    return read_raw_config(path).get("model_type")


def check_directory(path: Path, check: Callable[[Path], tuple[int, int]]) -> tuple[bool, str]:
    """Would loading accept this checkpoint directory? (ok, reason), without reading any tensor: check(path), its
    family's (the config within this server's limits, every weight's shape from the file's header), then a
    tokenizer. Remembered per state of its files, as list_sources runs every minute in every process."""
    return _checked(path, _files_state(path), check)


def _files_state(path: Path) -> tuple:
    state = []
    for name in (CONFIG, SAFETENSORS, PICKLE, *TOKENIZER_FILES):
        try:
            info = (path / name).stat()
            state.append((info.st_ino, info.st_size, info.st_mtime_ns))
        except OSError:
            state.append(None)
    return tuple(state)


@functools.lru_cache(maxsize=256)
def _checked(path: Path, files_state: tuple, check: Callable[[Path], tuple[int, int]]) -> tuple[bool, str]:
    try:
        layers, heads = check(path)
    except CheckpointError as e:
        return False, scrubbed(e, path)
    except OSError as e:  # a directory the server may not read: one source unavailable, not the whole list broken
        return False, Later(N_("it could not be read: {reason}"), reason=e.strerror)
    if not has_tokenizer(path):
        return False, Later(N_("it has no tokenizer ({files})"), files=TOKENIZER_TEXT)
    return True, Later(N_("{layers} layers, {heads} heads"), layers=layers, heads=heads)


def scrub(text: str, *paths: Path) -> str:
    """text with each of paths (as given and resolved) replaced by its last part: a last guard, the messages of
    model.loading.checkpoint name files by their name already."""
    for path in paths:
        for form in sorted({str(path), str(path.resolve())}, key=len, reverse=True):
            if len(form) > 1:
                text = text.replace(form, path.name or "the directory")
    return text


def scrubbed(e: Exception, *paths: Path) -> str:
    """An error's message with paths scrubbed (scrub()); a message of ours (model.messages.Later) that names none
    stays one, translated where it is shown."""
    message = e.args[0] if len(e.args) == 1 else None
    if isinstance(message, Later) and scrub(str.__str__(message), *paths) == str.__str__(message):
        return message
    return scrub(str(e), *paths)


def hf_cache_dir(environ=os.environ) -> Path:
    if environ.get("HF_HUB_CACHE"):
        return Path(environ["HF_HUB_CACHE"])
    home = Path(environ.get("HF_HOME") or Path(environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "huggingface")
    return home / "hub"


def hf_snapshot(repo_dir: Path) -> Path | None:
    """The snapshot refs/main points at, else the newest one."""
    ref = repo_dir / "refs" / "main"
    if ref.is_file():
        snap = repo_dir / "snapshots" / ref.read_text().strip()
        if snap.is_dir():
            return snap
    snaps = sorted((repo_dir / "snapshots").glob("*"), key=lambda p: p.stat().st_mtime)
    return snaps[-1] if snaps else None


def _operator_paths(environ) -> list[Path]:
    """The checkpoint directories ATTNVIZ_MODEL_DIRS names, in its order (a folder's checkpoints by name), each once."""
    found, seen = [], set()
    for entry in filter(None, environ.get(ENV_DIRS, "").split(os.pathsep)):
        path = Path(entry).expanduser()
        if path.is_dir() and not (path / CONFIG).is_file():  # a folder of checkpoints
            candidates = sorted(p for p in path.iterdir() if (p / CONFIG).is_file())
        else:
            candidates = [path]
        for candidate in candidates:
            if candidate.resolve() not in seen:
                seen.add(candidate.resolve())
                found.append(candidate)
    return found


def operator_dirs(environ, taken: set[str]) -> list[tuple[str, str, Path]]:
    """(key, label, path) of each operator directory, keys not in taken. Two directories of one name (/a/bert,
    /b/bert) get dir:bert and dir:bert-2 in the operator's order: stable for as long as ATTNVIZ_MODEL_DIRS is,
    and links carry them. Labels name a directory by its name alone."""
    found = []
    for path in _operator_paths(environ):
        name = path.name or path.resolve().name or "root"
        key, label, copy = f"dir:{name}", Later(N_("{name} (server directory)"), name=name), 1
        while key in taken:
            copy += 1
            key, label = f"dir:{name}-{copy}", Later(N_("{name} #{copy} (server directory)"), name=name, copy=copy)
        taken.add(key)
        found.append((key, label, path))
    return found


@contextlib.contextmanager
def plain_errors(label: str, *paths: Path):
    """A failed load as a CheckpointError that names the source by its label: no path, no allocator text."""
    try:
        yield
    except CheckpointError as e:
        raise CheckpointError(Later(N_("{model} could not be loaded: {reason}"), model=label,
                                    reason=scrubbed(e, *paths))) from None
    except (RuntimeError, MemoryError, OSError) as e:
        if out_of_memory(e):
            raise CheckpointError(Later(N_("{model} could not be loaded: {reason}"), model=label,
                                        reason=NOT_ENOUGH_MEMORY)) from None
        if isinstance(e, OSError):  # its text names the file: say what happened, not where
            raise CheckpointError(Later(N_("{model} could not be loaded: {reason}"), model=label,
                                        reason=e.strerror or type(e).__name__)) from None
        raise
