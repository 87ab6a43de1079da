"""Watch it learn: the toy GPT at each snapshot of its training (?snap=, a training step), from random to trained:
the loss curve with its plateau and its jump shaded and the step marked; the copy accuracy and every head's
induction and previous-token score over training; and the induction head's map on a repeat probe at that step, from
noise to the stripe.

Snapshots come from model/weights/gpt/snapshots.safetensors (model.gpt.snapshots), each built once per process into
the memory budget; the last step is the shipped model itself. The map of each snapshot is read once per process
(views.shell.errors.cached) and shared. The scores come from the training's metrics.json (every head on); the map is
read with the sidebar's heads switched off. What is drawn here (the curves, the map) is also the live training's
(views.language_model.live).
"""
import streamlit as st

from locales import _, ngettext
from model.causal.probes import PROBE_LENGTH
from model.gpt.snapshots import at_snapshot, jump_steps, plateau, snapshot_steps, training_record
from model.gpt.source import footprint
from runtime.budget import Kind
from runtime.model_thread import on_model_thread
from views.charts.mounted import show_chart
from views.language_model.induction import Circuit, circuit, probe_of, read_circuit
from views.language_model.page import LanguageModel, head_name
from views.shell import lecture
from views.shell.errors import cached
from views.widgets import notices, state
from views.widgets.snapshots import model_at
from viz.attention import heatmap_spec
from viz.learning import JUMP_FILL, PLATEAU_FILL, head_scores, learning_curve

PROBE_SEED = 0  # the repeat probe of the map: the Copying part's first one


# ---------------------------------------------------------------- the shipped snapshots
def snapshots():
    """(the snapshot steps, model.gpt.snapshots.TrainingRecord), read once per process."""
    return cached(("gpt snapshots",), lambda: (snapshot_steps(), training_record()), _("The training snapshots"),
                  kind=Kind.SNAPSHOT)


def snapshot_gpt(step: int, trained):
    """The toy GPT after `step` training steps (views.widgets.snapshots.model_at)."""
    return model_at(step, snapshots()[0], trained, "gpt snapshot", lambda: at_snapshot(step), footprint())


def circuit_at(step: int, lm: LanguageModel) -> Circuit:
    """The snapshot's reading of the probe with the sidebar's heads off: once per process, then shared (the last
    step's is the Copying part's own)."""
    ids, tokens = probe_of(lm, PROBE_SEED)
    steps, __ = snapshots()
    if step == steps[-1]:
        return circuit(lm, ids, tokens, True)

    def compute():
        return on_model_thread(read_circuit, snapshot_gpt(step, lm.model), ids, tokens, lm.heads_off, True)

    return cached(("gpt snapshot circuit", step, ids, tuple(sorted(lm.heads_off))), compute,
                  _("The training snapshot"), kind="snapshot")  # capped with the snapshots: never pushed out by passes


# ---------------------------------------------------------------- what both parts draw
def spans(loss, evaluations) -> list:
    """The plateau and the jump (first evaluations at 20% and 90% copy accuracy), as far as the training went."""
    starts, ends = jump_steps(evaluations)
    flat = plateau(loss, starts)
    found = [(flat[0], flat[1], _("plateau"), PLATEAU_FILL)] if flat else []
    if starts is not None:
        found.append((starts, ends if ends is not None else len(loss), _("the jump"), JUMP_FILL))
    return found


def curve(loss, evaluations, mark: int | None, steps: int | None, key: str) -> None:
    """The loss of every step and the copy accuracy, the plateau and the jump shaded, `mark` a dotted line."""
    show_chart(learning_curve(loss, evaluations, mark, steps, score_label=_("copy accuracy (held-out repeat probes)"),
                              score_axis=_("copy accuracy"), score_hover=_("step %{x}<br>copy accuracy %{y:.1%}"),
                              spans=spans(loss, evaluations)), key=key,
               alt_name=_("The training loss and {score} at every step").format(
                   score=_("copy accuracy (held-out repeat probes)")))


def scores(steps, accuracy, induction, previous, mark, shaded, head, key: str) -> None:
    """Every head's induction (solid) and previous-token (dotted) score and the copy accuracy, over training."""
    layers, heads = induction.shape[1:]
    names = [[head_name(layer, h) for h in range(heads)] for layer in range(layers)]
    show_chart(head_scores(steps, accuracy, induction, previous, names, mark, shaded, head,
                           title=_("Every head's scores on the held-out repeat probes")), key=key)
    st.caption(_("Solid: each head's induction score (its attention from a word of the second copy to the word after "
                 "its first occurrence); dotted: its previous-token score (to the word just before); black: the "
                 "copy accuracy. The thick line is the induction head, {head}.").format(head=head_name(*head)))


def induction_map(c: Circuit, head: tuple[int, int], when: str, key: str) -> None:
    layer, h = head
    show_chart(heatmap_spec(c.attentions[layer, h], c.tokens, c.tokens, _("Induction head {head}, {when}").format(
        head=head_name(layer, h), when=when)), key=key)
    st.caption(_("{n} random words, then the same {n} again. A trained induction head draws a stripe {offset} below "
                 "the diagonal: each word of the second copy looks at the word after its first occurrence, and copies "
                 "it. Untrained, each word spreads its attention over the words before it: no stripe. The stripe "
                 "score, the mean attention on the stripe: {score:.2f}; copy accuracy on this probe: {accuracy:.0%}."
                 ).format(n=PROBE_LENGTH, offset=PROBE_LENGTH - 1, score=c.induction[layer, h], accuracy=c.accuracy))


def heads_off_caption(lm: LanguageModel) -> None:
    n = len(lm.heads_off)
    if n:
        st.caption(ngettext("The map is read with {n} head switched off (sidebar); the curves and scores are the "
                            "training's own, with every head on.", "The map is read with {n} heads switched off "
                            "(sidebar); the curves and scores are the training's own, with every head on.", n).format(
            n=n))


# ---------------------------------------------------------------- the part
def phase(step: int, record) -> str:
    """Where `step` is in the training, in a sentence."""
    starts, ends = record.jump
    if step == 0:
        return _("**Random weights.** The model knows nothing yet: every word spreads its attention over the words "
                 "before it.")
    if starts is None or step < starts:
        return _("**On the plateau.** The loss barely moves for thousands of steps and the copy accuracy stays low: no "
                 "head looks from a word to what followed its earlier occurrence yet, and every head's scores sit "
                 "near where they started, creeping up only near the plateau's end.")
    if ends is None or step <= ends:
        return _("**Inside the jump.** Within a few hundred steps the copy accuracy climbs from {low:.0%} to "
                 "{high:.0%} and the loss falls off its plateau; the previous-token scores of the first layer and the "
                 "induction scores of the second rise together, and the induction head's stripe appears.").format(
            low=record.jump_levels[0], high=record.jump_levels[1])
    return _("**After the jump.** The induction head copies: the second copy of random words, in an order it has "
             "never seen, is predicted almost perfectly.")


def section(lm: LanguageModel) -> None:
    if not lm.toy:
        st.info(_("Only the toy GPT trained here has snapshots of its training: pick it in the sidebar."),
                icon=":material/info:")
        return
    steps, record = snapshots()
    last, (starts, ends) = steps[-1], record.jump
    names = {0: _("0 (random)"), last: _("{step} (trained)").format(step=last)}  # translated now, not when formatted
    if starts in steps:
        names[starts] = _("{step} (the jump starts)").format(step=starts)
    if ends in steps:
        names[ends] = _("{step} (the jump has ended)").format(step=ends)
    with lecture.sidebar():  # in front of a class the curve comes first
        step = state.choice(_("Training step (a snapshot of the shipped training)"), "snap", list(steps), steps[0],
                            widget="select_slider", format_func=lambda s: names.get(s, str(s)),
                            help=_("The shipped toy GPT was saved at these steps while it trained, most of them "
                                   "inside the jump: drag from the random model (step 0) to the trained one."))
        notices.show_notices()
    at, head = record.at(step), record.induction_head()
    c = circuit_at(step, lm)
    left, middle, right, fourth = lecture.controls(4)
    left.metric(_("Training step (of {last})").format(last=last), str(step))
    middle.metric(_("Copy accuracy"), f"{record.copy_accuracy[at]:.1%}",
                  help=_("On {n} held-out repeat probes, every head on: the share of the second copy's words the model "
                         "predicts (from metrics.json).").format(n=record.probes))
    right.metric(_("Induction score, head {layer}.{head}").format(layer=head[0], head=head[1]),
                 f"{record.induction[at][head]:.2f}",
                 help=_("Its mean attention from each word of a probe's second copy to the word after its first "
                        "occurrence, on the same probes."))
    fourth.metric(_("Training loss"), "–" if step == 0 else f"{record.loss[step - 1]:.3f}",
                  help=_("Cross-entropy of the step's batch of 32 contexts, in nats per word."))
    (lecture.place() or st).markdown(phase(step, record))
    evaluations = list(zip(record.steps, record.copy_accuracy.tolist()))
    curve(record.loss, evaluations, step, None, "lm-learning-curve")
    st.caption(_("The training loss of every step (blue) and the copy accuracy (black). Grey: the plateau, where the "
                 "loss barely moves; orange: the jump, from the first evaluation at {low:.0%} copy accuracy (step "
                 "{starts}) to the first at {high:.0%} (step {ends}); the dotted line is step {step}.").format(
        low=record.jump_levels[0], high=record.jump_levels[1], starts=starts, ends=ends, step=step))
    first, second = lecture.charts_row(2)
    with first:
        when = _("step 0 (random)") if step == 0 else _("after {step} steps").format(step=step)
        induction_map(c, head, when, "lm-learning-map")
        heads_off_caption(lm)
    with second:
        scores(record.steps, record.copy_accuracy, record.induction, record.previous_token, step,
               spans(record.loss, evaluations), head, "lm-learning-scores")
