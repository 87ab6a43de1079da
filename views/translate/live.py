"""Train it live: a button trains a fresh translator from random weights on this server (runtime/live_training.py: a
process of its own, one at a time per server process), while the page streams its loss, its held-out exact match,
and its translation of the page's sentence with the cross-attention map, as they form.

The page polls (a fragment rerun every second for the session that started the run, every two for the others)
only while a run is under way. A run's model at its newest weights
is built once per weights file into the memory budget (kind "live", capped apart), and so is its translation of
each sentence and set of heads switched off, shared by the sessions that show it. Only the session that started
a run may stop it (a student's click should not end the lecturer's demonstration); it stops by itself after its
steps or LiveTraining's time limit.
"""
import secrets

import streamlit as st

from locales import _
from model.loading.footprint import module_bytes
from runtime.live_training import (
    FAILED,
    FINISHED,
    MAX_STEPS,
    RUNNING,
    STEPS_ENV,
    STOPPED,
    AlreadyRunning,
    BadSetting,
    LiveTraining,
    Settings,
    live_steps,
)
from runtime.live_training import live_translator as build
from runtime.memory import budget
from runtime.model_thread import on_model_thread
from views.shell.errors import or_stop
from views.shell.markdown import code
from views.translate.learning import curve, map_pickers, show_written, when, written_by
from views.translate.page import Translate

OWNER = "_live_owner"  # session state: this session's token, to know the run it started
MAX_SEED = 999
REFUSED = "_live_refused"  # session state: this session's start was refused (a run was under way)
POLL_SECONDS = 1.0  # the page of the session that started the run (the lecturer's, on the projector)
WATCH_SECONDS = 2.0  # everyone else's: a class watching on its laptops costs the server half as much


@st.cache_resource(show_spinner=False)
def _manager():
    """The process's one LiveTraining; None when ATTNVIZ_LIVE_STEPS is 0 (live training off)."""
    steps = live_steps()
    return LiveTraining(Settings(steps=steps)) if steps else None


def manager():
    try:
        return _manager()
    except BadSetting as e:  # ATTNVIZ_LIVE_STEPS is not a number: the operator's setting, said plainly
        st.error(_("Live training is not available on this server: {variable} must be a whole number of steps from 0 "
                   "(off) to {most}, not {value}.").format(variable=STEPS_ENV, most=MAX_STEPS, value=code(repr(e.raw))),
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
        return min(max(int(st.session_state.get("live_seed", 0)), 0), MAX_SEED)
    except (TypeError, ValueError, OverflowError):  # None, NaN, infinity
        return 0


def _start() -> None:
    """The start button's callback (before the rerun draws the page): start, or remember why not."""
    try:
        manager().start(seed_asked(), owner())
    except AlreadyRunning:
        st.session_state[REFUSED] = True


def _stop() -> None:
    manager().stop(owner())


def controls(live):
    """Start (and, for the session that started the run under way, Stop); returns the run to show."""
    run = live.current()
    running = run is not None and run.state == RUNNING
    left, middle, right = st.columns([2, 1, 2])
    left.button(_("Train a new model live"), key="live_start", type="primary", icon=":material/model_training:",
                on_click=_start)
    middle.number_input(_("Seed"), 0, MAX_SEED, 0, key="live_seed",
                        help=_("Seed 0 is the shipped model's: the same random start and the same batches."))
    if st.session_state.pop(REFUSED, False) and running:
        st.info(_("A live training is already running on this server, started {ago} ago: watch it below. One runs "
                  "at a time, so that the server stays quick for everyone.").format(ago=ago(run.seconds())),
                icon=":material/hourglass_top:")
    if running and run.owner == owner():
        right.button(_("Stop it"), key="live_stop", icon=":material/stop_circle:", on_click=_stop)
    elif running:
        right.caption(_("Started by another visitor {ago} ago; only they can stop it. It ends by itself within "
                        "{steps} steps.").format(ago=ago(run.seconds()), steps=run.steps))
    return run


def live_translator(live, run):
    """(step, model) at the run's newest weights, built once per weights file in the budget; None if none yet."""
    if run.weights_step is None or run.config is None:
        return None

    def load():
        found = live.weights(run.number)
        return None if found is None else (found[0], build(run.config, found[1]))

    key = ("live translator", run.number, run.weights_step)
    return budget().get_or_build(key, load, "live", 4 * 2**20, lambda v: module_bytes(v[1]) if v else 0)


def written_now(live, run, t: Translate):
    """(step, Written): the run's newest model's translation of the page's sentence, decoded once per new weights
    and shared by the sessions with the same sentence and heads off."""
    built = live_translator(live, run)
    if built is None:
        return None, None
    step, model = built
    key = ("live translation", run.number, step, tuple(t.source.input_ids[0].tolist()), t.heads_off)
    written = or_stop(_("The live model"), budget().get_or_build, key,
                      lambda: on_model_thread(written_by, model, t.source.input_ids, t.heads_off), "live")
    return step, written


def status(run) -> None:
    steps = len(run.loss)
    left, middle, right, last = st.columns(4)
    left.metric(_("Step (of at most {steps})").format(steps=run.steps), steps)
    measured = (_("Held-out exact match (step {step})").format(step=run.evaluations[-1][0]) if run.evaluations
                else _("Held-out exact match"))
    middle.metric(measured, f"{run.evaluations[-1][1]:.1%}" if run.evaluations else "–",
                  help=_("Share of 200 held-out sentences (never trained on) it translates exactly, measured every 25 "
                         "steps."))
    right.metric(_("Training loss"), f"{run.loss[-1]:.3f}" if run.loss else "–")
    seconds = f"{run.seconds():.0f}"
    last.metric(_("Time"), _("{n} s").format(n=seconds))
    if run.state == RUNNING:
        st.caption(":material/model_training: " + _(
            "Training (run {number} of this server, seed {seed}): it stops at the first evaluation with all 200 "
            "held-out sentences right, or after {steps} steps.").format(number=run.number, seed=run.seed,
                                                                         steps=run.steps))
    elif run.state == FINISHED and run.test is None:
        st.success(_("Finished: {steps} steps in {seconds} s (seed {seed}).").format(
            steps=steps, seconds=seconds, seed=run.seed), icon=":material/check_circle:")
    elif run.state == FINISHED:
        st.success(_("Finished: {steps} steps in {seconds} s (seed {seed}); final test: {test} of 200 other held-out "
                     "sentences exact.").format(steps=steps, seconds=seconds, seed=run.seed, test=f"{run.test:.1%}"),
                   icon=":material/check_circle:")
    elif run.state == STOPPED:
        st.warning(_("Stopped after {steps} steps: {why}.").format(steps=steps, why=run.reason()),
                   icon=":material/stop_circle:")
    elif run.state == FAILED:
        st.error(_("The live training failed after {steps} steps: {why}.").format(steps=steps, why=run.reason()),
                 icon=":material/error:")


def watch(t: Translate, layer: int, head: int, mean: bool, polling: bool) -> None:
    """The run's progress and its model's translation now; while `polling`, rerun every POLL_SECONDS."""
    live = manager()
    run = live.current()
    if polling and run.state != RUNNING:  # it just ended: a whole run again, without the timer
        st.rerun(scope="app")
    if run.state == RUNNING and run.config is None:
        st.info(_("Starting the training process ({ago} so far: it loads PyTorch and draws its training sentences "
                  "first)…").format(ago=ago(run.seconds())), icon=":material/hourglass_top:")
        return
    status(run)
    curve(run.loss, run.evaluations, None, run.steps, "live-curve", _("held-out exact match (200 sentences)"))
    step, written = written_now(live, run, t)
    if written is None:
        st.caption(_("The model's first weights are on their way…"))
        return
    show_written(written, t.source.tokens, layer, head, mean, "live-cross", t.reference, when(step, t))


def section(t: Translate) -> None:
    live = manager()
    if live is None:
        st.info(_("Live training is switched off on this server (ATTNVIZ_LIVE_STEPS=0). *Watch it learn* shows the "
                  "shipped model's training instead."), icon=":material/info:")
        return
    st.caption(_("Trains a new translator from random weights on this server, now: the same model and recipe as the "
                 "shipped one (batches of 64 sentences, about a minute). Watch the loss fall, the held-out accuracy "
                 "rise, and the attention of your sentence take shape. One training runs at a time per server."))
    run = controls(live)
    layer, head, mean = map_pickers(t.loaded.translator.config)
    if run is None:
        st.info(_("No live training has run on this server yet: press **{start}**.").format(
            start=_("Train a new model live")), icon=":material/model_training:")
        return
    polling = run.state == RUNNING
    every = (POLL_SECONDS if run.owner == owner() else WATCH_SECONDS) if polling else None
    st.fragment(watch, run_every=every)(t, layer, head, mean, polling)
