"""What a training run tells the page that watches it (training/train.py --progress): JSON lines and the latest
weights, written as it goes, so that another process (the live training of the Translate and Language model pages,
runtime/live_training.py) can draw the loss curve, the held-out accuracy and the attention of the model as it forms.

Nothing here draws a random number or changes the model: a run with --progress trains the same weights as one
without (tests/training/test_progress.py checks it bit for bit).

One line per event, each a JSON object with a "kind":
    {"kind": "start", "steps": 600, "seed": 0, "config": {...}}
    {"kind": "step", "step": 12, "loss": 3.91}                        after each optimizer step
    {"kind": "evaluation", "step": 25, "exact_match": 0.0, "seconds": 2.1}   (+ the toy GPT's "induction",
                                                                       "previous_token": every head's scores)
    {"kind": "weights", "step": 25}                                    LATEST now holds the weights after step 25
    {"kind": "done", "steps": 520, "seconds": 49.8, "test": 0.995}     after the final test; WEIGHTS is written
"""
import json
import os
import shutil
import sys
from pathlib import Path

import torch
from safetensors import safe_open
from safetensors.torch import save_file

PROGRESS = "progress.jsonl"  # what a watched run writes beside its weights (the file given to --progress)
LATEST = "latest.safetensors"  # the weights after the step its metadata names, replaced as training goes
WEIGHTS_STEP = "step"  # the metadata key of LATEST that holds its step


class Progress:
    """Writes a run's progress to `path` (JSON lines) and, every `weights_every` steps, its weights to LATEST
    beside it (replaced atomically: a reader never sees half a file)."""

    def __init__(self, path: Path, weights_every: int = 0):
        self.path, self.weights_every = Path(path), weights_every
        self.file = self.path.open("a", encoding="utf-8")
        self.parent = os.getppid()

    def _write(self, kind: str, **fields) -> None:
        self.file.write(json.dumps({"kind": kind, **fields}) + "\n")
        self.file.flush()

    def start(self, steps: int, seed: int, config: dict) -> None:
        self._write("start", steps=steps, seed=seed, config=config)

    def step(self, step: int, loss: float, model) -> None:
        self._write("step", step=step, loss=round(loss, 4))
        if self.weights_every and step % self.weights_every == 0:
            self.weights(step, model)

    def evaluation(self, step: int, exact_match: float, seconds: float, **measured) -> None:
        """exact_match: the run's score in 0..1 (the translator's held-out exact match, the toy GPT's copy accuracy);
        measured: what else the evaluation measured (JSON values)."""
        self._write("evaluation", step=step, exact_match=exact_match, seconds=seconds, **measured)

    def weights(self, step: int, model) -> None:
        """The model's weights now (float32, ~1 MB) to LATEST, then a line saying so."""
        latest = self.path.with_name(LATEST)
        partial = latest.with_suffix(".partial")
        save_file({k: v.detach().contiguous() for k, v in model.state_dict().items()}, partial,
                  metadata={WEIGHTS_STEP: str(step)})
        os.replace(partial, latest)
        self._write("weights", step=step)

    def done(self, steps: int, seconds: float, test: float) -> None:
        self._write("done", steps=steps, seconds=seconds, test=test)
        self.file.close()

    def orphaned(self) -> bool:
        """The process that started this one has gone (the server was stopped or killed): stop training."""
        return os.getppid() != self.parent


def read_latest(directory: Path) -> tuple[int, dict[str, torch.Tensor]] | None:
    """(step, weights) of the LATEST file in directory, or None while there is none yet."""
    latest = Path(directory) / LATEST
    try:
        with safe_open(latest, "pt") as f:
            step = int(f.metadata()[WEIGHTS_STEP])
            return step, {name: f.get_tensor(name) for name in f.keys()}
    except FileNotFoundError:
        return None


def add_options(parser) -> None:
    """A training command's options for a run another process watches: --progress, --weights-every, --nice,
    --remove-if-orphaned."""
    parser.add_argument("--progress", type=Path, help="write progress here as JSON lines (training/progress.py)")
    parser.add_argument("--weights-every", type=int, default=0,
                        help="with --progress: the latest weights to latest.safetensors every this many steps")
    parser.add_argument("--nice", type=int, default=0, help="lower this process's CPU priority by this much")
    parser.add_argument("--remove-if-orphaned", action="store_true",
                        help="with --progress: if the process that started this one goes, delete --out and stop")


def from_options(args) -> "Progress | None":
    """What add_options asked for: the process's priority lowered, and the Progress to write (None without
    --progress)."""
    lower_priority(args.nice)
    return Progress(args.progress, args.weights_every) if args.progress else None


def lower_priority(nice: int) -> None:
    """Yield the CPU to everything else on the machine (the app's own server first)."""
    if nice > 0 and hasattr(os, "nice"):
        os.nice(nice)


def orphan_exit(remove: Path | None = None) -> None:
    """Stop training because the process that started it has gone; remove `remove` (the run's own temporary
    directory, which nobody else will clean up now)."""
    print("the process that started this training has gone: stopped", file=sys.stderr)
    if remove is not None:

        shutil.rmtree(remove, ignore_errors=True)
    sys.exit(3)
