"""training.train --progress: JSON lines and the latest weights as it goes, without changing what is trained."""
import json

import pytest
import torch
from safetensors.torch import load_file

from training import train
from training.progress import LATEST, read_latest

SMOKE = ["--smoke", "--seed", "4", "--threads", "1"]  # one thread: see tests/training/conftest.py


@pytest.fixture(scope="module")
def plain(tmp_path_factory):
    out = tmp_path_factory.mktemp("plain")
    assert train.main([*SMOKE, "--out", str(out)]) == 0
    return out


@pytest.fixture(scope="module")
def watched(tmp_path_factory):
    out = tmp_path_factory.mktemp("watched")
    assert train.main([*SMOKE, "--out", str(out), "--progress", str(out / "progress.jsonl"), "--weights-every", "7",
                       "--no-snapshots"]) == 0
    return out


def events(out):
    return [json.loads(line) for line in (out / "progress.jsonl").read_text().splitlines()]


def test_progress_and_no_snapshots_train_the_very_same_weights(plain, watched):
    first, again = load_file(plain / "model.safetensors"), load_file(watched / "model.safetensors")
    assert first.keys() == again.keys() and all(torch.equal(first[k], again[k]) for k in first)
    assert json.loads((plain / "metrics.json").read_text())["loss"] == [e["loss"] for e in events(watched)
                                                                       if e["kind"] == "step"]


def test_every_step_evaluation_and_weights_file_is_announced_in_order(watched):
    found = events(watched)
    assert found[0] == {"kind": "start", "steps": 60, "seed": 4, "config": found[0]["config"]}
    assert found[0]["config"]["d_model"] == 32
    assert [e["step"] for e in found if e["kind"] == "step"] == list(range(1, 61))
    assert [e["step"] for e in found if e["kind"] == "evaluation"] == [30, 60]
    assert [e["step"] for e in found if e["kind"] == "weights"] == [0, 7, 14, 21, 28, 35, 42, 49, 56, 60]
    done = found[-1]
    metrics = json.loads((watched / "metrics.json").read_text())
    assert done == {"kind": "done", "steps": 60, "seconds": metrics["train_seconds"],
                    "test": metrics["test"]["exact_match"]}
    kinds = [e["kind"] for e in found]
    assert kinds.index("weights") < kinds.index("step")  # the random model comes first


def test_the_latest_weights_are_the_final_model_and_say_their_step(watched):
    step, weights = read_latest(watched)
    final = load_file(watched / "model.safetensors")
    assert step == 60 and weights.keys() == final.keys()
    assert all(torch.equal(weights[k], final[k]) for k in final)
    assert not (watched / train.SNAPSHOTS).exists() and not list(watched.glob("*.partial"))
    assert (watched / LATEST).is_file()


def test_no_weights_file_before_training_starts(tmp_path):
    assert read_latest(tmp_path) is None
