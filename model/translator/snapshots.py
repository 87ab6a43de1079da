"""The translator as it was during training: the float16 snapshots `python -m training.train` ships beside the
trained weights (snapshots.safetensors, keys "step{N}.{parameter}", read by model.snapshots), and the training's
metrics.json.
"""
import json
from dataclasses import dataclass
from pathlib import Path

from torch import Tensor

from model.snapshots import SnapshotFile
from model.translator import SHIPPED, Translator

SNAPSHOTS = "snapshots.safetensors"
METRICS = "metrics.json"
SNAPSHOT_SENTENCES = 200  # the held-out sentences each snapshot's exact match is measured on


def _file(directory: Path) -> SnapshotFile:
    return SnapshotFile(Path(directory) / SNAPSHOTS, "step", ".")


def snapshot_steps(directory: Path = SHIPPED) -> tuple[int, ...]:
    """The steps that have a snapshot, in order (from the file's header only)."""
    return _file(directory).steps()


def snapshot_weights(step: int, directory: Path = SHIPPED) -> dict[str, Tensor]:
    """The parameters at `step` (float16, as shipped); KeyError if there is no snapshot at that step."""
    return _file(directory).weights(step)


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
