"""From 2017 to today, its overview parts (views.pages.modern): the tutorials' encoder block, GPT-2's and the Llama
block side by side as diagrams (viz.blocks), and what each block's modules cost in four real configurations:
parameters, and FLOPs for one token at a chosen context (model.analysis.modern.Architecture). From configs only: no
weight is read, so both parts draw at once."""
import base64
import html
from collections.abc import Sequence

import streamlit as st

from locales import _
from model.analysis.modern import Architecture, architecture, architectures, translator_config
from views.charts.mounted import show_chart
from views.widgets import downloads, notices, state
from viz.architecture import human
from viz.blocks import boxes, diagram, svg
from viz.modern import shares_spec

CONTEXTS = (512, 2048, 8192)  # the keys one new token attends to, for the FLOPs


def drawn() -> list[tuple[str, int]]:
    """The three diagrams: the translator's encoder (the tutorials' 2017 block), GPT-2 small's, and SmolLM2's (or
    Llama-3-8B's, if SmolLM2 is not installed: the same block)."""
    shapes = architectures()
    gpt2 = next(a for a in shapes if a.decoder and a.position == "learned")  # GPT-2 small, always kept here
    llama = next(a for a in shapes if a.position == "rope")  # SmolLM2 first; Llama-3-8B's is kept here
    shown = ((_("2017: the tutorials' encoder"), _("the translator here"), architecture("2017", translator_config())),
             (_("2019: GPT-2"), gpt2.name, gpt2), (_("Today: the Llama block"), llama.name, llama))
    return [diagram(title, subtitle, boxes(a), a.layers) for title, subtitle, a in shown]


def blocks(page) -> None:
    notices.show_notices()
    diagrams = drawn()
    label = _("Three Transformer blocks side by side: 2017, GPT-2 and Llama")
    for column, one in zip(st.columns(len(diagrams)), diagrams):  # an <img> of each: st.html keeps no SVG element
        source = base64.b64encode(svg([one], label).encode("utf-8")).decode("ascii")
        column.html(f'<img src="data:image/svg+xml;base64,{source}" alt="{html.escape(label)}" style="width: 100%">')
    st.caption(_("Read from the top. Orange: attention; blue: the feed-forward; yellow: norms; grey: embeddings and "
                 "the output. A thick red outline: changed since 2017. ⊕ adds a sublayer's output to its input (the "
                 "residual connection, drawn on the left); the dashed frame is one block, repeated. Every number is "
                 "read from the model's config."))
    downloads.button(_("Download the diagrams (SVG)"), lambda: svg(diagrams, label).encode("utf-8"),
                     "modern_blocks.svg", "image/svg+xml")


def cost_rows(shapes: Sequence[Architecture], context: int) -> dict[str, list]:
    """The cost table's columns (headers in the current language): a block's parameters by module, its FLOPs for
    one token, the whole model's parameters; rounded (k, M, G: the CSV has them exact)."""
    columns = {_("model"): [], _("layers"): [], _("attention"): [], _("feed-forward"): [], _("norms"): [],
               _("FLOPs a token"): [], _("scores' share"): [], _("whole model"): []}
    for a in shapes:
        params, flops = a.block_params(), a.block_flops(context)
        values = [a.name, a.layers, human(params["attention"]), human(params["ffn"]), human(params["norms"]),
                  human(sum(flops.values())), f"{flops['scores'] / sum(flops.values()):.0%}",
                  human(sum(a.params().values()))]
        for column, value in zip(columns, values):
            columns[column].append(value)
    return columns


def costs_csv(shapes: Sequence[Architecture], context: int) -> bytes:
    lines = ["model,layers,attention_params,ffn_params,norm_params,projection_flops,score_flops,ffn_flops,"
             "whole_model_params,context"]
    for a in shapes:
        p, f = a.block_params(), a.block_flops(context)
        lines.append(f"{downloads.csv_cell(a.name)},{a.layers},{p['attention']},{p['ffn']},{p['norms']},"
                     f"{f['projections']},{f['scores']},{f['ffn']},{sum(a.params().values())},{context}")
    return downloads.csv_lines(lines)


def costs(page) -> None:
    context = state.choice(_("Context: the keys a new token attends to"), "context", CONTEXTS, 2048,
                           widget="segmented_control", format_func="{:,}".format)
    notices.show_notices()
    shapes = architectures()
    names = [a.name for a in shapes]
    params = [a.block_params() for a in shapes]
    flops = [a.block_flops(context) for a in shapes]
    left, right = st.columns(2)
    with left:
        show_chart(shares_spec(names, {_("attention"): ([p["attention"] for p in params], "#f4b183"),
                                       _("feed-forward"): ([p["ffn"] for p in params], "#9dc3e6"),
                                       _("norms"): ([p["norms"] for p in params], "#f6e08a")},
                               _("A block's parameters")), key="modern-params")
    with right:
        show_chart(shares_spec(names, {_("q, k, v, o projections"): ([f["projections"] for f in flops], "#f4b183"),
                                       _("scores and values mix"): ([f["scores"] for f in flops], "#fbd9b9"),
                                       _("feed-forward"): ([f["ffn"] for f in flops], "#9dc3e6")},
                               _("A block's FLOPs a token ({n} keys)").format(n=f"{context:,}")),
                      key="modern-flops")
    st.markdown(_("**A block's parameters** by module, its FLOPs for one token attending to {n} keys, and the whole "
                  "model's parameters:").format(n=f"{context:,}"))
    st.dataframe(cost_rows(shapes, context), hide_index=True, width="stretch")
    st.caption(_("From each model's config: attention 2·h·d·(n + g) (+ biases), the feed-forward 2·h·f (+ biases) or "
                 "SwiGLU's 3·h·f, a norm 2·h (LayerNorm) or h (RMSNorm). A token's FLOPs: 2 per multiply-add, the "
                 "projections' 2 × their parameters, the scores and the mix of values 4 × context × n × d. The whole "
                 "model adds the embeddings and the output; it matches each checkpoint's count."))
    downloads.button(_("Download the costs (CSV)"), lambda: costs_csv(shapes, context), "modern_costs.csv",
                     "text/csv")
