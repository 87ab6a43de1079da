"""Compare: two attention maps side by side and their difference. A second sentence, a second model, another layer
and head, or a mask; the same query row outlined in all three maps, and its three rows below."""
import html
import io

import numpy as np
import streamlit as st

from locales import N_, _
from model.analysis.compare import Alignment, align, difference
from model.family import Reads
from model.loading.sources import RANDOM_KEY, RandomConfig
from runtime.models import Choice, sources
from runtime.runs import Mask, Run
from views.charts.mounted import show_chart
from views.shell import lecture
from views.shell.frame import Page
from views.shell.markdown import code
from views.shell.reading import run as run_of
from views.widgets import downloads, link_writes, notices, special_tokens, state
from views.widgets.pickers import MAX_TEXT_CHARS, first_head, shown, shown_as, source_of
from viz.attention import heatmap_spec
from viz.compare import difference_spec, outlined
from viz.labels import long_text_labels, token_label
from viz.softmax import probability_bars

PAIRS = {"text": N_("Two sentences"), "model": N_("Two models"), "head": N_("Two layers or heads"),
         "mask": N_("With a mask")}
MASKS = {"causal": N_("causal (no later token)")}
MAX_TOKENS_FOR_ALL = 256  # above this, one of the three maps at a time (each is 0.5 MB at 512 tokens)
# B's sentence, by what the model reads: English; Chinese (the translator: a sentence of its own language,
# docs/toy-language.md); toy English (the toy GPT), written twice
SECOND = {Reads.TOKENIZER: "The animal didn't cross the road because it was too wide.", Reads.CHINESE: "我有一只狗",
          Reads.TOY_ENGLISH: "she likes old books . she likes old books"}


def second_run(page: Page, pair: str, controls) -> tuple[Run, str]:
    """Side B's run and what it is, as the sidebar or the row above the maps set it."""
    source = source_of(page.choice.key)
    if pair == "text":
        label = _("Second sentence (B)")
        reads = Reads.TOKENIZER if source is None else source.reads
        if reads == Reads.CHINESE:  # a Chinese B is kept apart (?src2=), as its A is (?src=)
            text = state.text(label, "src2", SECOND[reads], MAX_TEXT_CHARS, container=controls, height=80)
        else:
            text = state.text(label, "text2", SECOND[reads], MAX_TEXT_CHARS, container=controls, height=80)
        if not text.strip():
            st.info(_("Type a second sentence to compare with the first."))
            link_writes.stop()
        return run_of(page.choice, text), _("the second sentence")
    if pair == "model":
        offered = [s for s in sources()
                   if s.available and s.reads != Reads.CHINESE and s.key != page.choice.key]
        if not offered or (source is not None and source.reads == Reads.CHINESE):
            st.info(_("A second model reads the same sentence: the translator reads Chinese characters, which the "
                      "other models do not share. Pick another model in the sidebar to compare two models."))
            link_writes.stop()
        labels = {s.key: s.label for s in offered}
        key = state.choice(_("Second model (B)"), "model2", list(labels), offered[0].key, container=controls,
                           format_func=shown_as(labels))
        other = Choice(key, RandomConfig() if key == RANDOM_KEY else None)  # a random model's default settings
        return run_of(other, page.text), shown(labels[key])
    if pair == "mask":
        kind = state.choice(_("Mask of B"), "mask2", list(MASKS), "causal", container=controls,
                            format_func=lambda k: _(MASKS[k]))
        return run_of(page.choice, page.text, Mask(kind)), _(MASKS[kind])
    return page.run, _("another layer or head")


def npz_of(tokens_a, tokens_b, map_a, map_b, diff, alignment: Alignment) -> bytes:
    out = io.BytesIO()
    np.savez_compressed(out, a=map_a, b=map_b, difference=diff, tokens_a=np.array(tokens_a, dtype=str),
                        tokens_b=np.array(tokens_b, dtype=str), matched_a=alignment.a, matched_b=alignment.b)
    return out.getvalue()


def view(page: Page) -> None:
    run_a = page.run
    pair = state.choice(_("Compare"), "pair", list(PAIRS), "text", container=lecture.place() or st,
                        widget="segmented_control", format_func=lambda p: _(PAIRS[p]))
    controls = lecture.place() or st.container()
    run_b, what = second_run(page, pair, controls)
    first = first_head(page.choice, run_a.num_layers, run_a.num_heads)
    left, middle, right, query_box = lecture.controls(4)
    layer = state.int_slider(_("Layer"), "layer", 0, run_a.num_layers - 1, first[0], container=left)
    head = state.int_slider(_("Head"), "head", 0, run_a.num_heads - 1, first[1], container=middle)
    if pair == "head":
        layer_b = state.int_slider(_("Layer of B"), "layer2", 0, run_b.num_layers - 1, layer, container=right)
        head_b = state.int_slider(_("Head of B"), "head2", 0, run_b.num_heads - 1, (head + 1) % run_b.num_heads,
                                  container=right)
    else:
        layer_b, head_b = min(layer, run_b.num_layers - 1), min(head, run_b.num_heads - 1)
    mode = special_tokens.choose(controls)  # under what B is
    shown_a = special_tokens.of(run_a, mode)
    shown_b = shown_a if run_b is run_a else special_tokens.of(run_b, mode)  # two heads of one run: once
    tokens_a, tokens_b = shown_a.tokens(run_a.tokens), shown_b.tokens(run_b.tokens)  # positions below: among these
    alignment = align(tokens_a, tokens_b)
    t = len(tokens_a)
    query = state.choice(_("Query row"), "query", range(t), 1 if t > 2 and not shown_a.hides else 0,
                         container=query_box, format_func=lambda i: token_label(tokens_a, i))
    notices.show_notices()

    map_a = shown_a.maps(run_a.attentions[layer, head])
    map_b = shown_b.maps(run_b.attentions[layer_b, head_b])
    diff = difference(map_a, map_b, alignment)
    matched = {int(a): k for k, a in enumerate(alignment.a)}
    row_b = int(alignment.b[matched[query]]) if query in matched else None
    labels_a, labels_b = long_text_labels(tokens_a), long_text_labels(tokens_b)
    labels_d = [labels_a[i] for i in alignment.a]
    title_a = _("A: layer {layer}, head {head}").format(layer=layer, head=head)
    title_b = _("B ({what}): layer {layer}, head {head}").format(what=what, layer=layer_b, head=head_b)
    figures = {
        "a": outlined(heatmap_spec(map_a, labels_a, labels_a, title=title_a), query, t),
        "b": outlined(heatmap_spec(map_b, labels_b, labels_b, title=title_b), row_b, len(labels_b)),
        "difference": difference_spec(diff, labels_d, labels_d, _("B − A on the {m} tokens both have").format(
            m=alignment.size), matched.get(query)),
    }
    if not alignment.size:  # nothing to subtract: no empty map, no empty file
        del figures["difference"]
        st.info(_("A and B have no token in common, so there is no difference to show. Give B some of A's words."))
    shown = list(figures)
    if max(t, len(tokens_b)) > MAX_TOKENS_FOR_ALL:
        names = {"a": _("A"), "b": _("B"), "difference": _("B − A")}
        shown = [state.choice(_("Map"), "compare_map", list(figures), shown[-1], container=lecture.place() or st,
                              widget="segmented_control", format_func=lambda k: names[k],
                              help=_("Past {n} tokens one map at a time, so that the page stays light.").format(
                                  n=MAX_TOKENS_FOR_ALL))]
    for place, name in zip(lecture.charts_row(len(shown)), shown):
        show_chart(figures[name], key=f"compare_{name}", container=place)
    shown_a.say()
    if 0 < alignment.size < max(t, len(tokens_b)):
        st.caption(_("A has {a} tokens and B {b}; {m} of them are matched in order, and the difference is taken on "
                     "those rows and columns.").format(a=t, b=len(tokens_b), m=alignment.size))
    if row_b is None:
        st.caption(_("The query {token} of A has no match in B.").format(token=code(token_label(tokens_a, query))))
    else:
        keys = [tokens_a[i] for i in alignment.a]
        row = probability_bars(map_a[query][alignment.a], keys, _("Row {token}: A and B over the keys both have")
                               .format(token=html.escape(token_label(tokens_a, query), quote=False)),
                               compare=map_b[row_b][alignment.b], compare_name="B", name="A")
        show_chart(row, key="compare_row")

    downloads.button(_("Download A, B and B − A (NumPy .npz)"),
                     lambda: npz_of(tokens_a, tokens_b, map_a, map_b, diff, alignment), "compare.npz",
                     "application/octet-stream")
    matched_tokens = [tokens_a[i] for i in alignment.a]
    if alignment.size:
        downloads.button(_("Download B − A (CSV)"), lambda: downloads.head_csv(diff, matched_tokens),
                         "compare_difference.csv", "text/csv")
