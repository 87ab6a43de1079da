"""One live training at a time per server process, of whatever recipe a page gives (training/live.py: the Translate
page's runs `python -m training.train`, the Language model page's `python -m training.train_gpt`), in a process of its
own; this reads its progress (training/progress.py) and stops it.

Why a process: training in the Streamlit server would hold its GIL and its cores; a child at one torch thread and
a lower priority (nice) leaves the server's CPU to the students' pages (bench/live_training.py measures it). Why one
at a time, whatever the kind: two would take both cores of a small server from the class; each page has its own
LiveTraining (its last run stays on its page), and a start while a run of either kind is under way is refused
(AlreadyRunning names that run).

Its files go to a fresh temporary directory (tempfile.mkdtemp: nothing a visitor types becomes a path), removed as
soon as the run ends, is stopped or fails; the shipped weights are never opened for writing. What is kept of the
last run once its directory is gone: its progress (a few thousand numbers) and its final weights (~1 MB), until the
next run starts. A run is stopped by the session that started it (a student's click should not end the lecturer's
demonstration), or when it outlives its settings' max_seconds, or when the server exits.
"""
import atexit
import json
import logging
import os
import shutil
import subprocess
import tempfile
import threading
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Protocol

from locales import N_, _
from training.progress import PROGRESS, read_latest

ROOT = Path(__file__).resolve().parents[1]
RUNNING, FINISHED, STOPPED, FAILED = "running", "finished", "stopped", "failed"
# why a run stopped or failed: English in LiveRun.why (logs, tests), in the page's language from LiveRun.reason()
STOPPED_BY_OWNER = N_("stopped by the visitor who started it")
SHUTTING_DOWN = N_("the server is shutting down")
TOO_LONG = N_("it ran longer than {seconds} s, the most a live run may")
CRASHED = N_("the training process ended with an error (exit code {code}); the server's log has the details")
_log = logging.getLogger(__name__)
_SLOT = threading.Lock()  # guards _holder; taken after a LiveTraining's own lock, never before it
_holder: "LiveTraining | None" = None  # the LiveTraining that started the process's newest run


@dataclass(frozen=True)
class LiveRun:
    """A live run as the page draws it: a copy, never changed."""

    number: int  # runs started by its LiveTraining so far, this one included
    seed: int
    started: float  # time.time()
    state: str  # RUNNING, FINISHED, STOPPED or FAILED
    steps: int  # the most it trains
    loss: tuple[float, ...] = ()  # loss[i]: the loss of step i + 1
    evaluations: tuple[tuple[int, float], ...] = ()  # (step, score): held-out exact match, or copy accuracy
    weights_step: int | None = None  # the newest weights there are (None: not yet)
    config: dict | None = None  # the model's (the training command's start event), once the process has started
    ended: float | None = None  # time.time() when it ended
    test: float | None = None  # the final test's exact match (the toy GPT: its last copy accuracy), once finished
    why: str = ""  # why it stopped or failed, in plain words (English)
    owner: str = field(default="", repr=False)  # the session that started it
    why_message: str = ""  # why, as a catalog message (STOPPED_BY_OWNER...): runs are shared by every language
    why_fields: tuple = ()  # its str.format fields, (name, value) pairs
    kind: str = ""  # what it trains: its recipe's kind
    title: str = ""  # its recipe's title: a catalog message naming what is trained and on which page
    measured: tuple[tuple[int, dict], ...] = ()  # (step, what else each evaluation measured: the GPT's head scores)

    def seconds(self, now: float | None = None) -> float:
        return (self.ended or now or time.time()) - self.started

    def reason(self) -> str:
        """why, in the language of the session showing it."""
        return _(self.why_message).format(**dict(self.why_fields)) if self.why_message else self.why


class AlreadyRunning(Exception):
    def __init__(self, run: LiveRun):
        super().__init__("a live training is already running")
        self.run = run


def under_way() -> LiveRun | None:
    """The run under way in this process, of either kind (as last read: its progress may be behind); None if none."""
    with _SLOT:
        run = _holder._run if _holder is not None else None
    return run if run is not None and run.state == RUNNING else None


class Recipe(Protocol):
    """What a live training trains (training/live.py has the app's two): the training command, run in a process of
    its own with --progress, and how its config and weights become a model to draw."""

    kind: str  # a name of its own (LiveRun.kind)
    title: str  # what a page says is being trained (a catalog message)
    steps: int
    max_seconds: float  # a run still going by then is stopped

    def command(self, out: Path, seed: int) -> list[str]: ...

    def model(self, config: dict, weights: dict): ...


class LiveTraining:
    """A page's live training (its settings say what it trains): its runs, one at a time in the whole process, and
    its last run's record."""

    def __init__(self, settings: Recipe, temp_root: str | None = None):
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
        """Start a run (AlreadyRunning if one of either kind is, in this process); returns it."""
        global _holder
        with self._lock, _SLOT:
            running = _holder._run if _holder is not None else None  # read without its lock: a frozen LiveRun
            if running is not None and running.state == RUNNING:
                raise AlreadyRunning(running)
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
            self._run = LiveRun(self._started, seed, time.time(), RUNNING, self.settings.steps, owner=owner,
                                kind=self.settings.kind, title=self.settings.title)
            _holder = self
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
            latest = _read_latest_quietly(directory)  # the trained model's weights, written last
            self._final = {"step": latest[0], "weights": latest[1]} if latest else None
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
    loss, evaluations, measured, changes = list(run.loss), list(run.evaluations), list(run.measured), {}
    for e in events:
        if e["kind"] == "start":
            changes["config"] = e["config"]
        elif e["kind"] == "step":
            loss.append(e["loss"])
        elif e["kind"] == "evaluation":
            evaluations.append((e["step"], e["exact_match"]))
            more = {k: v for k, v in e.items() if k not in ("kind", "step", "exact_match", "seconds")}
            if more:
                measured.append((e["step"], more))
        elif e["kind"] == "weights":
            changes["weights_step"] = e["step"]
        elif e["kind"] == "done":
            changes["test"] = e["test"]
    return replace(run, loss=tuple(loss), evaluations=tuple(evaluations), measured=tuple(measured), **changes)


def _read_latest_quietly(directory: Path):
    try:
        return read_latest(directory)
    except (OSError, ValueError, KeyError):  # removed or replaced under us: the run just ended
        return None
