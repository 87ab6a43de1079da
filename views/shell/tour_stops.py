"""The guided tour's stops: the tutorials' order, one stop per page, each with its state preset and a few sentences;
the link of a stop, and the banner its page shows (the page frame draws it on every page). The Tour page itself, the
list of stops, is views/pages/tour.py."""
from dataclasses import dataclass, field
from urllib.parse import urlencode, urlsplit

import streamlit as st

from locales import N_, _
from model.analysis.showcase import PROBES, SHOWCASE
from model.kinds import SourceKey
from views.shell.markdown import code
from views.shell.navigation import link_to
from views.shell.registry import by_path
from views.widgets.notices import notice

NAME = "tour"  # ?tour=k: the stop this page is (1-based)
_ARRIVED = "_tour_arrived"  # session: the stop whose state was last applied
_SENTENCE = PROBES[0][0]  # the default sentence: `it` refers to `animal`
_LAYER, _HEAD = SHOWCASE["all-MiniLM-L6-v2"]  # the head measured best at it -> animal
_IT = 10  # the token `it` in _SENTENCE ([CLS] the animal didn ' t cross the street because it ...)
_GPT_PROMPT = "the teacher saw two red birds at school . the teacher saw"  # a sentence, then its start again


@dataclass(frozen=True)
class Stop:
    path: str  # the page (views/shell/registry.py)
    title: str  # N_(): shown with _()
    text: str  # N_(): two or three sentences of what to see
    params: dict = field(default_factory=dict)  # the state the page opens with


# MiniLM at its showcase head
_SHOWCASE = {"model": SourceKey.MINILM, "text": _SENTENCE, "layer": _LAYER, "head": _HEAD}
STOPS: tuple[Stop, ...] = (
    Stop("positional", N_("Embeddings and positional encoding"),
         N_("A token becomes a vector, its embedding. Attention has no sense of order, so a position vector is "
            "added to it: each row here is a position, each column a dimension, sines and cosines of falling "
            "frequency. Nearby positions get similar vectors."),
         {"model": SourceKey.MINILM}),
    Stop("heatmap", N_("Dot-product attention"),
         N_("Each token's query is compared with every token's key by a dot product, and the softmax turns each "
            "row of scores into weights that sum to 1. In this head the row of `it` puts most of its weight on "
            "`animal`: the word it refers to."),
         _SHOWCASE),
    Stop("softmax", N_("Scaling and softmax"),
         N_("One row, step by step: the dot products, divided by √d_k, the mask added, and the softmax. Move the "
            "temperature: T > 1 flattens the row, T < 1 sharpens it, T = 1 is the model."),
         {**_SHOWCASE, "query": _IT}),
    Stop("masks", N_("Masks"),
         N_("A mask blocks keys before the softmax. The causal mask lets each token see only itself and the tokens "
            "before it, as a decoder must: the blocked cells are empty, and each row's weight goes to the keys "
            "left."),
         {**_SHOWCASE, "mask": "causal"}),
    Stop("all-heads", N_("Multi-head attention"),
         N_("Every head of every layer at once. Each head learns its own way of looking: at the next token, the "
            "previous one, the [SEP] token, the word a pronoun refers to. Click a tile to see it large."),
         _SHOWCASE),
    Stop("steps", N_("Add & Norm and the feed-forward network"),
         N_("One encoder layer, every tensor on the way. Attention's output is added to its input and normalized "
            "(Add & Norm); then every token goes through the same two-layer feed-forward network, and Add & Norm "
            "again."),
         _SHOWCASE),
    Stop("architecture", N_("The encoder"),
         N_("Stack that layer N times and you have the encoder. Here are its parameters and its FLOPs, module by "
            "module, and the shape of every tensor for your sentence."),
         {}),
    Stop("encoder-decoder", N_("The decoder and cross-attention"),
         N_("The decoder reads the translation so far with masked self-attention, then looks at the encoder's "
            "output with cross-attention: each English word finds the Chinese characters it comes from."),
         {"model": SourceKey.TRANSLATOR, "src": "我有一只猫"}),
    Stop("translate", N_("Translating 我有一只猫"),
         N_("Step through the decoding: at each step the decoder reads the words written so far, looks at the "
            "source, and the softmax over the vocabulary chooses the next word: I, have, a, cat."),
         {"src": "我有一只猫", "part": "steps", "step": 0}),
    Stop("language-model", N_("A language model writes the next word"),
         N_("A GPT is a decoder alone: it reads the words so far with causal self-attention and scores every word "
            "of its vocabulary for the next one. Press Next: it writes a word, reads it, and goes on. The outlined "
            "row is the word just read; the bars are the next word's probabilities."),
         {"model": SourceKey.GPT, "part": "next", "prompt": _GPT_PROMPT, "step": 0}),
    Stop("language-model", N_("An induction head copies from context"),
         N_("Twelve random words, then the same twelve again: the first copy cannot be predicted, the second almost "
            "always is. A head in layer 0 looks at the previous word; a head in layer 1 uses that to look at the "
            "word after the earlier occurrence of the current one, and copies it: the stripe below the diagonal. "
            "Switch it off in the sidebar and copying falls."),
         {"model": SourceKey.GPT, "part": "induction", "source": "probe"}),
    # then the modern model: the same ideas in a real LLM
    Stop("language-model", N_("Induction heads in a real LLM"),
         N_("SmolLM2-135M-Instruct, 30 layers of 9 heads, on the same kind of probe. Below the maps, every head's "
            "previous-token and induction score: the toy GPT's two-layer circuit is spread over the middle layers "
            "here. Switch the strongest induction heads off and copying collapses; as many random heads cost less."),
         {"model": SourceKey.SMOLLM2, "part": "induction", "source": "probe"}),
    Stop("ask", N_("Ask a real LLM"),
         N_("Ask SmolLM2 a question and watch the answer appear token by token. Token 5 writes Paris: layer 23 "
            "head 4 gives 0.60 of its attention to France, while most heads look at the first token. Pick another "
            "token, or click a question word's button to open the head that used it most."),
         {"model": SourceKey.SMOLLM2, "q": "What is the capital of France?", "part": "look", "step": 5, "layer": 23,
          "head": 4}),
    Stop("ask", N_("The attention sink"),
         N_("Many heads park their attention on the first token. Switch on the eviction experiment: with the first "
            "token evicted from the key/value cache, as StreamingLLM's window does, the answer falls apart; with an "
            "ordinary token evicted it hardly changes. Switch the strongest sink head off and see the answer change."),
         {"model": SourceKey.SMOLLM2, "q": "Why is the sky blue?", "part": "sink"}),
    Stop("modern", N_("From 2017 to today"),
         N_("The tutorials' model adds a position vector to x; SmolLM2 rotates q and k instead (RoPE). Take its own "
            "query of `it` and key of `animal` and move both along the text: rotated, their score stays the same to "
            "the sixth decimal; with the table added it swings. The page's other parts: the three blocks side by "
            "side, RMSNorm, SwiGLU's gates, the key/value cache that grouped-query attention shrinks, and what each "
            "module costs."),
         {"part": "positions", "mtext": _SENTENCE, "query": 8, "key": 1, "layer": 13, "head": 8}),
)


def query_params(k: int, lang: str) -> dict[str, str]:
    """The link of stop k (1-based) as query parameters, in lang."""
    stop = STOPS[k - 1]
    return {**{name: str(value) for name, value in stop.params.items()}, NAME: str(k), "lang": lang}


def link(k: int, lang: str) -> str:
    """Stop k's whole link, to copy onto a slide: the app's address when the browser gave it, else from /."""
    parts = urlsplit(st.context.url or "")
    base = f"{parts.scheme}://{parts.netloc}" if parts.scheme and parts.netloc else ""

    path = STOPS[k - 1].path
    at = "" if by_path(path).default else path  # the default page is served at /, not at /heatmap
    return f"{base}/{at}?{urlencode(query_params(k, lang))}"


def stop_here(path: str) -> int | None:
    """The stop (1-based) this page is, from ?tour=: None when the link has none, or names another page's stop."""
    raw = st.query_params.get("tour")  # NAME, said literally: tests/views/test_hostile_input.py reads it
    if raw is None:
        return None
    if not raw.isdigit() or not 1 <= int(raw) <= len(STOPS):

        notice(_("Ignored {param} in the link: the tour has stops 1 to {n}.").format(
            param=code(f"{NAME}={raw[:20]}"), n=len(STOPS)))
        return None
    k = int(raw)
    return k if STOPS[k - 1].path == path else None


def _nav(k: int, lang: str, container, stacked: bool = False) -> None:
    left, middle, right = [container] * 3 if stacked else container.columns(3)
    if k > 1:
        left.page_link(link_to(STOPS[k - 2].path), label=_("Previous: {title}").format(title=_(STOPS[k - 2].title)),
                       icon=":material/arrow_back:", query_params=query_params(k - 1, lang))
    middle.page_link(link_to("tour"), label=_("All stops of the tour"), icon=":material/route:",
                     query_params={"lang": lang})
    if k < len(STOPS):
        right.page_link(link_to(STOPS[k].path), label=_("Next: {title}").format(title=_(STOPS[k].title)),
                        icon=":material/arrow_forward:", query_params=query_params(k + 1, lang))


def _arrive(k: int) -> None:
    """On arriving at stop k (its link opened, or Previous / Next from another stop, which may be on the same page), the
    stop's state from its link wins over what this session's widgets hold: two stops on one page differ only in it."""
    if st.session_state.get(_ARRIVED) == k:
        return
    st.session_state[_ARRIVED] = k
    for name in STOPS[k - 1].params:
        st.session_state.pop(name, None)  # views.widgets.state then reads it from the link


def banner(path: str, lang: str, where=st) -> None:
    """Above a page opened from the tour (or in `where`, the sidebar in lecture mode): the stop, what to look at,
    previous / next, and its link."""
    k = stop_here(path)
    if k is None:
        st.session_state.pop(_ARRIVED, None)  # off the tour: a stop's link opened later applies its state again
        return
    stop = STOPS[k - 1]
    _arrive(k)
    box = where.container(border=True)
    box.markdown(_("**Tour, stop {k} of {n}: {title}**").format(k=k, n=len(STOPS), title=_(stop.title)))
    box.markdown(_(stop.text))
    _nav(k, lang, box, stacked=where is not st)
    with box.expander(_("This stop's link, for a slide")):
        st.code(link(k, lang), language=None, wrap_lines=True)
