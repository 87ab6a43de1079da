"""The induction circuit over many repeat probes (model.causal.survey), below the Copying from context part: every
head's previous-token and induction score as a grid, the strongest of each, and what switching off the strongest
induction heads does to copying (against the strongest previous-token heads, and heads drawn at random); for a model
that was not trained here, the toy GPT's 2-layer circuit measured the same way beside it."""
import streamlit as st
import torch

from locales import _
from model.causal.probes import PROBE_LENGTH, PROBE_SEED, repeat_probes
from model.causal.survey import Survey, survey
from model.family import Capability
from runtime.budget import Kind
from runtime.model_thread import on_model_thread
from runtime.models import Choice, loaded_model, sources
from views.charts.mounted import show_chart
from views.language_model.page import LanguageModel, head_name
from views.shell import lecture
from views.shell.errors import cached
from viz.head_grid import head_grid_spec

TOY_PROBES, CHECKPOINT_PROBES = 200, 20  # a checkpoint's pass costs more (SmolLM2: 8 s for the whole survey)


def probes_for(loaded, toy: bool) -> torch.Tensor:
    vocabulary = getattr(loaded, "vocabulary", None)
    if vocabulary is not None:
        return repeat_probes(len(vocabulary.words), TOY_PROBES if toy else CHECKPOINT_PROBES, PROBE_SEED)
    return repeat_probes(loaded.model.config.vocab_size, CHECKPOINT_PROBES, PROBE_SEED, first_id=0)


def survey_of(choice: Choice, loaded, toy: bool) -> Survey:
    """Once per model (the whole model: the sidebar's heads off are not applied), shared. A checkpoint's is kept for
    the life of the process: a few KB, and SmolLM2's costs 8 s of a core, which a class arriving at the tour's stop
    waited for whenever the budget had dropped it meanwhile (each student's own sentences fill its entries); the
    checkpoints are few, a link's random models are not (theirs stay in the budget as the rest)."""
    return cached(("lm-survey", choice), lambda: on_model_thread(survey, loaded.model, probes_for(loaded, toy)),
                  _("The language model"), kind=Kind.CIRCUIT, pinned=choice.random is None)


def toy_choice() -> Choice | None:
    """The toy GPT (a language model trained here), if the server has it."""
    found = next((s for s in sources() if s.can(Capability.SNAPSHOTS) and s.can(Capability.GENERATION)
                  and s.available), None)
    return None if found is None else Choice(found.key)


def what_was_off(what: str, n: int) -> str:
    if what == "induction":
        return _("the {n} strongest induction heads").format(n=n) if n > 1 else _("the strongest induction head")
    if what == "previous":
        return _("the {n} strongest previous-token heads").format(n=n)
    return _("{n} heads drawn at random").format(n=n)


def table(s: Survey) -> dict:
    rows = [(_("none: the whole model"), "", s.accuracy, s.second_loss)]
    rows += [(what_was_off(a.what, len(a.heads)), ", ".join(f"{ly}.{hd}" for ly, hd in a.heads), a.accuracy,
              a.second_loss) for a in s.ablations]
    return {_("switched off"): [r[0] for r in rows], _("heads (layer.head)"): [r[1] for r in rows],
            _("copy accuracy"): [f"{r[2]:.0%}" for r in rows],
            _("second copy's loss (nats)"): [f"{r[3]:.2f}" for r in rows]}


def strongest_line(s: Survey) -> str:
    induction = ", ".join(f"{head_name(*lh)} ({s.induction[lh]:.2f})" for lh in s.strongest(s.induction, 3))
    previous = ", ".join(f"{head_name(*lh)} ({s.previous[lh]:.2f})" for lh in s.strongest(s.previous, 3))
    return _("Strongest induction heads: {induction}. Strongest previous-token heads: {previous}.").format(
        induction=induction, previous=previous)


def section(lm: LanguageModel) -> None:
    s = survey_of(lm.choice, lm.loaded, lm.toy)
    config = lm.model.config
    st.subheader(_("Over {n} probes: every head of the {layers} × {heads}").format(
        n=s.probes, layers=config.n_layer, heads=config.n_head))
    st.markdown(_("Copy accuracy **{acc:.0%}**; loss {first:.2f} nats a word on the first copy, {second:.2f} on the "
                  "second.").format(acc=s.accuracy, first=s.first_loss, second=s.second_loss) + " " + strongest_line(s))
    height = 560 if config.n_layer > 8 else 300
    left, right = lecture.charts_row(2)
    with left:
        show_chart(head_grid_spec(s.previous, _("Previous-token score: attention from each word to the one before"),
                                  _("layer %{y}, head %{x}<br>previous-token score: %{z:.3f}"), _("layer"), _("head"),
                                  height), key="lm-survey-previous")
    with right:
        show_chart(head_grid_spec(s.induction, _("Induction score: attention from each word of the second copy to the "
                                                 "word after its first occurrence"),
                                  _("layer %{y}, head %{x}<br>induction score: %{z:.3f}"), _("layer"), _("head"),
                                  height), key="lm-survey-induction")
    st.markdown(_("**Switch the strongest induction heads off** and see what copying keeps; the strongest "
                  "previous-token heads, and as many heads drawn at random, switched off instead:"))
    st.dataframe(table(s), hide_index=True, width="stretch")
    toy = toy_choice()
    if lm.toy or toy is None:
        return
    t = survey_of(toy, loaded_model(toy), True)
    st.markdown(_("**Beside the toy GPT** ({layers} layers × {heads} heads, trained here): the same circuit in two "
                  "layers. Copy accuracy **{acc:.0%}** over {n} probes; {strongest}").format(
        layers=t.induction.shape[0], heads=t.induction.shape[1], acc=t.accuracy, n=t.probes,
        strongest=strongest_line(t)))
    st.dataframe(table(t), hide_index=True, width="stretch")
    st.caption(_("Probes: {length} random tokens, then the same {length} again (the model's own vocabulary); the "
                 "scores are each head's mean attention over them.").format(length=PROBE_LENGTH))
