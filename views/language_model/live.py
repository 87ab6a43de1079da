"""Train it live: a button trains a fresh toy GPT from random weights on this server (`python -m training.train_gpt`
in a process of its own, runtime/live_training.py; one live training of either kind at a time per server process,
the Translate page's included), while the page streams its loss falling off its plateau, its copy accuracy
jumping, every head's scores, and the induction head's map on a repeat probe appearing, from the weights the run
writes every other evaluation. The controls, the status and the polling are the Translate page's too
(views/widgets/live.py); the curves and the map are Watch it learn's (views.language_model.learning).

A run's model at its newest weights is built once per weights file into the memory budget (kind "live"), and so is
its reading of the probe for each set of heads switched off, shared by the sessions that show it.
"""
import numpy as np
import streamlit as st

from locales import _
from model.gpt.snapshots import JUMP, jump_steps
from runtime.budget import Kind
from runtime.live_training import RUNNING
from runtime.memory import budget
from runtime.model_thread import on_model_thread
from training.live import GPT_STEPS_ENV, GPTSettings, live_gpt_steps
from views.language_model.induction import probe_of, read_circuit
from views.language_model.learning import PROBE_SEED, curve, heads_off_caption, induction_map, scores, spans
from views.language_model.page import LanguageModel
from views.shell import lecture
from views.shell.errors import or_stop
from views.widgets import live as widgets
from views.widgets.live import START, controls, newest_model, poll_every, run_key, starting


@st.cache_resource(show_spinner=False)
def _manager():
    """The page's LiveTraining; None when ATTNVIZ_LIVE_GPT_STEPS is 0 (live training off)."""
    return widgets.training(GPTSettings, live_gpt_steps())


def circuit_now(live, run, lm: LanguageModel):
    """(step, Circuit): the run's newest model's reading of the probe with the sidebar's heads off, once per new
    weights, shared by the sessions with the same heads off."""
    built = newest_model(live, run)
    if built is None:
        return None, None
    step, model = built
    ids, tokens = probe_of(lm, PROBE_SEED)
    config = model.config
    off = tuple(sorted((ly, h) for ly, h in lm.heads_off if ly < config.n_layer and h < config.n_head))
    key = ("live circuit", *run_key(run), step, ids, off)
    c = or_stop(_("The live model"), budget().get_or_build, key,
                lambda: on_model_thread(read_circuit, model, ids, tokens, off, True), Kind.LIVE)
    return step, c


def induction_head(run, c) -> tuple[int, int]:
    """The head with the best induction score at the run's latest evaluation (500 probes), in a layer after the
    first; before any, the best on the map's probe."""
    if not run.measured:
        return c.heads()[0]
    scores_now = np.asarray(run.measured[-1][1]["induction"], dtype=np.float32)
    later = scores_now[1:] if scores_now.shape[0] > 1 else scores_now
    layer, head = np.unravel_index(int(np.argmax(later)), later.shape)
    return int(layer) + (1 if scores_now.shape[0] > 1 else 0), int(head)


def status(run) -> None:
    widgets.status(
        run, _("Copy accuracy"), _("Copy accuracy (step {step})"),
        _("On 500 held-out repeat probes: the share of the second copy's words it predicts, measured every 50 "
          "steps."),
        _("Training (run {number} of this server, seed {seed}): the shipped recipe for {steps} steps, at one "
          "thread."))
    starts, ends = jump_steps(run.evaluations)
    if ends is not None:
        st.success(_("The jump: the copy accuracy passed {low:.0%} at step {starts} and {high:.0%} at step "
                     "{ends}.").format(low=JUMP[0], high=JUMP[1], starts=starts, ends=ends),
                   icon=":material/trending_up:")
    elif starts is not None:
        st.info(_("The jump has started: the copy accuracy passed {low:.0%} at step {starts}.").format(
            low=JUMP[0], starts=starts), icon=":material/trending_up:")


def watch(lm: LanguageModel, polling: bool) -> None:
    """The run's progress and its model's induction head now; while `polling`, rerun every few seconds."""
    live = widgets.manager(_manager)
    run = live.current()
    if starting(run, polling):
        return
    status(run)
    curve(run.loss, run.evaluations, None, run.steps, "lm-live-curve")
    step, c = circuit_now(live, run, lm)
    if c is None:
        st.caption(_("The model's first weights are on their way…"))
        return
    head = induction_head(run, c)
    first, second = lecture.charts_row(2)
    with first:
        when = _("step 0 (random)") if step == 0 else _("after {step} steps").format(step=step)
        induction_map(c, head, when, "lm-live-map")
        heads_off_caption(lm)
    if run.measured:
        steps = [s for s, __ in run.measured]
        accuracy = dict(run.evaluations)
        with second:
            scores(steps, np.asarray([accuracy[s] for s in steps], dtype=np.float32),
                   np.asarray([m["induction"] for __, m in run.measured], dtype=np.float32),
                   np.asarray([m["previous_token"] for __, m in run.measured], dtype=np.float32), None,
                   spans(run.loss, run.evaluations), head, "lm-live-scores")


def section(lm: LanguageModel) -> None:
    if not lm.toy:
        st.info(_("Only the toy GPT can be trained live here: pick it in the sidebar."), icon=":material/info:")
        return
    live = widgets.manager(_manager)
    if live is None:
        st.info(_("Live training of the toy GPT is switched off on this server ({variable}=0). *Watch it learn* shows "
                  "the shipped model's training instead.").format(variable=GPT_STEPS_ENV), icon=":material/info:")
        return
    st.caption(_("Trains a new toy GPT from random weights on this server, now: the shipped model and recipe (batches "
                 "of 32 contexts of 64 words) for {steps} steps at one thread. Its loss sits on a plateau for about "
                 "2,500 steps, then falls as the copy accuracy jumps and the induction head's stripe appears: with "
                 "seed 0, between about steps 2,600 and 3,000, about a minute and a half after the start on an idle "
                 "server (another seed may jump later, or not within the run). One live training runs at a "
                 "time per server, the Translate page's included.").format(steps=f"{live.settings.steps:,}"))
    run = controls(live)
    if run is None:
        st.info(_("No live training of the toy GPT has run on this server yet: press **{start}**.").format(
            start=_(START)), icon=":material/model_training:")
        return
    st.fragment(watch, run_every=poll_every(run))(lm, run.state == RUNNING)
