"""Masks: which keys each query may see, the attention under that mask, and what the mask changed."""
import numpy as np
import streamlit as st

from locales import N_, _
from model.family import Capability
from model.masks import CAUSAL, CAUSAL_PADDING, CUSTOM, MASK_KINDS, NO_MASK, PADDING, pads
from runtime.runs import Mask
from views.charts.mounted import show_chart
from views.shell import lecture
from views.shell.frame import Page
from views.shell.navigation import link_to
from views.shell.reading import run as run_of
from views.widgets import downloads, notices, state
from views.widgets.pickers import first_head, source_of
from viz.attention import heatmap_spec
from viz.labels import token_label
from viz.masks import blocked_from_additive, mask_spec, masked_difference_spec

KIND_LABELS = {NO_MASK: N_("None"), CAUSAL: N_("Causal"), PADDING: N_("Padding"), CUSTOM: N_("Custom"),
               CAUSAL_PADDING: N_("Causal + padding")}
MAP_LABELS = {"attention": N_("Attention with the mask"), "difference": N_("Masked minus unmasked"),
              "mask": N_("The mask")}
MAX_EXTRA_PADDING = 32  # the padding slider reaches this many [PAD] tokens past the sentence
MAX_TOKENS_FOR_ALL = 256  # above this, the page shows one of its three (T, T) maps at a time (at most 1 MB a page)


def intro() -> None:
    """How a mask enters attention, in PyTorch's conventions."""
    st.latex(r"\mathrm{Attention}(Q,K,V)=\mathrm{softmax}\!\left(\frac{QK^\top}{\sqrt{d_k}}+M\right)V,"
             r"\qquad M_{ij}\in\{0,\,-\infty\}")
    st.caption(_("M_ij = 0 where query i may see key j, and −∞ where the mask blocks it."))
    with st.expander(_("How PyTorch reads a mask")):
        st.markdown(_(
            "- A **bool** mask (`attn_mask`, `key_padding_mask` of `nn.MultiheadAttention`) is `True` where "
            "attention is **blocked**: it becomes $-\\infty$ in $M$.\n"
            "- A **float** mask is **added** to the scaled scores as it is: `0` lets through, `-inf` blocks, "
            "any other number biases the score.\n"
            "- $e^{-\\infty}=0$, so a blocked key gets probability exactly 0 and the rest of the row is "
            "renormalised to sum to 1.\n"
            "- Hugging Face's `attention_mask` is the opposite way round: `1` = real token, `0` = padding. "
            "BERT adds the dtype's minimum (about $-3.4\\times10^{38}$) instead of $-\\infty$; "
            "the result is the same.\n"
            "- A **causal** mask blocks keys after the query ($j>i$); a **key-padding** mask blocks the `[PAD]` "
            "columns for every query; merged, the two are simply added.\n"
            "- A row with *every* key blocked has nothing to normalise: PyTorch's `scaled_dot_product_attention` "
            "(and this model) then gives that query zero attention instead of NaN."))


def choose_mask(tokens: tuple[str, ...], max_positions: int, pad: str = "[PAD]") -> Mask:
    """The mask kind and its settings (padding length, blocked keys), all bound to the URL. pad: the model's
    padding token."""
    where = lecture.place() or st  # a projector: the settings in the sidebar
    kind = state.choice(_("Mask"), "mask", MASK_KINDS, CAUSAL, widget="segmented_control", container=where,
                        format_func=lambda k: _(KIND_LABELS[k]) if k in KIND_LABELS else k)
    pad_to, blocked = 0, ()
    T = len(tokens)
    if pads(kind):
        high = min(max_positions, T + MAX_EXTRA_PADDING)
        pad_to = state.int_slider(_("Pad the sentence to (tokens)"), "pad_to", T, high, min(high, T + 8),
                                  container=where)
        if pad_to <= T:
            where.info((_("The sentence has {T} tokens (the model reads at most {most}): no {pad} is added, so padding "
                       "masks nothing.") if T >= max_positions else
                     _("The sentence has {T} tokens (move the slider past it to add {pad} tokens): no {pad} is "
                       "added, so padding masks nothing.")).format(T=T, most=max_positions, pad=pad))
    if kind == CUSTOM:
        blocked = tuple(sorted(state.int_list(_("Key tokens to block"), "blocked", range(T),
                                              lambda i: token_label(tokens, i), container=where)))
        if not blocked:
            where.info(_("Pick key tokens to block: no query will be able to attend to them."))
    return Mask(kind, pad_to, blocked)


def does_nothing(mask: Mask, T: int) -> bool:
    """True when the mask blocks nothing, so the unmasked run can be reused (no second forward pass)."""
    return (mask.kind == NO_MASK or (mask.kind == CUSTOM and not mask.blocked)
            or (mask.kind == PADDING and mask.pad_to <= T))


def masked_difference(masked: np.ndarray, unmasked: np.ndarray) -> np.ndarray:
    """(Tm, Tm) masked minus (T, T) unmasked probabilities over the first T tokens; NaN where padding was added."""
    T = unmasked.shape[0]
    diff = np.full(masked.shape, np.nan, dtype=np.float32)  # (Tm, Tm)
    diff[:T, :T] = masked[:T, :T] - unmasked
    return diff


def explain_difference(container, diff: np.ndarray, T: int, Tm: int, pad: str = "[PAD]") -> None:
    """The largest change and how to read the difference map."""
    container.metric(_("Largest change |Δp| over the sentence's tokens"), f"{float(np.nanmax(np.abs(diff))):.2g}")
    container.markdown(
        _("Blue: attention the mask took away (a blocked key loses all of it); orange: attention that moved to the "
          "keys still visible. From the second layer on, a mask also changes each layer's input, so visible "
          "cells move too."))
    if Tm > T:
        container.markdown(
            _("The unmasked baseline is the sentence without padding ({T} tokens), so the {added} `{pad}` rows and "
              "columns have no counterpart and are left blank. Over the real tokens the padding mask makes the "
              "padding invisible: with padding alone the change is 0 (up to rounding).").format(
                T=T, added=Tm - T, pad=pad))


def view(page: Page) -> None:
    """The mask's settings, its matrix, the attention under it and what it changed, the downloads."""
    plain = page.run  # no mask: the baseline, and the sentence's tokens
    facts = page.model().facts
    source = source_of(page.choice.key)
    if source is not None and source.can(Capability.TRANSLATION) and not lecture.on():
        translator_note()
    if facts.can(Capability.CAUSAL):
        causal_model_note()
    mask = choose_mask(plain.tokens, facts.max_positions, pad_name(facts))
    run = plain if does_nothing(mask, len(plain.tokens)) else run_of(page.choice, page.text, mask)

    first = first_head(page.choice, run.num_layers, run.num_heads)
    col1, col2 = lecture.controls(2)
    layer = state.int_slider(_("Layer"), "layer", 0, run.num_layers - 1, first[0], container=col1)
    head = state.int_slider(_("Head"), "head", 0, run.num_heads - 1, first[1], container=col2)
    big_map = "all"
    if lecture.on():  # a projector: one map at a time, the whole width
        big_map = state.choice(_("Map"), "mask_map", ("attention", "difference", "mask"), "attention",
                               widget="radio", format_func=lambda m: _(MAP_LABELS[m]), container=col1)
    elif len(run.tokens) > MAX_TOKENS_FOR_ALL:  # the mask too: (T, T) bytes is 0.38 MB on the wire at 512 tokens
        big_map = state.choice(_("More than {n} tokens: one map at a time, so the page stays light").format(
                                   n=MAX_TOKENS_FOR_ALL),
                               "mask_map", ("attention", "difference", "mask"), "attention", widget="radio",
                               horizontal=True, format_func=lambda m: _(MAP_LABELS[m]), container=col1)
    notices.show_notices()
    maps(plain, run, mask, layer, head, big_map)


def pad_name(facts) -> str:
    return (facts.special_tokens.pad or ("[PAD]", 0))[0]


def translator_note() -> None:
    """What the masks do to the translator: its encoder read every Chinese character in training (no mask but
    its padding); its decoder always read with the causal mask."""
    st.info(_("The translator's **encoder**: its self-attention over the Chinese characters, with the mask you "
              "pick. It was trained without a mask (only `<pad>` is blocked), so each character may see every other; "
              "*Causal* shows what it would see reading like the decoder, which always reads its English words "
              "with the causal mask: each word may see only the words before it."), icon=":material/translate:")
    st.page_link(link_to("encoder-decoder"), label=_("The translator's decoder, causal mask and cross-attention"),
                 icon=":material/arrow_forward:")


def maps(plain, run, mask: Mask, layer: int, head: int, big_map: str) -> None:
    """The mask matrix, the attention under it, masked minus unmasked, and the downloads of one head."""
    T, Tm = len(plain.tokens), len(run.tokens)
    additive = run.mask  # the same in every layer
    blocked = blocked_from_additive(None if additive is None else additive.numpy(), Tm)  # (Tm, Tm)
    probs = run.attentions[layer, head]  # (Tm, Tm), 0 at blocked cells
    diff = masked_difference(probs, plain.attentions[layer, head])

    empty_rows = np.flatnonzero(blocked.all(axis=1))
    if len(empty_rows):
        st.warning(_("{n} of {T} queries have every key blocked, so there is nothing to normalise: their rows are "
                     "empty (zero attention, as in PyTorch's scaled_dot_product_attention).").format(
                       n=len(empty_rows), T=Tm))

    left, right = lecture.charts_row(2)
    if big_map in ("all", "mask"):
        show_chart(mask_spec(blocked, run.tokens, title=_("Mask: {kind}").format(kind=_(KIND_LABELS[mask.kind]))),
                   key="mask",
                   container=left)
    left.caption(_("{blocked} of {cells} cells blocked · dark = the query (row) may not see the key (column).").format(
        blocked=f"{int(blocked.sum()):,}", cells=f"{Tm * Tm:,}"))
    if big_map in ("all", "attention"):
        show_chart(heatmap_spec(np.where(blocked, np.nan, probs), run.tokens, run.tokens,
                                title=_("Attention with the mask · layer {layer}, head {head}").format(
                                    layer=layer, head=head)), key="attention",
                   container=right)
        right.caption(_("Blocked cells are gaps; each row still sums to 1 over the keys it may see."))
        left, right = lecture.charts_row(2)
    if big_map in ("all", "difference"):
        show_chart(masked_difference_spec(diff, run.tokens, run.tokens, title=_("Masked minus unmasked attention")),
                   key="difference", container=right)
        explain_difference(left, diff, T, Tm, run.tokens[-1])
    st.caption(_("{Tm} tokens ({T} from the sentence) · {layers} layers × {heads} heads · {model}").format(
        Tm=Tm, T=T, layers=run.num_layers, heads=run.num_heads, model=run.label))

    c1, c2 = st.columns(2)
    downloads.button(_("Download this masked map (CSV)"), lambda: downloads.head_csv(np.asarray(probs), run.tokens),
                     f"masked_attention_{mask.kind}_layer{layer}_head{head}.csv", "text/csv", container=c1)
    downloads.trace_button(run, layer, masked=True, container=c2)


def causal_model_note() -> None:
    """A causal language model reads with its causal mask always on: what a page's mask adds is on top of it."""
    st.info(_("This model is a causal language model (a GPT, a Llama): its **causal mask is always on**, whatever "
              "you pick here. Each token sees itself and the tokens before it, never a later one, because it is "
              "trained to write the next one. *None* and *Causal* are the same map; *Padding* and *Custom* block "
              "keys on top of it."), icon=":material/block:")
