"""The translator as it was during training: the float16 snapshots `python -m training.train` ships beside the
trained weights (snapshots.safetensors, keys "step{N}.{parameter}"), and the training's metrics.json.

Only safetensors are read (no code, no pickle), one snapshot's tensors at a time.
"""
import json
from dataclasses import dataclass
from pathlib import Path

from safetensors import safe_open
from torch import Tensor

from model.translator import SHIPPED, Translator

SNAPSHOTS = "snapshots.safetensors"
METRICS = "metrics.json"
SNAPSHOT_SENTENCES = 200  # the held-out sentences each snapshot's exact match is measured on


def _step_of(key: str) -> int:
    """"step125.generator.weight" -> 125."""
    prefix = key.split(".", 1)[0]
    if not prefix.startswith("step") or not prefix[4:].isdigit():
        raise ValueError(f"not a snapshot key: {key!r}")
    return int(prefix[4:])


def snapshot_steps(directory: Path = SHIPPED) -> tuple[int, ...]:
    """The steps that have a snapshot, in order (from the file's header only)."""
    with safe_open(Path(directory) / SNAPSHOTS, "pt") as f:
        return tuple(sorted({_step_of(key) for key in f.keys()}))


def snapshot_weights(step: int, directory: Path = SHIPPED) -> dict[str, Tensor]:
    """The parameters at `step` (float16, as shipped); KeyError if there is no snapshot at that step."""
    prefix = f"step{int(step)}."
    with safe_open(Path(directory) / SNAPSHOTS, "pt") as f:
        weights = {key[len(prefix):]: f.get_tensor(key) for key in f.keys() if key.startswith(prefix)}
    if not weights:
        raise KeyError(f"no snapshot at step {step}")
    return weights


def at_snapshot(step: int, directory: Path = SHIPPED) -> Translator:
    """The translator after `step` steps of training (step 0: as initialised, random), in eval mode: the shipped
    config and vocabularies, the snapshot's weights (float16 -> float32)."""
    return Translator.from_directory(Path(directory), weights=snapshot_weights(step, directory))


@dataclass(frozen=True)
class TrainingRecord:
    """What metrics.json says of the training: the loss after every step and the held-out exact match."""

    loss: tuple[float, ...]  # loss[i]: the training loss of step i + 1
    snapshot_scores: dict[int, float]  # snapshot step -> exact match on SNAPSHOT_SENTENCES validation sentences
    evaluations: tuple[tuple[int, float], ...]  # (step, exact match on every validation sentence)
    test: float  # the final test's exact match
    test_sentences: int


def training_record(directory: Path = SHIPPED) -> TrainingRecord:
    m = json.loads((Path(directory) / METRICS).read_text())
    return TrainingRecord(tuple(m["loss"]), {s["step"]: s["exact_match"] for s in m["snapshots"]},
                          tuple((e["step"], e["exact_match"]) for e in m["evaluations"]),
                          m["test"]["exact_match"], m["test"]["sentences"])
