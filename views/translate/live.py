"""Train it live: a button trains a fresh translator from random weights on this server (runtime/live_training.py: a
process of its own, one live training of either kind at a time per server process), while the page streams its
loss, its held-out exact match, and its translation of the page's sentence with the cross-attention map, as they
form. The controls, the status and the polling are the Language model page's too (views/widgets/live.py).

A run's model at its newest weights is built once per weights file into the memory budget (kind "live", capped
apart), and so is its translation of each sentence and set of heads switched off, shared by the sessions that show
it.
"""
import streamlit as st

from locales import _
from runtime.budget import Kind
from runtime.live_training import RUNNING
from runtime.memory import budget
from runtime.model_thread import on_model_thread
from training.live import Settings, live_steps
from views.shell.errors import or_stop
from views.translate.learning import curve, map_pickers, show_written, when, written_by
from views.translate.page import Translate
from views.widgets import live as widgets
from views.widgets.live import controls, newest_model, poll_every, run_key, starting


@st.cache_resource(show_spinner=False)
def _manager():
    """The page's LiveTraining; None when ATTNVIZ_LIVE_STEPS is 0 (live training off)."""
    return widgets.training(Settings, live_steps())


def written_now(live, run, t: Translate):
    """(step, Written): the run's newest model's translation of the page's sentence, decoded once per new weights
    and shared by the sessions with the same sentence and heads off."""
    built = newest_model(live, run)
    if built is None:
        return None, None
    step, model = built
    key = ("live translation", *run_key(run), step, tuple(t.source.input_ids[0].tolist()), t.heads_off)
    written = or_stop(_("The live model"), budget().get_or_build, key,
                      lambda: on_model_thread(written_by, model, t.source.input_ids, t.heads_off), Kind.LIVE)
    return step, written


def status(run) -> None:
    widgets.status(
        run, _("Held-out exact match"), _("Held-out exact match (step {step})"),
        _("Share of 200 held-out sentences (never trained on) it translates exactly, measured every 25 steps."),
        _("Training (run {number} of this server, seed {seed}): it stops at the first evaluation with all 200 "
          "held-out sentences right, or after {steps} steps."),
        _("Finished: {steps} steps in {seconds} s (seed {seed}); final test: {test} of 200 other held-out sentences "
          "exact."))


def watch(t: Translate, layer: int, head: int, mean: bool, polling: bool) -> None:
    """The run's progress and its model's translation now; while `polling`, rerun every POLL_SECONDS."""
    live = widgets.manager(_manager)
    run = live.current()
    if starting(run, polling):
        return
    status(run)
    curve(run.loss, run.evaluations, None, run.steps, "live-curve", _("held-out exact match (200 sentences)"))
    step, written = written_now(live, run, t)
    if written is None:
        st.caption(_("The model's first weights are on their way…"))
        return
    show_written(written, t.source.tokens, layer, head, mean, "live-cross", t.reference, when(step, t))


def section(t: Translate) -> None:
    live = widgets.manager(_manager)
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
    st.fragment(watch, run_every=poll_every(run))(t, layer, head, mean, run.state == RUNNING)
