"""runtime.live_training: one live training at a time per process, of either kind (the translator, the toy GPT),
cancelled by whoever started it, its files removed, the shipped weights untouched; a tiny budget so that each run
takes seconds."""
import hashlib
import os
import subprocess
import sys
import textwrap
import time

import pytest

from model.gpt.toy import SHIPPED as GPT_SHIPPED
from model.translator import SHIPPED
from runtime.live_training import (
    FAILED,
    FINISHED,
    RUNNING,
    STOPPED,
    AlreadyRunning,
    LiveTraining,
    under_way,
)
from training.live import (
    GPT,
    TRANSLATOR,
    GPTSettings,
    Settings,
    live_gpt,
    live_gpt_steps,
    live_steps,
    live_translator,
)

TINY = Settings(steps=20, validation=10, eval_every=10, weights_every=5, test=10, nice=0, max_seconds=240)
# a smaller toy GPT (16 wide, 2 heads, 16 positions) for 20 steps: seconds, most of them starting Python and torch
TINY_GPT = GPTSettings(steps=20, eval_every=10, weights_every=10, held_out=20, nice=0, max_seconds=240,
                       extra=("--d-model", "16", "--heads", "2", "--context", "32", "--batch", "8"))


def shipped_files() -> dict[str, tuple[str, float]]:
    return {f"{d.name}/{p.name}": (hashlib.sha256(p.read_bytes()).hexdigest(), p.stat().st_mtime)
            for d in (SHIPPED, GPT_SHIPPED) for p in d.iterdir()}


def alive(pid: int) -> bool:
    """The process exists and is no zombie (an orphan's zombie waits for whoever reaps it here)."""
    try:
        return open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()[0] not in "ZX"
    except FileNotFoundError:
        return False


def wait_for(live: LiveTraining, state_not: str = RUNNING, timeout: float = 240):
    deadline = time.time() + timeout
    while time.time() < deadline:
        run = live.current()
        if run.state != state_not:
            return run
        time.sleep(0.2)
    raise AssertionError(f"still {state_not} after {timeout} s: {live.current()}")


@pytest.fixture
def temp_root(tmp_path):
    root = tmp_path / "live"
    root.mkdir()
    return root


def test_a_run_trains_streams_its_progress_and_leaves_no_file_behind(temp_root):
    before = shipped_files()
    live = LiveTraining(TINY, temp_root=str(temp_root))
    assert live.current() is None
    started = live.start(seed=1, owner="lecturer")
    assert started.state == RUNNING and started.seed == 1 and started.number == 1
    assert len(list(temp_root.iterdir())) == 1
    run = wait_for(live)
    assert run.state == FINISHED, run.why
    assert len(run.loss) == 20 and run.loss[-1] < run.loss[0]
    assert [step for step, _ in run.evaluations] == [10, 20]
    assert run.weights_step == 20 and run.test is not None and run.ended >= run.started
    assert list(temp_root.iterdir()) == []  # its directory is gone
    step, weights = live.weights(run.number)
    assert step == 20
    model = live_translator(run.config, weights)
    assert model.config.d_model == run.config["d_model"] and not model.training
    assert live.weights(run.number + 1) is None
    assert shipped_files() == before


def test_one_at_a_time_and_only_its_starter_stops_it(temp_root):
    live = LiveTraining(TINY, temp_root=str(temp_root))
    first = live.start(seed=0, owner="lecturer")
    with pytest.raises(AlreadyRunning) as refused:
        live.start(seed=2, owner="student")
    assert refused.value.run.number == first.number and refused.value.run.owner == "lecturer"
    assert not live.stop("student")
    assert live.current().state == RUNNING
    assert live.stop("lecturer")
    run = live.current()
    assert run.state == STOPPED and "stopped by the visitor who started it" in run.why
    assert list(temp_root.iterdir()) == []
    assert live.weights(run.number) is None  # a stopped run keeps no weights
    assert not live.stop("lecturer")  # nothing left to stop
    second = live.start(seed=2, owner="student")  # and a new run may start
    assert second.number == 2 and second.owner == "student"
    live.shutdown()
    assert live.current().state == STOPPED and list(temp_root.iterdir()) == []


def test_a_run_past_its_time_limit_is_stopped(temp_root):
    live = LiveTraining(Settings(steps=5000, nice=0, max_seconds=3), temp_root=str(temp_root))
    live.start(seed=0, owner="lecturer")
    run = wait_for(live, timeout=60)
    assert run.state == STOPPED and "longer than 3 s" in run.why
    assert list(temp_root.iterdir()) == []


def test_a_failing_run_says_so_plainly_without_a_path(temp_root):
    live = LiveTraining(Settings(steps=20, validation=0, nice=0), temp_root=str(temp_root))  # nothing to evaluate on
    live.start(seed=0, owner="lecturer")
    run = wait_for(live)
    assert run.state == FAILED and "exit code 1" in run.why
    assert "/" not in run.why and str(temp_root) not in run.why
    assert list(temp_root.iterdir()) == []


def test_the_training_process_runs_below_the_server_at_one_thread(temp_root):
    live = LiveTraining(Settings(steps=200, nice=10), temp_root=str(temp_root))
    live.start(seed=0, owner="lecturer")
    proc = live._proc
    command = Settings().command(temp_root, 0)
    assert command[command.index("--threads") + 1] == "1" and command[command.index("--nice") + 1] == "10"
    deadline = time.time() + 120
    while live.current().config is None and time.time() < deadline:  # nice() is set before training starts
        time.sleep(0.2)
    fields = open(f"/proc/{proc.pid}/stat").read().rsplit(")", 1)[1].split()
    assert int(fields[16]) - os.nice(0) == 10  # field 19 of stat: its nice value, 10 above ours
    assert live.stop("lecturer")


def test_a_training_whose_server_has_gone_stops_and_removes_its_files(temp_root):
    """The server killed (no atexit): the training process sees its parent gone at its next step and cleans up."""
    server = textwrap.dedent(f"""
        import os, sys, time
        from runtime.live_training import LiveTraining
        from training.live import Settings
        live = LiveTraining(Settings(steps=5000, nice=0), temp_root={str(temp_root)!r})
        live.start(seed=0, owner="x")
        print(live._proc.pid, flush=True)
        while live.current().config is None:
            time.sleep(0.1)
        os._exit(0)
    """)
    out = subprocess.run([sys.executable, "-c", server], capture_output=True, text=True, timeout=180,
                         cwd=SHIPPED.parents[2])
    assert out.returncode == 0, out.stderr
    pid = int(out.stdout.split()[0])
    deadline = time.time() + 60
    while time.time() < deadline and (alive(pid) or list(temp_root.iterdir())):
        time.sleep(0.2)
    assert not alive(pid) and list(temp_root.iterdir()) == []


def test_the_step_budget_comes_from_the_environment():
    assert live_steps({}) == 600
    assert live_steps({"ATTNVIZ_LIVE_STEPS": " 40 "}) == 40
    assert live_steps({"ATTNVIZ_LIVE_STEPS": "0"}) == 0  # off
    for bad in ("-1", "ten", "1e3", "99999"):
        with pytest.raises(ValueError, match="ATTNVIZ_LIVE_STEPS must be a whole number"):
            live_steps({"ATTNVIZ_LIVE_STEPS": bad})
    assert live_gpt_steps({"ATTNVIZ_LIVE_STEPS": "40"}) == 3500  # each kind has its own
    assert live_gpt_steps({"ATTNVIZ_LIVE_GPT_STEPS": "12"}) == 12
    assert live_gpt_steps({"ATTNVIZ_LIVE_GPT_STEPS": "0"}) == 0
    with pytest.raises(ValueError, match="ATTNVIZ_LIVE_GPT_STEPS must be a whole number of steps from 0 \\(off\\) to "
                                         "10000, not '20000'"):
        live_gpt_steps({"ATTNVIZ_LIVE_GPT_STEPS": "20000"})


def test_a_toy_gpt_run_streams_its_head_scores_and_keeps_its_trained_weights(temp_root):
    before = shipped_files()
    live = LiveTraining(TINY_GPT, temp_root=str(temp_root))
    started = live.start(seed=3, owner="lecturer")
    assert started.kind == GPT and under_way() == started
    command = TINY_GPT.command(temp_root, 3)
    assert command[1:3] == ["-m", "training.train_gpt"] and "--remove-if-orphaned" in command
    run = wait_for(live)
    assert run.state == FINISHED, run.why
    assert under_way() is None
    assert len(run.loss) == 20 and [step for step, _ in run.evaluations] == [0, 10, 20]
    assert [step for step, _ in run.measured] == [0, 10, 20]
    scores = run.measured[-1][1]
    assert len(scores["induction"]) == len(scores["previous_token"]) == 2 and len(scores["induction"][1]) == 2
    assert run.test == run.evaluations[-1][1] and run.config["model"]["n_embd"] == 16
    assert list(temp_root.iterdir()) == []
    step, weights = live.weights(run.number)
    model = live_gpt(run.config, weights)
    assert step == 20 and model.config.n_head == 2 and not model.training
    assert shipped_files() == before


@pytest.mark.parametrize(("first", "second"), [(TINY, TINY_GPT), (TINY_GPT, TINY)])
def test_one_live_training_per_process_whatever_its_kind(temp_root, first, second):
    running, other = LiveTraining(first, temp_root=str(temp_root)), LiveTraining(second, temp_root=str(temp_root))
    started = running.start(seed=0, owner="lecturer")
    with pytest.raises(AlreadyRunning) as refused:
        other.start(seed=0, owner="student")
    assert refused.value.run.kind == first.kind == started.kind != second.kind
    assert {first.kind, second.kind} == {TRANSLATOR, GPT}
    assert other.current() is None and len(list(temp_root.iterdir())) == 1  # nothing started
    assert not other.stop("lecturer")  # the other page's LiveTraining has no run to stop
    assert running.stop("lecturer")
    second_run = other.start(seed=0, owner="student")  # once it has ended, the other kind may start
    assert second_run.kind == second.kind and under_way() == second_run
    with pytest.raises(AlreadyRunning):
        running.start(seed=1, owner="lecturer")
    other.shutdown()
    assert under_way() is None and list(temp_root.iterdir()) == []
