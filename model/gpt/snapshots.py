"""The toy GPT as it was during training: the float16 snapshots `python -m training.train_gpt` ships beside the trained
weights (snapshots.safetensors, keys "{step}/{parameter}" in our parameter names, read by model.snapshots), and what
its metrics.json says of every evaluation: the copy accuracy, every head's induction and previous-token score, the
held-out loss; and where the loss sat on its plateau and where it jumped.
"""
import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from torch import Tensor

from model.gpt.config import GPTConfig
from model.gpt.model import GPT
from model.gpt.toy import METRICS, SHIPPED, SNAPSHOTS, config_of, word_special_tokens
from model.snapshots import SnapshotFile

JUMP = (0.2, 0.9)  # the copy accuracy at which the jump starts, and at which it has ended
SMOOTHING = 100  # steps of the trailing mean the plateau is found on (one step's batch loss is noisy)
PLATEAU_BAND = 0.05  # the plateau starts where the smoothed loss first comes within 5% of its level before the jump


def _file(directory: Path) -> SnapshotFile:
    return SnapshotFile(Path(directory) / SNAPSHOTS, "", "/")


def snapshot_steps(directory: Path = SHIPPED) -> tuple[int, ...]:
    """The steps that have a snapshot, in order (from the file's header only)."""
    return _file(directory).steps()


def snapshot_weights(step: int, directory: Path = SHIPPED) -> dict[str, Tensor]:
    """The parameters at `step` (float16, as shipped), named as GPT.state_dict() names them; KeyError if there is no
    snapshot at that step."""
    return {renamed(name): w for name, w in _file(directory).weights(step).items()}


# Snapshots written before the GPT's blocks were its own (the shipped ones) name them as an encoder's layers.
_OLD_NAMES = (("encoder.layers.", "blocks."), ("encoder.norm.", "ln_f."))


def renamed(name: str) -> str:
    """A parameter's name in a snapshot -> its name in GPT.state_dict() (the shipped snapshots' older names too)."""
    for old, new in _OLD_NAMES:
        if name.startswith(old):
            return new + name.removeprefix(old)
    return name


def from_weights(config: GPTConfig | dict, weights: dict[str, Tensor]) -> GPT:
    """A toy GPT (its word vocabulary's special tokens) from its config (GPTConfig, or its fields as a dict) and a
    state dict in our names (any float dtype), in eval mode."""
    model = GPT(config if isinstance(config, GPTConfig) else GPTConfig(**config), word_special_tokens())
    model.load_state_dict({k: v.float() for k, v in weights.items()}, strict=True)
    return model.eval()


def at_snapshot(step: int, directory: Path = SHIPPED) -> GPT:
    """The toy GPT after `step` steps of training (step 0: as initialised, random), in eval mode: the shipped config,
    the snapshot's weights (float16 -> float32)."""
    return from_weights(config_of(directory), snapshot_weights(step, directory))


def jump_steps(evaluations, levels: tuple[float, float] = JUMP) -> tuple[int | None, int | None]:
    """The first evaluation step at which the copy accuracy reached levels[0] (the jump starts) and levels[1] (it has
    ended); None where it never did. evaluations: (step, copy accuracy) pairs in order."""
    return tuple(next((step for step, accuracy in evaluations if accuracy >= level), None) for level in levels)


def plateau(loss, starts: int | None) -> tuple[int, int] | None:
    """(first step, last step) of the plateau before the jump: from where the loss's trailing mean first comes
    within PLATEAU_BAND of its mean over the SMOOTHING * 5 steps before the jump, to the jump's start; None without a
    jump, or with too few steps before it to tell. loss[i]: the loss of step i + 1."""
    loss = np.asarray(loss, dtype=np.float64)
    if starts is None or starts < 2 * SMOOTHING or len(loss) < starts:
        return None
    level = loss[max(0, starts - 5 * SMOOTHING):starts].mean()
    trailing = np.convolve(loss[:starts], np.ones(SMOOTHING) / SMOOTHING, "valid")  # [i]: steps i+1 .. i+SMOOTHING
    near = np.flatnonzero(trailing <= level * (1 + PLATEAU_BAND))
    first = int(near[0]) + SMOOTHING if near.size else starts
    return (first, starts) if first < starts else None


def _frozen(values) -> np.ndarray:
    out = np.ascontiguousarray(np.asarray(values, dtype=np.float32))
    out.flags.writeable = False
    return out


@dataclass(frozen=True)
class TrainingRecord:
    """What metrics.json says of the toy GPT's training (arrays read-only, shared)."""

    loss: tuple[float, ...]  # loss[i]: the training loss of step i + 1
    steps: tuple[int, ...]  # the evaluations' steps
    copy_accuracy: np.ndarray  # (E,) on the held-out repeat probes
    induction: np.ndarray  # (E, layers, heads): every head's induction score at each evaluation
    previous_token: np.ndarray  # (E, layers, heads)
    held_out_loss: np.ndarray  # (E,) nats per word on held-out single sentences
    jump: tuple[int | None, int | None]  # (starts, ends): steps, as metrics.json says
    jump_levels: tuple[float, float]
    probes: int  # held-out repeat probes the scores are measured on

    def at(self, step: int) -> int:
        """The index of the evaluation at `step` (every snapshot step is one); KeyError if none is."""
        try:
            return self.steps.index(step)
        except ValueError:
            raise KeyError(f"no evaluation at step {step}") from None

    def plateau(self) -> tuple[int, int] | None:
        return plateau(self.loss, self.jump[0])

    def induction_head(self) -> tuple[int, int]:
        """(layer, head) of the best induction score at the last evaluation, in a layer after the first (any layer
        of a one-layer model): model.gpt.toy.induction_head's choice."""
        last = self.induction[-1]
        later = last[1:] if last.shape[0] > 1 else last
        layer, head = np.unravel_index(int(np.argmax(later)), later.shape)
        return int(layer) + (1 if last.shape[0] > 1 else 0), int(head)


def training_record(directory: Path = SHIPPED) -> TrainingRecord:
    m = json.loads((Path(directory) / METRICS).read_text())
    e = m["evaluations"]
    jump = m.get("jump") or {}
    return TrainingRecord(tuple(m["loss"]), tuple(x["step"] for x in e), _frozen([x["copy_accuracy"] for x in e]),
                          _frozen([x["induction"] for x in e]), _frozen([x["previous_token"] for x in e]),
                          _frozen([x["held_out_loss"] for x in e]), (jump.get("starts"), jump.get("ends")),
                          tuple(jump.get("copy_accuracy", JUMP)), m["probes"]["count"])
