"""What every page that writes words one at a time shares (the Translate page, the Language model page): how the next
word is chosen (greedy, sampling with temperature, top-k, top-p and a seed, or a beam search) bound to the link, the
formula beside the temperature, and the step controls (previous / play / next and the step slider, ?step=)."""
import time
from dataclasses import dataclass

import streamlit as st

from locales import N_, _
from model.sampling import Sampling
from views.widgets import state

GREEDY, SAMPLE, BEAM = "greedy", "sample", "beam"
WAYS = {GREEDY: N_("Greedy"), SAMPLE: N_("Sampling"), BEAM: N_("Beam search")}
# a sampling's description by its cuts (top-k, top-p): each a whole phrase
SAMPLINGS = {(False, False): N_("sampling, T = {temperature}, seed {seed}"),
             (True, False): N_("sampling, T = {temperature}, top-k {top_k}, seed {seed}"),
             (False, True): N_("sampling, T = {temperature}, top-p {top_p}, seed {seed}"),
             (True, True): N_("sampling, T = {temperature}, top-k {top_k}, top-p {top_p}, seed {seed}")}
TOP_WORDS = 10  # candidates shown for the next word
# model.sampling.Sampling: softmax(z / T)
TEMPERATURE_FORMULA = r"p_i = \frac{e^{z_i / T}}{\sum_j e^{z_j / T}}"
PLAY_EVERY = 1.0  # seconds per step while playing


@dataclass(frozen=True)
class Way:
    """How the next word is chosen."""

    kind: str = GREEDY
    temperature: float = 1.0
    top_k: int = 0  # 0: no cut
    top_p: float = 1.0  # 1: no cut
    seed: int = 0
    beam: int = 4

    def sampling(self):
        return Sampling(self.temperature, self.top_k or None, None if self.top_p >= 1 else self.top_p, self.seed)

    def describe(self) -> str:
        """How the words were chosen, in the session's language."""
        if self.kind == GREEDY:
            return _("greedy: the most likely word at each step")
        if self.kind == BEAM:
            return _("beam search, {n} prefixes kept").format(n=self.beam)
        return _(SAMPLINGS[bool(self.top_k), self.top_p < 1]).format(
            temperature=f"{self.temperature:g}", top_k=self.top_k, top_p=f"{self.top_p:g}", seed=self.seed)


def way_controls(ways=tuple(WAYS), top_k_most: int = 20) -> Way:
    """How the next word is chosen (?decode=, and its settings bound to the URL), with the formula it uses. ways: the
    kinds offered (a language model here has no beam search)."""
    labels = {way: _(WAYS[way]) for way in ways}  # translated now: Streamlit formats them again later
    kind = state.choice(_("Next word by"), "decode", list(ways), GREEDY, widget="segmented_control",
                        format_func=labels.__getitem__)
    if kind == GREEDY:
        return Way()
    if kind == BEAM:
        return Way(BEAM, beam=state.int_slider(_("Beam width (prefixes kept)"), "beam", 2, 8, 4))
    row = st.columns(4)
    temperature = state.float_slider(_("Temperature T"), "temperature", 0.1, 3.0, 1.0, container=row[0], step=0.1)
    row[0].latex(TEMPERATURE_FORMULA)  # under its slider: what T does to the scores
    top_k = state.int_slider(_("top-k (0: every word)"), "top_k", 0, top_k_most, 0, container=row[1])
    top_p = state.float_slider(_("top-p (1: every word)"), "top_p", 0.05, 1.0, 1.0, container=row[2], step=0.05)
    seed = state.int_slider(_("Seed"), "draw", 0, 99, 0, container=row[3],
                            help=_("The same seed draws the same words: a sampled text can be shown again."))
    st.caption(_("z: the decoder's score of each word. T > 1 flattens the distribution, T < 1 sharpens it (T → 0 is "
                 "greedy). Then only the top-k most likely words are kept, then the fewest whose probabilities reach "
                 "top-p, and the kept ones are divided by their sum."))
    return Way(SAMPLE, round(temperature, 2), top_k, round(top_p, 2), seed)


def which_heads(layer: int, head: int, mean: bool) -> str:
    """"layer 1, head 3" or "layer 1, mean of heads": which map a chart shows."""
    if mean:
        return _("layer {layer}, mean of heads").format(layer=layer)
    return _("layer {layer}, head {head}").format(layer=layer, head=head)


def _move(delta: int, last: int) -> None:
    st.session_state["step"] = min(max(st.session_state.get("step", 0) + delta, 0), last)


def _advance(last: int, playing: str) -> None:
    """While playing: one step further each PLAY_EVERY seconds; at the end, stop (a full rerun leaves the timer)."""
    now = time.monotonic()
    if now - st.session_state.get("_play_at", 0.0) < PLAY_EVERY * 0.8:  # a widget's rerun, not the timer's
        return
    st.session_state["_play_at"] = now
    if st.session_state.get("step", 0) >= last:
        st.session_state[playing] = False
        st.rerun()
    _move(1, last)


def step_controls(last: int, playing_key: str) -> int:
    """Previous / play / next and the step slider (?step=). playing_key: the session key that says the page's step
    part is playing (its fragment then reruns by itself every PLAY_EVERY seconds)."""
    playing = bool(st.session_state.get(playing_key))
    if playing:
        _advance(last, playing_key)
    row = st.container(horizontal=True, vertical_alignment="bottom")
    row.button(_("Previous"), icon=":material/skip_previous:", on_click=_move, args=(-1, last), disabled=playing)
    if row.button(_("Pause") if playing else _("Play"), icon=":material/pause:" if playing else ":material/play_arrow:",
                  help=_("One step every {seconds} s, to the end").format(seconds=f"{PLAY_EVERY:g}")):
        if not playing and st.session_state.get("step", 0) >= last:
            st.session_state["step"] = 0
        st.session_state[playing_key] = not playing
        st.session_state["_play_at"] = time.monotonic()
        st.rerun()  # the whole page: the part is then drawn in the fragment that reruns by itself
    row.button(_("Next"), icon=":material/skip_next:", on_click=_move, args=(1, last), disabled=playing)
    return state.int_slider(_("Step"), "step", 0, last, 0, container=row, disabled=playing)
