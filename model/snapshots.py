"""Training snapshots: a model's weights at steps of its training, shipped as one safetensors file beside the trained
weights, each parameter under a key that names its step: "step125.generator.weight" (the translator,
model.translator.snapshots), "3200/encoder.layers.0.linear1.weight" (the toy GPT, model.gpt.snapshots).

Only safetensors are read (no code, no pickle): the file's header for the steps, one step's tensors at a time.
"""
from dataclasses import dataclass
from pathlib import Path

from safetensors import safe_open
from torch import Tensor


@dataclass(frozen=True)
class SnapshotFile:
    """A snapshot file and how its keys name a step: prefix + step + separator + the parameter's name."""

    path: Path
    prefix: str  # "step" (the translator's), "" (the GPT's)
    separator: str  # "." (the translator's), "/" (the GPT's)

    def step_of(self, key: str) -> int:
        """"step125.generator.weight" -> 125; ValueError for a key that names no step."""
        head = key.split(self.separator, 1)[0]
        number = head[len(self.prefix):]
        if not head.startswith(self.prefix) or not number.isdigit() or self.separator not in key:
            raise ValueError(f"not a snapshot key: {key!r}")
        return int(number)

    def steps(self) -> tuple[int, ...]:
        """The steps that have a snapshot, in order (from the file's header only)."""
        with safe_open(self.path, "pt") as f:
            return tuple(sorted({self.step_of(key) for key in f.keys()}))

    def weights(self, step: int) -> dict[str, Tensor]:
        """The parameters at `step` (as stored: float16); KeyError if there is no snapshot at that step."""
        prefix = f"{self.prefix}{int(step)}{self.separator}"
        with safe_open(self.path, "pt") as f:
            weights = {key[len(prefix):]: f.get_tensor(key) for key in f.keys() if key.startswith(prefix)}
        if not weights:
            raise KeyError(f"no snapshot at step {step}")
        return weights
