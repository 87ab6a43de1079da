"""The line view: one layer's heads as lines from each query (left) to its keys (right); click a token, or pick it,
to bring out its lines and its row in the heatmap beside them."""
import functools
import html
import io

import numpy as np
import streamlit as st

from locales import _, ngettext
from views.charts.mounted import clicked, show_chart
from views.shell import lecture
from views.shell.frame import Page
from views.widgets import downloads, notices, special_tokens, state
from views.widgets.pickers import first_head
from viz.attention import heatmap_spec
from viz.compare import outlined
from viz.labels import long_text_labels, token_label
from viz.lines import MIN_WEIGHT, lines_of, lines_spec

TOKENS_CURVE = -2  # the left column of tokens is the figure's second trace from the end


def pick_query(figure_traces: int, tokens: int) -> None:
    """on_click: a click on a token of the left column selects it as the query (a click elsewhere does nothing)."""
    click = clicked("lines")
    if click is not None and click[0] == figure_traces + TOKENS_CURVE and 0 <= click[1] < tokens:
        st.session_state["query"] = click[1]


def npz_of(tokens, layer: int, drawn: dict) -> bytes:
    out = io.BytesIO()
    arrays = {"tokens": np.array(tokens, dtype=str), "layer": layer, "heads": np.array(sorted(drawn))}
    for h, (queries, keys, weights) in drawn.items():
        arrays.update({f"head{h}_query": queries, f"head{h}_key": keys, f"head{h}_weight": weights})
    np.savez_compressed(out, **arrays)
    return out.getvalue()


def csv_of(tokens, drawn: dict) -> bytes:
    lines = [downloads.BOM + "head,query,query_token,key,key_token,weight"]
    for h, (queries, keys, weights) in sorted(drawn.items()):
        lines += [f"{h},{q},{downloads.csv_cell(tokens[q])},{k},{downloads.csv_cell(tokens[k])},{w:.8g}"
                  for q, k, w in zip(queries.tolist(), keys.tolist(), weights.tolist())]
    return ("\n".join(lines) + "\n").encode("utf-8")


def view(page: Page) -> None:
    run = page.run
    first = first_head(page.choice, run.num_layers, run.num_heads)
    left, middle, right = lecture.controls([2, 4, 3])
    special = lecture.place() or st.container()  # under the row: the switch is too wide for a column of it
    layer = state.int_slider(_("Layer"), "layer", 0, run.num_layers - 1, first[0], container=left)
    heads = state.int_list(_("Heads"), "lines_heads", list(range(run.num_heads)),
                           lambda h: _("head {head}").format(head=h), container=middle,
                           default=tuple(range(run.num_heads)))
    shown = special_tokens.switch(run, special)
    tokens = shown.tokens(run.tokens)  # positions below are among the tokens shown
    t = len(tokens)
    query = state.choice(_("Query token"), "query", range(t), 1 if t > 2 and not shown.hides else 0, container=right,
                         format_func=lambda i: token_label(tokens, i))
    notices.show_notices()
    if not heads:
        st.info(_("Pick at least one head to draw its lines."))
        return

    maps = shown.maps(run.attentions[layer])  # (heads, T, T) as drawn
    drawn, k, share = lines_of(maps, heads)
    labels = long_text_labels(tokens)
    title = ngettext("Layer {layer}: {n} head, query {token} selected", "Layer {layer}: {n} heads, query {token} "
                     "selected", len(heads)).format(
        layer=layer, n=len(heads), token=html.escape(token_label(tokens, query), quote=False))
    figure = lines_spec(labels, drawn, query, title)
    chart, beside = lecture.charts_row(2)
    show_chart(figure, key="lines", container=chart, on_click=functools.partial(pick_query, len(figure.parts()[0]), t))
    chart.caption(_("Lines: for each query and head, its {k} strongest keys with a weight of at least {w}; they carry "
                    "{share} of these heads' attention. Click a token on the left to select it.").format(
        k=k, w=MIN_WEIGHT, share=f"{share:.0%}"))
    shown.say(chart)
    probs = maps[heads].mean(axis=0)
    which = (_("Layer {layer}, head {head}").format(layer=layer, head=heads[0]) if len(heads) == 1 else
             _("Layer {layer}, mean of the {n} heads drawn").format(layer=layer, n=len(heads)))
    show_chart(outlined(heatmap_spec(probs, labels, labels, title=which), query, t), key="lines_map", container=beside)

    downloads.button(_("Download the lines (NumPy .npz)"), lambda: npz_of(tokens, layer, drawn), "lines.npz",
                     "application/octet-stream")
    downloads.button(_("Download the lines (CSV)"), lambda: csv_of(tokens, drawn), "lines.csv", "text/csv")
