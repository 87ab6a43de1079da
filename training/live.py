"""What a live training trains, the recipes runtime/live_training.py runs: the translator (`python -m training.train`,
the Translate page) or the toy GPT (`python -m training.train_gpt`, the Language model page), each bounded in steps by
a variable of the server's environment, and how a run's config and weights become a model to draw.

ATTNVIZ_LIVE_STEPS: the most steps a live translator trains (default 600; training also stops at the first
evaluation with every held-out sentence right); 0 switches the translator's live training off on this server.

ATTNVIZ_LIVE_GPT_STEPS: the steps a live toy GPT trains (default 3,500: the shipped recipe, whose copy accuracy
jumps between steps 2,600 and 3,000 at seed 0 and one thread, cut at step 3,500; under two minutes at one thread on
an idle core); 0 switches the toy GPT's live training off.
"""
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

from locales import N_
from model.gpt.snapshots import from_weights
from model.translator import Translator, TranslatorConfig
from training.progress import PROGRESS
from training.train import vocabularies

STEPS_ENV, DEFAULT_STEPS, MAX_STEPS = "ATTNVIZ_LIVE_STEPS", 600, 5000
GPT_STEPS_ENV, GPT_DEFAULT_STEPS, GPT_MAX_STEPS = "ATTNVIZ_LIVE_GPT_STEPS", 3500, 10_000
TRANSLATOR, GPT = "translator", "gpt"  # LiveRun.kind


class BadSetting(ValueError):
    def __init__(self, raw: str, variable: str = STEPS_ENV, most: int = MAX_STEPS):
        """The variable is not a number of steps; .raw: what it was set to."""
        super().__init__(f"{variable} must be a whole number of steps from 0 (off) to {most}, not {raw!r}")
        self.raw, self.variable, self.most = raw, variable, most


def live_steps(environ=os.environ, variable: str = STEPS_ENV, default: int = DEFAULT_STEPS,
               most: int = MAX_STEPS) -> int:
    """The steps of a live run from the environment (ATTNVIZ_LIVE_STEPS unless told), 0 = live training off;
    BadSetting (saying what to set) if it is not a whole number from 0 to `most`."""
    raw = environ.get(variable, "").strip()
    if not raw:
        return default
    if not raw.isdigit() or int(raw) > most:
        raise BadSetting(raw, variable, most)
    return int(raw)


def live_gpt_steps(environ=os.environ) -> int:
    """ATTNVIZ_LIVE_GPT_STEPS: the steps of a live toy GPT, 0 = off; BadSetting if bad."""
    return live_steps(environ, GPT_STEPS_ENV, GPT_DEFAULT_STEPS, GPT_MAX_STEPS)


def _watched(out: Path, seed: int, steps: int, weights_every: int, nice: int) -> list[str]:
    """The options of a run another process watches, both training commands alike (training/progress.py)."""
    return ["--out", str(out), "--progress", str(out / PROGRESS), "--weights-every", str(weights_every),
            "--no-snapshots", "--threads", "1", "--nice", str(nice), "--seed", str(seed), "--steps", str(steps),
            "--remove-if-orphaned"]


@dataclass(frozen=True)
class Settings:
    """How a live translator trains: as the shipped model (its config, batch and learning rate), but evaluated more
    often on fewer held-out sentences, so that the accuracy curve moves while one watches."""

    kind: ClassVar[str] = TRANSLATOR
    title: ClassVar[str] = N_("The translator (Translate page)")  # what a page says is being trained (a message)
    steps: int = DEFAULT_STEPS
    validation: int = 200  # held-out sentences of each evaluation; training stops when all are right
    eval_every: int = 25
    weights_every: int = 10  # the page's attention map follows the weights this often
    test: int = 200  # held-out sentences of the final test
    nice: int = 10
    max_seconds: float = 300.0  # a run still going by then is stopped

    def command(self, out: Path, seed: int) -> list[str]:
        return [sys.executable, "-m", "training.train", *_watched(out, seed, self.steps, self.weights_every, self.nice),
                "--val", str(self.validation), "--eval-every", str(self.eval_every), "--test", str(self.test)]

    def model(self, config: dict, weights: dict):
        return live_translator(config, weights)


@dataclass(frozen=True)
class GPTSettings:
    """How a live toy GPT trains: the shipped recipe (model, data, batch of 32, learning rate and its schedule) for
    `steps` steps at one thread, evaluated every 50 steps as the shipped run was (copy accuracy and every head's
    scores on the 500 held-out repeat probes; the held-out loss on fewer sentences), its weights written every other
    evaluation for the page's map of the induction head."""

    kind: ClassVar[str] = GPT
    title: ClassVar[str] = N_("The toy GPT (Language model page)")
    steps: int = GPT_DEFAULT_STEPS
    eval_every: int = 50
    weights_every: int = 100
    held_out: int = 500  # held-out sentences of the loss measured at each evaluation (the shipped run: 2,000)
    nice: int = 10
    max_seconds: float = 600.0  # a run still going by then is stopped
    extra: tuple[str, ...] = ()  # more options of training.train_gpt (a test's smaller model)

    def command(self, out: Path, seed: int) -> list[str]:
        return [sys.executable, "-m", "training.train_gpt",
                *_watched(out, seed, self.steps, self.weights_every, self.nice), "--eval-every", str(self.eval_every),
                "--held-out", str(self.held_out), *self.extra]

    def model(self, config: dict, weights: dict):
        return live_gpt(config, weights)


def live_translator(config: dict, weights: dict):
    """A run's translator from its config and weights (safetensors tensors), in eval mode; the language's
    vocabularies, as training builds them."""
    model = Translator(TranslatorConfig(**config), *vocabularies())
    model.load_state_dict({k: v.float() for k, v in weights.items()}, strict=True)
    return model.eval()


def live_gpt(config: dict, weights: dict):
    """A run's toy GPT from its config (training.train_gpt's start event: {"model": GPTConfig's fields}) and weights
    (our parameter names), in eval mode."""
    return from_weights(config["model"], weights)
