"""One live training at a time: the Translate page's "Train it live" starts `python -m training.train` in a process
of its own, reads its progress (training/progress.py), and stops it.

Why a process: training in the Streamlit server would hold its GIL and its cores; a child at one torch thread and
a lower priority (nice) leaves the server's CPU to the students' pages (bench/live_training.py measures it).

Its files go to a fresh temporary directory (tempfile.mkdtemp: nothing a visitor types becomes a path), removed as
soon as the run ends, is stopped or fails; the shipped weights are never opened for writing. What is kept of the
last run once its directory is gone: its progress (a few thousand numbers) and its final weights (~1 MB), until the
next run starts. A run is stopped by the session that started it (a student's click should not end the lecturer's
demonstration), or when it outlives max_seconds, or when the server exits.

ATTNVIZ_LIVE_STEPS: the most steps a live run trains (default 600; training also stops at the first evaluation
with every held-out sentence right); 0 switches live training off on this server.
"""
import atexit
import json
import logging
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field, replace
from pathlib import Path

from safetensors.torch import load_file

from locales import N_, _
from model.translator import WEIGHTS, Translator, TranslatorConfig
from training.progress import read_latest
from training.train import vocabularies

STEPS_ENV = "ATTNVIZ_LIVE_STEPS"
DEFAULT_STEPS = 600
MAX_STEPS = 5000
ROOT = Path(__file__).resolve().parents[1]
PROGRESS = "progress.jsonl"
RUNNING, FINISHED, STOPPED, FAILED = "running", "finished", "stopped", "failed"
# why a run stopped or failed: English in LiveRun.why (logs, tests), in the page's language from LiveRun.reason()
STOPPED_BY_OWNER = N_("stopped by the visitor who started it")
SHUTTING_DOWN = N_("the server is shutting down")
TOO_LONG = N_("it ran longer than {seconds} s, the most a live run may")
CRASHED = N_("the training process ended with an error (exit code {code}); the server's log has the details")
_log = logging.getLogger(__name__)


class BadSetting(ValueError):
    def __init__(self, raw: str):  # ATTNVIZ_LIVE_STEPS is not a number of steps; .raw: what it was set to
        super().__init__(f"{STEPS_ENV} must be a whole number of steps from 0 (off) to {MAX_STEPS}, not {raw!r}")
        self.raw = raw


def live_steps(environ=os.environ) -> int:
    """ATTNVIZ_LIVE_STEPS: steps of a live run, 0 = live training off; BadSetting (saying what to set) if bad."""
    raw = environ.get(STEPS_ENV, "").strip()
    if not raw:
        return DEFAULT_STEPS
    if not raw.isdigit() or int(raw) > MAX_STEPS:
        raise BadSetting(raw)
    return int(raw)


@dataclass(frozen=True)
class Settings:
    """How a live run trains: as the shipped model (its config, batch and learning rate), but evaluated more often on
    fewer held-out sentences, so that the accuracy curve moves while one watches."""

    steps: int = DEFAULT_STEPS
    validation: int = 200  # held-out sentences of each evaluation; training stops when all are right
    eval_every: int = 25
    weights_every: int = 10  # the page's attention map follows the weights this often
    test: int = 200  # held-out sentences of the final test
    nice: int = 10
    max_seconds: float = 300.0  # a run still going by then is stopped

    def command(self, out: Path, seed: int) -> list[str]:
        return [sys.executable, "-m", "training.train", "--out", str(out), "--progress", str(out / PROGRESS),
                "--weights-every", str(self.weights_every), "--no-snapshots", "--threads", "1",
                "--nice", str(self.nice), "--seed", str(seed), "--steps", str(self.steps),
                "--val", str(self.validation), "--eval-every", str(self.eval_every), "--test", str(self.test),
                "--remove-if-orphaned"]


@dataclass(frozen=True)
class LiveRun:
    """A live run as the page draws it: a copy, never changed."""

    number: int  # runs started by this process so far, this one included
    seed: int
    started: float  # time.time()
    state: str  # RUNNING, FINISHED, STOPPED or FAILED
    steps: int  # the most it trains
    loss: tuple[float, ...] = ()  # loss[i]: the loss of step i + 1
    evaluations: tuple[tuple[int, float], ...] = ()  # (step, held-out exact match)
    weights_step: int | None = None  # the newest weights there are (None: not yet)
    config: dict | None = None  # the model's (model.translator.TranslatorConfig), once the process has started
    ended: float | None = None  # time.time() when it ended
    test: float | None = None  # the final test's exact match, once finished
    why: str = ""  # why it stopped or failed, in plain words (English)
    owner: str = field(default="", repr=False)  # the session that started it
    why_message: str = ""  # why, as a catalog message (STOPPED_BY_OWNER...): runs are shared by every language
    why_fields: tuple = ()  # its str.format fields, (name, value) pairs

    def seconds(self, now: float | None = None) -> float:
        return (self.ended or now or time.time()) - self.started

    def reason(self) -> str:
        """why, in the language of the session showing it."""
        return _(self.why_message).format(**dict(self.why_fields)) if self.why_message else self.why


class AlreadyRunning(Exception):
    def __init__(self, run: LiveRun):
        super().__init__("a live training is already running")
        self.run = run


class LiveTraining:
    """The process's live training: at most one run at a time, and the last run's record."""

    def __init__(self, settings: Settings = Settings(), temp_root: str | None = None):
        self.settings, self.temp_root = settings, temp_root
        self._lock = threading.Lock()
        self._run: LiveRun | None = None
        self._proc: subprocess.Popen | None = None
        self._dir: Path | None = None
        self._read_at, self._partial = 0, b""
        self._final: dict | None = None  # the finished run's weights
        self._stop_asked: tuple = ()  # (message, fields) of why the run is being stopped
        self._watcher: threading.Thread | None = None
        self._started = 0
        atexit.register(self.shutdown)

    def start(self, seed: int, owner: str) -> LiveRun:
        """Start a run (AlreadyRunning if one is); returns it."""
        with self._lock:
            if self._run is not None and self._run.state == RUNNING:
                raise AlreadyRunning(self._run)
            self._dir = Path(tempfile.mkdtemp(prefix="attnviz-live-", dir=self.temp_root))
            self._read_at, self._partial, self._final, self._stop_asked = 0, b"", None, ()
            self._started += 1
            log = (self._dir / "log.txt").open("wb")
            try:
                self._proc = subprocess.Popen(self.settings.command(self._dir, seed), cwd=ROOT,
                                              stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                                              env={**os.environ, "OMP_NUM_THREADS": "1"})
            except OSError:
                shutil.rmtree(self._dir, ignore_errors=True)
                self._dir = None
                raise
            finally:
                log.close()
            self._run = LiveRun(self._started, seed, time.time(), RUNNING, self.settings.steps, owner=owner)
            self._watcher = threading.Thread(target=self._watch, args=(self._proc,), name="attnviz-live", daemon=True)
            self._watcher.start()
            return self._run

    def current(self) -> LiveRun | None:
        """The run under way, or the last one (None if none was started), with its progress read so far."""
        with self._lock:
            if self._run is not None and self._run.state == RUNNING:
                self._read_progress()
            return self._run

    def stop(self, owner: str, wait: float = 15.0) -> bool:
        """Stop the run under way if `owner` started it; False if there is none or it is someone else's. Returns once
        the process has ended and its directory is gone (or `wait` s have passed)."""
        with self._lock:
            if self._run is None or self._run.state != RUNNING or self._run.owner != owner:
                return False
            self._stop_asked = (STOPPED_BY_OWNER, ())
            self._proc.terminate()
            watcher = self._watcher
        watcher.join(wait)
        return True

    def weights(self, number: int):
        """(step, weights) of run `number`: the newest while it runs, the final ones once it finished; None if there
        are none (yet, or any more)."""
        with self._lock:
            if self._run is None or self._run.number != number:
                return None
            if self._final is not None:
                return self._final["step"], self._final["weights"]
            directory = self._dir if self._run.state == RUNNING else None
        return None if directory is None else _read_latest_quietly(directory)

    def shutdown(self) -> None:
        """End the run under way and remove its files (the server is exiting)."""
        with self._lock:
            proc, watcher = self._proc, self._watcher
            if self._run is not None and self._run.state == RUNNING:
                self._stop_asked = (SHUTTING_DOWN, ())
        if proc is not None and proc.poll() is None:
            proc.terminate()
        if watcher is not None:
            watcher.join(15)

    # ------------------------------------------------------------------ the watcher thread
    def _watch(self, proc: subprocess.Popen) -> None:
        """Wait for the process (no polling), stop it if it runs too long, then record how it ended and clean up."""
        try:
            proc.wait(timeout=self.settings.max_seconds)
        except subprocess.TimeoutExpired:
            with self._lock:
                self._stop_asked = (TOO_LONG, (("seconds", f"{self.settings.max_seconds:.0f}"),))
            proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        with self._lock:
            self._read_progress()
            self._finish(proc.returncode)

    def _finish(self, code: int) -> None:
        """Under the lock: the run's end state, its final weights kept, its directory removed."""
        run, directory = self._run, self._dir
        now = time.time()
        if self._stop_asked:
            self._run = replace(run, state=STOPPED, ended=now, **_why(*self._stop_asked))
        elif code == 0 and run.test is not None:
            self._final = _read_final(directory)
            self._run = replace(run, state=FINISHED, ended=now,
                                weights_step=self._final["step"] if self._final else run.weights_step)
        else:
            tail = (directory / "log.txt").read_bytes()[-2000:].decode(errors="replace") if directory else ""
            _log.warning("the live training ended with exit code %s:\n%s", code, tail)
            self._run = replace(run, state=FAILED, ended=now, **_why(CRASHED, (("code", code),)))
        self._proc, self._dir = None, None
        if directory is not None:
            shutil.rmtree(directory, ignore_errors=True)

    def _read_progress(self) -> None:
        """Under the lock: the progress lines written since the last read, into the run."""
        if self._dir is None:
            return
        try:
            with (self._dir / PROGRESS).open("rb") as f:
                f.seek(self._read_at)
                chunk = f.read()
        except FileNotFoundError:
            return
        self._read_at += len(chunk)
        *lines, self._partial = (self._partial + chunk).split(b"\n")
        if lines:
            self._run = _apply(self._run, [json.loads(line) for line in lines if line.strip()])


def _why(message: str, fields: tuple) -> dict:  # LiveRun's why (English, for logs) and what the page translates
    return {"why": message.format(**dict(fields)), "why_message": message, "why_fields": fields}


def _apply(run: LiveRun, events: list[dict]) -> LiveRun:
    loss, evaluations, changes = list(run.loss), list(run.evaluations), {}
    for e in events:
        if e["kind"] == "start":
            changes["config"] = e["config"]
        elif e["kind"] == "step":
            loss.append(e["loss"])
        elif e["kind"] == "evaluation":
            evaluations.append((e["step"], e["exact_match"]))
        elif e["kind"] == "weights":
            changes["weights_step"] = e["step"]
        elif e["kind"] == "done":
            changes["test"] = e["test"]
    return replace(run, loss=tuple(loss), evaluations=tuple(evaluations), **changes)


def _read_latest_quietly(directory: Path):
    try:
        return read_latest(directory)
    except (OSError, ValueError, KeyError):  # removed or replaced under us: the run just ended
        return None


def _read_final(directory: Path) -> dict | None:
    try:
        weights = load_file(directory / WEIGHTS)
    except (OSError, ValueError):
        return None
    latest = _read_latest_quietly(directory)
    return {"step": latest[0] if latest else 0, "weights": weights}


def live_translator(config: dict, weights: dict):
    """A run's model from its config and weights (safetensors tensors), in eval mode; the language's vocabularies,
    as training builds them."""
    model = Translator(TranslatorConfig(**config), *vocabularies())
    model.load_state_dict({k: v.float() for k, v in weights.items()}, strict=True)
    return model.eval()
