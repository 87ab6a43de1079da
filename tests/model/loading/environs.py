"""Where the source tests list models from: an environment with an empty Hugging Face cache, the listing by key,
and a cache laid out as huggingface_hub writes it (shared by tests/model/loading and tests/model/gpt)."""
import shutil
from pathlib import Path

from model.loading.sources import list_sources


def isolated(tmp_path, **environ):
    """An environment whose Hugging Face cache is an empty folder unless one is given."""
    empty = tmp_path / "empty-cache"
    empty.mkdir(exist_ok=True)
    return {"HF_HUB_CACHE": str(empty), **{k: str(v) for k, v in environ.items()}}


def by_key(environ):
    return {s.key: s for s in list_sources(environ)}


def fake_cache(root: Path, repo: str, checkpoint: Path, ref: bool = True) -> Path:
    """The layout huggingface_hub writes: models--org--name/{refs/main, snapshots/<hash>/...}."""
    repo_dir = root / f"models--{repo.replace('/', '--')}"
    snapshot = repo_dir / "snapshots" / "0123abcd"
    shutil.copytree(checkpoint, snapshot)
    if ref:
        (repo_dir / "refs").mkdir(parents=True)
        (repo_dir / "refs" / "main").write_text("0123abcd\n")
    return snapshot
