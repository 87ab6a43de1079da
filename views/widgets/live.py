"""What the "Train it live" parts share (the Translate page's translator, the Language model page's toy GPT): the
start and stop controls, the run's status, its newest model built once per weights file, and the polling.

Each page has its own LiveTraining (runtime/live_training.py: its settings say what it trains, its last run stays on
its page); one run of either kind trains at a time per server process, so a start while the other page's run is
under way is refused, and this says whose run it is. Only the session that started a run may stop it (a student's
click should not end the lecturer's demonstration); it stops by itself after its steps or its time limit.

The page polls (a fragment rerun every second for the session that started the run, every two for the others)
only while its run is under way.
"""
import secrets

import streamlit as st

from locales import N_, _
from model.loading.footprint import module_bytes
from runtime.budget import Kind
from runtime.live_training import FAILED, FINISHED, RUNNING, STOPPED, AlreadyRunning, LiveTraining, under_way
from runtime.memory import budget
from training.live import BadSetting
from views.shell.markdown import code

OWNER = "_live_owner"  # session state: this session's token, to know the run it started
REFUSED = "_live_refused"  # session state: the run under way when this session's start was refused
SEED = "live_seed"  # the seed box's key
MAX_SEED = 999
POLL_SECONDS = 1.0  # the page of the session that started the run (the lecturer's, on the projector)
WATCH_SECONDS = 2.0  # everyone else's: a class watching on its laptops costs the server half as much
START = N_("Train a new model live")


def training(recipe, steps: int) -> LiveTraining | None:
    """A page's LiveTraining of `steps` steps of a recipe (training/live.py); None when steps is 0 (off)."""
    return LiveTraining(recipe(steps=steps)) if steps else None


def manager(cached):
    """cached(): the page's LiveTraining (st.cache_resource), None when its variable is 0 (live training off); a bad
    setting (not a number) is the operator's, said plainly, and None."""
    try:
        return cached()
    except BadSetting as e:
        st.error(_("Live training is not available on this server: {variable} must be a whole number of steps from 0 "
                   "(off) to {most}, not {value}.").format(variable=e.variable, most=e.most, value=code(repr(e.raw))),
                 icon=":material/error:")
        return None


def owner() -> str:
    return st.session_state.setdefault(OWNER, secrets.token_hex(8))


def ago(seconds: float) -> str:
    if seconds < 120:
        return _("{n} s").format(n=f"{seconds:.0f}")
    return _("{n} min").format(n=f"{seconds / 60:.0f}")


def seed_asked() -> int:
    """The seed box's value, kept within 0..MAX_SEED whatever the browser sent."""
    try:
        return min(max(int(st.session_state.get(SEED, 0)), 0), MAX_SEED)
    except (TypeError, ValueError, OverflowError):  # None, NaN, infinity
        return 0


def _start(live) -> None:
    """The start button's callback (before the rerun draws the page): start, or remember which run was under way."""
    try:
        live.start(seed_asked(), owner())
    except AlreadyRunning as e:
        st.session_state[REFUSED] = e.run


def _stop(live) -> None:
    live.stop(owner())


def controls(live):
    """Start (and, for the session that started the run under way, Stop); returns the page's run to show (its last
    one, or None)."""
    run = live.current()
    running = run is not None and run.state == RUNNING
    left, middle, right = st.columns([2, 1, 2])
    left.button(_(START), key="live_start", type="primary", icon=":material/model_training:", on_click=_start,
                args=(live,))
    middle.number_input(_("Seed"), 0, MAX_SEED, 0, key=SEED,
                        help=_("Seed 0 is the shipped model's: the same random start and the same batches."))
    refused = st.session_state.pop(REFUSED, None)
    other = None if running else under_way()  # the other page's run, under way
    if refused is not None and running:
        st.info(_("A live training is already running on this server, started {ago} ago: watch it below. One runs "
                  "at a time, so that the server stays quick for everyone.").format(ago=ago(run.seconds())),
                icon=":material/hourglass_top:")
    elif refused is not None and other is not None:
        st.info(_("Not started: {other} is being trained live on this server, started {ago} ago. One live training "
                  "runs at a time per server, so that it stays quick for everyone: start yours once that one has "
                  "ended (it stops by itself within {steps} steps).").format(
            other=_(other.title or START), ago=ago(other.seconds()), steps=other.steps),
            icon=":material/hourglass_top:")
    if running and run.owner == owner():
        right.button(_("Stop it"), key="live_stop", icon=":material/stop_circle:", on_click=_stop, args=(live,))
    elif running:
        right.caption(_("Started by another visitor {ago} ago; only they can stop it. It ends by itself within "
                        "{steps} steps.").format(ago=ago(run.seconds()), steps=run.steps))
    elif other is not None and refused is None:
        right.caption(_("{other} is being trained live on this server now (started {ago} ago): one live training runs "
                        "at a time, so a new one can start once it has ended.").format(
            other=_(other.title or START), ago=ago(other.seconds())))
    return run


def poll_every(run) -> float | None:
    """Seconds between the reruns of the part showing `run`: None once it has ended."""
    if run is None or run.state != RUNNING:
        return None
    return POLL_SECONDS if run.owner == owner() else WATCH_SECONDS


def starting(run, polling: bool) -> bool:
    """Under the polling fragment: a whole rerun if the run just ended (the page again, without the timer); True,
    with a notice, while its process is still starting (nothing to draw yet)."""
    if polling and run.state != RUNNING:
        st.rerun(scope="app")
    if run.state == RUNNING and run.config is None:
        st.info(_("Starting the training process ({ago} so far: it loads PyTorch and draws its training sentences "
                  "first)…").format(ago=ago(run.seconds())), icon=":material/hourglass_top:")
        return True
    return False


def run_key(run) -> tuple:
    """What the budget's entries of a run start with: its kind, number and start (a new manager counts from 1)."""
    return run.kind, run.number, run.started


def newest_model(live, run, estimate: int = 4 * 2**20):
    """(step, model) at the run's newest weights, built once per weights file into the budget (kind "live", capped
    apart) by the page's settings; None if there are none yet."""
    if run.weights_step is None or run.config is None:
        return None

    def load():
        found = live.weights(run.number)
        return None if found is None else (found[0], live.settings.model(run.config, found[1]))

    key = ("live model", *run_key(run), run.weights_step)
    return budget().get_or_build(key, load, Kind.LIVE, estimate, lambda v: module_bytes(v[1]) if v else 0)


def status(run, score: str, score_at: str, score_help: str, running: str, finished_test: str | None = None) -> None:
    """The run's step, score, loss and time, and how it is doing or how it ended. The page's own words, translated
    and not yet formatted: score, score_at ({step}), score_help; running ({number}, {seed}, {steps}); finished_test
    ({steps}, {seconds}, {seed}, {test}), said of a finished run with a final test (else a plain "Finished")."""
    steps = len(run.loss)
    left, middle, right, last = st.columns(4)
    left.metric(_("Step (of at most {steps})").format(steps=run.steps), steps)
    middle.metric(score_at.format(step=run.evaluations[-1][0]) if run.evaluations else score,
                  f"{run.evaluations[-1][1]:.1%}" if run.evaluations else "–", help=score_help)
    right.metric(_("Training loss"), f"{run.loss[-1]:.3f}" if run.loss else "–")
    seconds = f"{run.seconds():.0f}"
    last.metric(_("Time"), _("{n} s").format(n=seconds))
    if run.state == RUNNING:
        st.caption(":material/model_training: " + running.format(number=run.number, seed=run.seed, steps=run.steps))
    elif run.state == FINISHED and (run.test is None or finished_test is None):
        st.success(_("Finished: {steps} steps in {seconds} s (seed {seed}).").format(
            steps=steps, seconds=seconds, seed=run.seed), icon=":material/check_circle:")
    elif run.state == FINISHED:
        st.success(finished_test.format(steps=steps, seconds=seconds, seed=run.seed, test=f"{run.test:.1%}"),
                   icon=":material/check_circle:")
    elif run.state == STOPPED:
        st.warning(_("Stopped after {steps} steps: {why}.").format(steps=steps, why=run.reason()),
                   icon=":material/stop_circle:")
    elif run.state == FAILED:
        st.error(_("The live training failed after {steps} steps: {why}.").format(steps=steps, why=run.reason()),
                 icon=":material/error:")
