"""Teacher forcing vs generation: what the translator predicts at each position given the correct words before it
(training's view: the whole reference shifted right, <bos> first, one pass under the causal mask) beside what it
writes given its own words, where they part, and the decoder's self-attention under teacher forcing.

The reference is the correct translation when the source is a sentence of the toy language, or an English text typed
in ?tgt= (the encoder-decoder page's target box). The model is the trained one or an earlier training snapshot
(?snap=, a training step, as on the "Watch it learn" part), with the sidebar's heads switched off: where the trained
model agrees with itself, an early snapshot or a head switched off shows them part.
"""
import streamlit as st

from locales import _, ngettext
from model.translator.ablation import decoding_bytes
from model.translator.decoding import generate, words_of
from model.translator.source import TRANSLATOR_KEY
from model.translator.teacher_forcing import compare
from model.translator.vocabulary import english_tokens
from runtime.memory import budget
from runtime.model_thread import on_model_thread
from runtime.models import Choice, model_key
from views.charts.mounted import show_chart
from views.shell.errors import cached
from views.shell.markdown import plain
from views.shell.reading import unknown_notice
from views.translate.learning import snapshot_translator, snapshots
from views.translate.page import Translate
from views.widgets import notices, state
from views.widgets.next_word import which_heads
from views.widgets.pickers import MAX_TEXT_CHARS, layer_head, pick
from viz.attention import heatmap_spec
from viz.forcing import forcing_grid


def snapshot_key(step: int) -> tuple:
    """The budget's key of a snapshot model (views.translate.learning.snapshot_translator builds it)."""
    return "translator snapshot", step


def snapshot_steps() -> list[tuple[int, float]]:
    """(training step, held-out exact match) of each shipped snapshot, from random to trained."""
    steps, record = snapshots()
    return [(step, record.snapshot_scores[step]) for step in steps]


def pick_model(t: Translate):
    """A slider over the training snapshots (?snap=), the trained model last; returns (step, model)."""
    steps = snapshot_steps()
    right = dict(steps)
    last = steps[-1][0]
    trained = _("{step} (trained)").format(step=last)  # translated now: Streamlit formats the options again later
    step = state.choice(_("Model: the translator after this many training steps"), "snap", [s for s, __ in steps],
                        last, widget="select_slider",
                        format_func=lambda s: trained if s == last else str(s),
                        help=_("Snapshots saved while the shipped translator trained. At each step it got this "
                               "share of held-out sentences right: {shares}.").format(
                            shares=", ".join(f"{s}: {m:.0%}" for s, m in steps)))
    notices.show_notices()
    st.caption(using(step, last, f"{right[step]:.0%}", len(t.heads_off)))
    return step, snapshot_translator(step, t.loaded.translator)


def using(step: int, last: int, share: str, off: int) -> str:
    """"Using the model after 150 training steps (40% of held-out sentences right), with 2 heads switched off."."""
    if step == last and not off:
        return _("Using the trained model ({share} of held-out sentences right).").format(share=share)
    if step == last:
        return ngettext("Using the trained model ({share} of held-out sentences right), with {n} head switched off.",
                        "Using the trained model ({share} of held-out sentences right), with {n} heads switched off.",
                        off).format(share=share, n=off)
    if not off:
        return _("Using the model after {step} training steps ({share} of held-out sentences right).").format(
            step=step, share=share)
    return ngettext("Using the model after {step} training steps ({share} of held-out sentences right), with {n} head "
                    "switched off.", "Using the model after {step} training steps ({share} of held-out sentences "
                    "right), with {n} heads switched off.", off).format(step=step, share=share, n=off)


def reference(t: Translate) -> tuple[int, ...] | None:
    """The reference's word ids: a typed English text (?tgt=), else the correct translation; None without one."""
    label = (_("English reference (empty: the correct translation)") if t.reference is not None
             else _("English reference: what this text means (teacher forcing reads a correct translation)"))
    typed = state.text(label, "tgt", "", MAX_TEXT_CHARS, area=False,
                       placeholder=_("the correct translation: {english}").format(english=t.reference)
                       if t.reference is not None else _("e.g. I have a cat"))
    text = typed if typed.strip() else t.reference
    if text is None:
        return None
    target = t.loaded.target(text)
    limit = t.loaded.translator.max_positions - 1
    if len(target.ids) > limit:
        notices.notice(_("This reference has {n} words; the decoder reads at most {limit} (and `<bos>`), so teacher "
                       "forcing reads only the first {limit}.").format(n=len(english_tokens(text)), limit=limit))
    if target.unknown:
        notices.notice(unknown_notice(target.unknown, "word"))
    notices.show_notices()
    return target.ids


def with_room(step: int, model, src, decodings: int, fn, *args):
    """fn(*args) on a model thread, with room made in the budget first for `decodings` decodings of src (1, S)."""
    need = decodings * decoding_bytes(model.config, 1, src.size(1), model.max_positions, len(model.target))
    with budget().room(need, spare=(model_key(Choice(TRANSLATOR_KEY)), snapshot_key(step))):
        return on_model_thread(fn, *args)


def comparison(t: Translate, step: int, model, ref: tuple[int, ...]):
    """model.translator.teacher_forcing.Comparison of the source and the reference, computed once, then shared."""
    src = t.source.input_ids

    def compute():
        return with_room(step, model, src, 2, compare, model, src, list(ref), t.heads_off)  # two decodings

    key = ("translate", "teacher forcing", step, tuple(src[0].tolist()), ref, t.heads_off)
    return cached(key, compute, _("The translator"))


def words(ws) -> str:
    """Vocabulary words in italics, <bos> and <eos> as code: *I have a* ` <eos> `."""
    out = []
    for w in ws:
        if w.startswith("<"):
            out.append(plain(w))
        elif out and out[-1].endswith("*"):
            out[-1] = out[-1][:-1] + f" {w}*"
        else:
            out.append(f"*{w}*")
    return " ".join(out)


def story(c) -> str:
    """Where the two part, and what generation does after, in plain words."""
    k = c.first_divergence
    if k is None:
        return _("**They agree at every position.** Given the correct words before it, the model predicts each next "
                 "word; left to itself it writes the reference exactly, so it always reads what teacher forcing "
                 "reads. The trained model does this on nearly every sentence of its language: go back in training "
                 "with the slider, or switch heads off in the sidebar, to see them part.")
    read = words(c.forced.inputs[:k + 1])
    wrote = words(c.generated.chosen[k:k + 1]) or _("nothing more")
    correct = words(c.reference[k:k + 1])
    said = [_("**They part at position {position}.** Both have read the same words ({read}), so both choose {wrote} "
              "where the reference has {correct}: the model's first mistake, made under teacher forcing too.").format(
        position=k + 1, read=read, wrote=wrote, correct=correct)]
    later = range(k + 1, len(c.reference))
    if len(later) > 1:
        right = sum(c.forced.chosen[i] == c.reference[i] for i in later)
        said.append(_("Teacher forcing then reads the correct {correct} and goes on from the correct words: it gets "
                      "{right} of the {n} later positions right.").format(correct=correct, right=right, n=len(later)))
    elif later:
        said.append((_("Teacher forcing then reads the correct {correct} and goes on from the correct words: it gets "
                       "the last position right.") if c.forced.chosen[k + 1] == c.reference[k + 1] else
                     _("Teacher forcing then reads the correct {correct} and goes on from the correct words: it gets "
                       "the last position wrong.")).format(correct=correct))
    own = words(c.generated.chosen[k:])
    if c.generated.chosen[-1:] == ("<eos>",):
        said.append(_("Free generation reads its own word instead, a sentence no training step showed it, and writes "
                      "{own}.").format(own=own))
    else:
        said.append(_("Free generation reads its own word instead, a sentence no training step showed it, and writes "
                      "{own} … without ever writing `<eos>` (cut at its limit).").format(own=own))
    return " ".join(said)


def self_attention(c, config) -> None:
    left, right = st.columns([3, 1])
    layer, head, mean = layer_head(config.num_layers, config.nhead, _("Decoder layer"), config.num_layers - 1,
                                   mean=True, containers=(right, right, right))
    which = which_heads(layer, head, mean)
    shown = pick(c.forced.self_attention, layer, head, mean)  # (T, T), NaN above the diagonal
    with left:
        show_chart(heatmap_spec(shown, c.forced.inputs, c.forced.inputs,
                                _("Decoder self-attention (teacher forcing), {which}").format(which=which),
                                keys=_("key: English word read (earlier)"), queries=_("query: English word read")),
                   key="forcing-self")
    right.caption(_("All positions at once, in one pass: the causal mask (the empty upper triangle) is what keeps "
                    "each position from seeing the correct words it must predict."))


def section(t: Translate) -> None:
    step, model = pick_model(t)
    ref = reference(t)
    if ref is None:

        src = t.source.input_ids
        written = words_of(model, with_room(step, model, src, 1, generate, model, src, None, t.heads_off)[0])
        st.info(_("Teacher forcing reads a correct translation, shifted right, and this text is not a sentence of "
                  "the toy language, so the page knows none: type the English it means above. Free generation needs "
                  "none: it writes {words}.").format(words=words(written.split()) or _("(nothing)")),
                icon=":material/edit:")
        return
    c = comparison(t, step, model, ref)
    show_chart(forcing_grid(c.reference, c.forced.inputs, c.forced.chosen, c.forced.chosen_p, c.generated.inputs,
                            c.generated.chosen, c.generated.chosen_p, c.reference_p, c.first_divergence),
               key="forcing-grid")
    st.caption(_("Each column is one position. **Teacher forcing** (training): the decoder reads the whole "
                 "reference shifted right (`<bos>` first) in one pass under the causal mask and predicts the next "
                 "word at every position from the correct words before it. **Free generation** (translating): it "
                 "reads its own words, one at a time. Blue: the correct word; red: another one; yellow: generation "
                 "reads its own wrong word where teacher forcing reads the correct one. The small numbers are "
                 "probabilities."))
    st.markdown(story(c))
    st.caption(_("The training loss of this sentence, the mean of −log p(correct word) over its {n} positions: "
                 "{loss}.").format(n=len(c.reference), loss=f"{c.loss:.3f}"))
    self_attention(c, model.config)
