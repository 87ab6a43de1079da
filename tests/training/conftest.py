"""What the tests of the two training commands share: a smoke run at seed 3, and the loss it must lower."""
import json
from pathlib import Path

import pytest
import torch
from safetensors.torch import load_file

from training import train, train_gpt


def smoke_run(command, out: Path, *extra: str) -> dict:
    """`command --smoke --seed 3` (training.train or training.train_gpt) written to out; its metrics. One thread: two
    test workers training at two threads each on two cores wait on each other thirty times longer."""
    assert command.main(["--smoke", "--out", str(out), "--seed", "3", "--threads", "1", *extra]) == 0
    return json.loads((out / "metrics.json").read_text())


def learned(metrics: dict, steps: int, window: int, ratio: float) -> None:
    """The run took `steps` steps, and its loss over the last `window` steps is below `ratio` of the first's."""
    loss = metrics["loss"]
    assert metrics["steps"] == len(loss) == steps
    assert sum(loss[-window:]) / window < ratio * sum(loss[:window]) / window  # it learns


def same_weights(a: Path, b: Path) -> None:
    """Two runs wrote the same weights, bit for bit."""
    again, first = load_file(a / "model.safetensors"), load_file(b / "model.safetensors")
    assert again.keys() == first.keys() and all(torch.equal(again[k], first[k]) for k in first)


@pytest.fixture(scope="module")
def translator_smoke(tmp_path_factory) -> Path:
    """A smoke run of the translator's training, shared by a module's tests."""
    out = tmp_path_factory.mktemp("smoke")
    smoke_run(train, out)
    return out


@pytest.fixture(scope="module")
def gpt_smoke(tmp_path_factory) -> Path:
    """A smoke run of the toy GPT's training, shared by a module's tests."""
    out = tmp_path_factory.mktemp("gpt-smoke")
    smoke_run(train_gpt, out)
    return out
