"""Watch it learn: the shipped translator at each snapshot of its training (?snap=, a training step), from random
to trained: its greedy translation of the page's sentence, where each word it writes looks in the Chinese, the
held-out exact match at that step, and the loss curve with the step marked.

Snapshots come from model/weights/translator/snapshots.safetensors (model.translator.snapshots), each built once per
process into the memory budget; the last step is the shipped model itself. What is drawn here (the map and its pickers,
the curve) is also the live training's (views.translate.live).
"""
from dataclasses import dataclass

import numpy as np
import streamlit as st

from locales import _, ngettext
from model.translator.decoding import generate, words_of
from model.translator.snapshots import at_snapshot, snapshot_steps, training_record
from model.translator.source import footprint
from model.translator.vocabulary import EOS_ID, same_translation
from runtime.budget import Kind
from runtime.model_thread import on_model_thread
from views.charts.mounted import show_chart
from views.shell.errors import cached
from views.shell.markdown import plain
from views.translate.page import Translate
from views.widgets import notices, state
from views.widgets.pickers import layer_head, pick
from views.widgets.snapshots import model_at
from viz.attention import heatmap_spec
from viz.learning import learning_curve


@dataclass(frozen=True)
class Written:
    """What a translator wrote for one source, greedily, and where it looked while writing each word."""

    words: tuple[str, ...]  # the words written, <eos> last if it wrote it
    translation: str
    cross: np.ndarray  # (layers, heads, T, S): row t is the step that wrote words[t]; read-only
    finished: bool  # it wrote <eos> (else it was cut at the most words a decoding may write)


def written_by(model, input_ids, heads_off=()) -> Written:
    """Greedy decoding of input_ids (1, S), every step's cross-attention recorded (call on a model thread)."""
    decoding = generate(model, input_ids, heads_off=heads_off, record=True)
    ids = decoding.ids[0].tolist()
    cross = np.ascontiguousarray(decoding.cross[:, 0].numpy(), dtype=np.float32)
    cross.flags.writeable = False
    return Written(tuple(model.target.tokens[i] for i in ids), words_of(model, ids), cross, EOS_ID in ids)


# ---------------------------------------------------------------- the shipped snapshots
def snapshots():
    """(the snapshot steps, model.translator.snapshots.TrainingRecord), read once per process."""
    return cached(("translator snapshots",), lambda: (snapshot_steps(), training_record()),
                  _("The training snapshots"), kind=Kind.SNAPSHOT)


def snapshot_translator(step: int, trained):
    """The translator after `step` training steps (views.widgets.snapshots.model_at)."""
    return model_at(step, snapshots()[0], trained, "translator snapshot", lambda: at_snapshot(step), footprint())


def written_at(step: int, t: Translate) -> Written:
    """The snapshot's translation of the page's sentence with the sidebar's heads off: once, then shared."""
    ids = tuple(t.source.input_ids[0].tolist())

    def compute():
        model = snapshot_translator(step, t.loaded.translator)
        return on_model_thread(written_by, model, t.source.input_ids, t.heads_off)

    return cached(("snapshot translation", step, ids, t.heads_off), compute, _("The training snapshot"))


# ---------------------------------------------------------------- what both parts draw
def map_pickers(config) -> tuple[int, int, bool]:
    """The decoder's layer (the last by default) and the mean of its heads (on by default here) or one head."""
    return layer_head(config.num_layers, config.nhead, _("Decoder layer"), config.num_layers - 1, mean=True,
                      containers=st.columns([2, 2, 1]))


def show_written(w: Written, src_tokens, layer: int, head: int, mean: bool, key: str, reference: str | None,
                 when: str) -> None:
    """The translation (right or wrong when the correct one is known) and its cross-attention map."""
    words = " ".join(plain(word) for word in w.translation.split()) or _("(nothing: it wrote `<eos>` first)")
    if not w.finished:
        words = _("{words} … (no `<eos>` after {n} words: cut there)").format(words=words, n=len(w.words))
    if reference is None:
        line = _("**{when}:** {words}")
    elif same_translation(w.translation, reference):
        line = _("**{when}:** {words} :green[✓ right]")
    else:
        line = _("**{when}:** {words} :red[✗ wrong] (right: *{reference}*)")
    st.markdown(line.format(when=when, words=words, reference=reference))
    if mean:
        which = _("layer {layer}, mean of its heads").format(layer=layer)
    else:
        which = _("layer {layer}, head {head}").format(layer=layer, head=head)
    show_chart(heatmap_spec(pick(w.cross, layer, head, mean), w.words, src_tokens,
                            _("Cross-attention, {which}").format(which=which), keys=_("key: Chinese character"),
                            queries=_("query: the step writing this word")), key=key)
    st.caption(_("Each row is one decoding step, labelled with the word it wrote; its cells are how much that step "
                 "looked at each Chinese character ({which}; each row sums to 1).").format(which=which))


def when(step: int, t: Translate) -> str:
    """"Its translation after 150 steps, 2 heads off"."""
    n = len(t.heads_off)
    if step == 0 and not n:
        return _("Its translation at step 0 (random weights)")
    if step == 0:
        return ngettext("Its translation at step 0 (random weights), {n} head off",
                        "Its translation at step 0 (random weights), {n} heads off", n).format(n=n)
    if not n:
        return _("Its translation after {step} steps").format(step=step)
    return ngettext("Its translation after {step} steps, {n} head off", "Its translation after {step} steps, {n} heads "
                    "off", n).format(step=step, n=n)


def curve(loss, scores, mark: int | None, steps: int | None, key: str, score_label: str) -> None:
    show_chart(learning_curve(loss, scores, mark, steps, score_label=score_label), key=key,
               alt_name=_("The training loss and {score} at every step").format(score=score_label))


# ---------------------------------------------------------------- the part
def section(t: Translate) -> None:
    steps, record = snapshots()
    last = steps[-1]
    ends = {last: _("{step} (trained)").format(step=last), 0: _("0 (random)")}  # translated now, not when formatted
    step = state.choice(_("Training step (a snapshot of the shipped training)"), "snap", list(steps), steps[0],
                        widget="select_slider", format_func=lambda s: ends.get(s, str(s)),
                        help=_("The shipped translator was saved at these steps while it trained: drag from the "
                               "random model (step 0) to the trained one."))
    layer, head, mean = map_pickers(t.loaded.translator.config)
    notices.show_notices()
    written = written_at(step, t)
    left, middle, right = st.columns(3)
    left.metric(_("Training step"), _("{step} of {last}").format(step=step, last=last))
    middle.metric(_("Held-out exact match"), f"{record.snapshot_scores[step]:.1%}",
                  help=_("Share of 200 held-out sentences (never trained on) it translated exactly at this step, "
                         "with every head on."))
    right.metric(_("Training loss"), "–" if step == 0 else f"{record.loss[step - 1]:.3f}",
                 help=_("Cross-entropy of the step's batch (label smoothing 0.1: it never reaches 0)."))
    show_written(written, t.source.tokens, layer, head, mean, "learning-cross", t.reference, when(step, t))
    curve(record.loss, sorted(record.snapshot_scores.items()), step, None, "learning-curve",
          _("held-out exact match (200 sentences)"))
    st.caption(_("The loss of every training step (blue) and the exact match on 200 held-out sentences at each "
                 "snapshot (black); the dotted line is step {step}. Until about step 100 it writes English words with "
                 "little regard for the Chinese (each step looks nearly everywhere: a flat map); between steps 100 "
                 "and 200 each word's row settles on its character, and the translations come right.").format(
        step=step))
