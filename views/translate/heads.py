"""Switch heads off: the translation of the source by the whole model and without the heads switched off in the
sidebar (?off=), the exact match on 200 fixed held-out sentences with those heads off, buttons for sets of heads,
and a ranking of single heads and sets by how far the exact match falls without each.

Scores are shared by every session: one per set of heads, in the budget (kind "ablation", a few KB each, capped
apart from the passes), and the ranking once per process.
"""
import difflib
import functools
import time

import streamlit as st

from locales import N_, _, ngettext
from model.translator import ablation
from model.translator.ablation import SEED, SENTENCES, head_id, head_sets, scoring_bytes, translations
from model.translator.decoding import generate, words_of
from model.translator.source import TRANSLATOR_KEY
from model.translator.vocabulary import same_translation
from runtime.budget import Kind
from runtime.memory import budget, shared_wait
from runtime.model_thread import on_model_thread
from runtime.models import Choice, model_key
from training.toy_language import sample
from views.shell.errors import cached, or_stop
from views.shell.markdown import plain
from views.translate.page import Translate, head_name
from views.widgets import heads_off as heads_off_widget

# (?off= set, button label): sets a lecturer switches off in one click; every head of them in ?off=
QUICK_SETS = (("cross.1.*", N_("Cross-attention, layer 1")), ("cross.*.*", N_("All cross-attention")),
              ("decoder.*.*", N_("All decoder self-attention")), ("encoder.*.*", N_("All encoder self-attention")))
# a set's name by its block, and whether it is one layer's heads (each a whole phrase)
SET_NAMES = {("encoder", False): N_("every encoder self-attention head"),
             ("encoder", True): N_("every encoder self-attention head of layer {layer}"),
             ("decoder", False): N_("every decoder self-attention head"),
             ("decoder", True): N_("every decoder self-attention head of layer {layer}"),
             ("cross", False): N_("every cross-attention head"),
             ("cross", True): N_("every cross-attention head of layer {layer}")}
RANKING_KEY = ("translate", "heads ranking")


@functools.cache
def held_out():
    """The fixed sentences every score is on: (Chinese texts, correct English), drawn once per process."""
    sentences = sample(ablation.SENTENCES, ablation.SEED, held_out=True)
    return tuple(s.chinese() for s in sentences), tuple(s.english() for s in sentences)


def set_label(name: str) -> str:
    """"cross.1.3" -> its head's name; "cross.1.*" -> "every cross-attention head of layer 1"; "cross.*.*"..."""
    block, layer, head = name.split(".")
    if head != "*":
        return head_name(name)
    return _(SET_NAMES[block, layer != "*"]).format(layer=layer)


def _with_room(model, sources, fn, *args):
    """fn(*args) on a model thread, with room made in the budget for decoding these sources first."""
    with budget().room(scoring_bytes(model, sources), spare=(model_key(Choice(TRANSLATOR_KEY)),)):
        return on_model_thread(fn, *args)


def score_of(model, heads: tuple):
    """model.translator.ablation.Score of the held-out sentences with `heads` off: computed once per set, then
    shared."""
    heads = tuple(sorted(heads))
    chinese, english = held_out()

    def compute():
        sources = ablation.sources_of(model, chinese)
        return _with_room(model, sources, ablation.score, model, sources, english, heads)

    return cached(("translate", "heads off", heads), compute, _("Scoring the translator"), kind=Kind.ABLATION)


def ranking(model) -> tuple[tuple, float]:
    """(every single head and set with its exact match, the lowest first; the seconds it took): once per process
    (pinned: a few hundred bytes), with a progress bar while the first session computes it."""
    sets = ablation.head_sets(model.config.num_layers, model.config.nhead)

    def build():
        bar, start = st.progress(0.0), time.perf_counter()
        ranked = ablation.rank(sets, lambda heads: score_of(model, heads).exact_match,
                               lambda i, s: bar.progress(i / len(sets), _(
                                   "Ranking the heads: {name} off ({i} of {n}), once for this server").format(
                                   name=s.name, i=i + 1, n=len(sets))))
        bar.empty()
        return tuple(ranked), time.perf_counter() - start

    return or_stop(_("Ranking the heads"), budget().get_or_build, RANKING_KEY, build, "ablation", 0,
                   lambda _: 0, True, shared_wait)


def _switch_off(names: list[str]) -> None:
    st.session_state[heads_off_widget.KEY] = names  # the sidebar's multiselect (views.widgets.heads_off), ?off=


def quick_buttons(t: Translate) -> None:
    """Buttons that set the sidebar's heads (and ?off=) to a whole set, or back to none; then the page reruns."""
    c = t.loaded.translator.config
    by_name = {s.name: [head_id(h) for h in s.heads] for s in head_sets(c.num_layers, c.nhead)}
    st.markdown(_("**Switch off every head of** (or pick heads in the sidebar, *Heads switched off*):"))
    row = st.container(horizontal=True)
    for name, label in QUICK_SETS:
        heads = by_name[name]
        if row.button(_(label), key=f"heads-off-{name}", on_click=_switch_off, args=(heads,),
                      help=ngettext("{n} head: {names}", "{n} heads: {names}", len(heads)).format(
                          n=len(heads), names=", ".join(heads))):
            st.rerun()
    if row.button(_("Switch every head back on"), key="heads-off-none", on_click=_switch_off, args=([],),
                  disabled=not t.heads_off, icon=":material/restart_alt:"):
        st.rerun()


def translate(model, src_ids, heads: tuple) -> str:
    return words_of(model, _with_room(model, src_ids, generate, model, src_ids, None, heads)[0])


def marked(words: list[str], against: list[str]) -> str:
    """The words as Markdown, those not in `against` (a word-level diff: inserted or replaced) in bold red."""
    kept = set()
    for block in difflib.SequenceMatcher(a=against, b=words, autojunk=False).get_matching_blocks():
        kept.update(range(block.b, block.b + block.size))
    shown = [plain(w) if i in kept else f":red[**{plain(w)}**]" for i, w in enumerate(words)]
    return " ".join(shown) or _("(nothing: it wrote {eos} first)").format(eos=plain("<eos>"))


# what the page says of the translations against the correct one: (whole model right, without the heads right or
# None when no head is off) -> the whole sentence
VERDICTS = {
    (True, None): N_("Against the correct translation, *{reference}*: the whole model's is right."),
    (False, None): N_("Against the correct translation, *{reference}*: the whole model's is wrong."),
    (True, True): N_("Against the correct translation, *{reference}*: the whole model's is right, the one without "
                     "those heads right."),
    (True, False): N_("Against the correct translation, *{reference}*: the whole model's is right, the one without "
                      "those heads wrong."),
    (False, True): N_("Against the correct translation, *{reference}*: the whole model's is wrong, the one without "
                      "those heads right."),
    (False, False): N_("Against the correct translation, *{reference}*: the whole model's is wrong, the one without "
                       "those heads wrong."),
}


def show_translations(t: Translate) -> None:
    model = t.loaded.translator
    whole = translate(model, t.source.input_ids, ())
    left, right = st.columns(2)
    left.markdown(_("**The whole model:** {words}").format(words=marked(whole.split(), whole.split())))
    off = None
    if t.heads_off:
        off = translate(model, t.source.input_ids, t.heads_off)
        n = len(t.heads_off)
        right.markdown(ngettext("**Without the {n} head switched off:** {words}",
                                "**Without the {n} heads switched off:** {words}", n).format(
            n=n, words=marked(off.split(), whole.split())))
        if off == whole:
            right.caption(_("The same translation: this sentence does not need those heads."))
    else:
        right.caption(_("No head is switched off: pick some in the sidebar or with a button above, and the "
                        "translation without them appears here."))
    if t.reference is not None:
        whole_right = same_translation(whole, t.reference)
        off_right = None if off is None else same_translation(off, t.reference)
        st.caption(_(VERDICTS[whole_right, off_right]).format(reference=t.reference))


def accuracy(t: Translate) -> None:
    """The exact match with the heads off beside the whole model's, and the sentences it now gets wrong."""
    model = t.loaded.translator
    whole = score_of(model, ())
    left, right = st.columns(2)
    left.metric(_("Exact match, whole model ({n} held-out sentences)").format(n=SENTENCES),
                f"{whole.exact_match:.1%}")
    st.caption(_("{n} sentences of the held-out split (the translator never trained on them), drawn with seed {seed} "
                 "and translated greedily in one batch; a sentence counts only if every word is right.").format(
        n=SENTENCES, seed=SEED))
    if not t.heads_off:
        return
    off = score_of(model, t.heads_off)
    right.metric(_("Exact match without those heads"), f"{off.exact_match:.1%}",
                 delta=_("{points} points").format(points=f"{100 * (off.exact_match - whole.exact_match):+.1f}"),
                 delta_color="normal")
    wrong = [i for i, ok in enumerate(off.right) if not ok]
    if wrong:
        chinese, english = held_out()
        written = translations(model, off)
        nothing = _("(nothing)")
        with st.expander(ngettext("The {n} sentence it gets wrong without them",
                                  "The {n} sentences it gets wrong without them", len(wrong)).format(n=len(wrong))):
            st.dataframe({_("Chinese"): [chinese[i] for i in wrong], _("correct"): [english[i] for i in wrong],
                          _("written without those heads"): [written[i] or nothing for i in wrong]},
                         hide_index=True, height=min(36 * (len(wrong) + 1) + 2, 400))


def ranking_table(t: Translate) -> None:
    st.header(_("Which heads matter"))
    ranked, seconds = ranking(t.loaded.translator)
    whole = score_of(t.loaded.translator, ()).exact_match
    singles = [(s, m) for s, m in ranked if len(s.heads) == 1]
    harmless = sum(m >= whole for __, m in singles)
    exact = _("exact match")
    st.dataframe({_("switched off"): [set_label(s.name) for s, __ in ranked],
                  _("heads"): [len(s.heads) for s, __ in ranked], exact: [m for __, m in ranked],
                  _("fall (points)"): [round(100 * (whole - m), 1) for __, m in ranked]},
                 hide_index=True, height=388,
                 column_config={exact: st.column_config.ProgressColumn(format="percent", min_value=0, max_value=1)})
    top, top_score = singles[0]
    st.caption(_("Every single head, every head of one block and layer, and every head of one block, ranked by the "
                 "exact match on the {n} sentences without them (worst first; computed once for this server, in "
                 "{seconds} s). {harmless} of the {singles} single heads change nothing: trained with dropout, the "
                 "model spreads what it needs over several heads, so one is rarely missed. The sets show where the "
                 "translator breaks.").format(n=SENTENCES, seconds=f"{seconds:.1f}", harmless=harmless,
                                             singles=len(singles)))
    if st.button(_("Switch off the single head that matters most: {head} ({score})").format(
            head=set_label(top.name), score=f"{top_score:.1%}"),
                 key="heads-off-top", on_click=_switch_off, args=([head_id(h) for h in top.heads],)):
        st.rerun()


def section(t: Translate) -> None:
    quick_buttons(t)
    show_translations(t)
    accuracy(t)
    ranking_table(t)
