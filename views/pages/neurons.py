"""The neuron view: one query in one head, q against every key dimension by dimension: the products whose sum is
the dot product, the scaled score, the softmax (BertViz's neuron view, at any length)."""
import html
import io

import numpy as np
import streamlit as st

from locales import _
from model.analysis.neurons import NeuronView, of_trace
from runtime.runs import Run
from views.charts.mounted import show_chart
from views.shell import lecture
from views.shell.frame import Page
from views.widgets import downloads, notices, state
from views.widgets.pickers import first_head
from viz.labels import token_label
from viz.neurons import neuron_figure, query_figure

KEYS_SHOWN = 48  # past this many keys, the keys with the highest probabilities (in text order), unless asked for all


def shown_keys(view: NeuronView, every: bool) -> np.ndarray:
    """Positions of the keys drawn: all of them, or the KEYS_SHOWN most attended to, in text order."""
    if every or view.probs.size <= KEYS_SHOWN:
        return np.arange(view.probs.size)
    return np.sort(np.argsort(-np.nan_to_num(view.probs, nan=-1.0), kind="stable")[:KEYS_SHOWN])


def npz_of(run: Run, view: NeuronView, layer: int, head: int, query: int) -> bytes:
    out = io.BytesIO()
    np.savez_compressed(out, tokens=np.array(run.tokens, dtype=str), layer=layer, head=head, query=query,
                        q=view.q, k=view.k, q_times_k=view.product, dot=view.dot, scale=view.scale,
                        scaled=view.scaled, mask=view.mask, probs=view.probs)
    return out.getvalue()


def csv_of(run: Run, view: NeuronView) -> bytes:
    """One row per key: its dot product with the query, the scaled score and the probability."""
    lines = [downloads.BOM + "position,key,dot,scaled,probability"]
    lines += [f"{j},{downloads.csv_cell(token)},{view.dot[j]:.8g},{view.scaled[j]:.8g},{view.probs[j]:.8g}"
              for j, token in enumerate(run.tokens)]
    return ("\n".join(lines) + "\n").encode("utf-8")


def view(page: Page) -> None:
    run = page.run
    t = len(run.tokens)
    first = first_head(page.choice, run.num_layers, run.num_heads)
    left, middle, right = lecture.controls([2, 2, 3])
    layer = state.int_slider(_("Layer"), "layer", 0, run.num_layers - 1, first[0], container=left)
    head = state.int_slider(_("Head"), "head", 0, run.num_heads - 1, first[1], container=middle)
    it = run.tokens.index("it") if "it" in run.tokens else None
    query = state.choice(_("Query token"), "query", range(t), it if it is not None else (1 if t > 2 else 0),
                         container=right, format_func=lambda i: token_label(run.tokens, i))
    every = state.toggle(_("Every key"), "all_keys", False, container=lecture.place() or st,
                         help=_("Past {n} keys, the {n} the query attends to most are drawn, in the text's order; "
                                "this draws every key.").format(n=KEYS_SHOWN)) if t > KEYS_SHOWN else True
    notices.show_notices()

    attention = run.attention(layer)
    view_ = of_trace(attention, head, query)
    d_k = view_.q.size
    st.latex(r"s_j = \Big(\sum_{d=1}^{d_k} q_d\,k_{jd}\Big)\times " + f"{view_.scale:.4g}" +
             r",\qquad p_j = \mathrm{softmax}_j(s_j + M_j),\qquad d_k = " + str(d_k))
    who = html.escape(token_label(run.tokens, query), quote=False)
    positions = shown_keys(view_, every)
    keys = [token_label(run.tokens, j) for j in positions] if t > 64 else [run.tokens[j] for j in positions]
    title = _("Layer {layer}, head {head}: query {token} against every key").format(layer=layer, head=head, token=who)
    if positions.size < t:
        title = _("Layer {layer}, head {head}: query {token} against the {n} keys it attends to most").format(
            layer=layer, head=head, token=who, n=positions.size)
    show_chart(neuron_figure(view_, keys, positions, title), key="neurons")
    show_chart(query_figure(view_.q, _("The query's vector q ({token}), {d} dimensions").format(token=who, d=d_k)),
               key="neurons_q")
    scores = attention.scores[0, head, query].numpy()
    probs = attention.probs[0, head, query].numpy()
    st.caption(_("Each row of q ∘ k sums to that key's dot product. Recomputed here from the model's q and k, the "
                 "scores match the model's to max |difference| = {scores} and the softmax to {probs}.").format(
        scores=f"{np.max(np.abs(view_.scaled - scores)):.1e}",
        probs=f"{np.nanmax(np.abs(view_.probs - probs)):.1e}"))

    downloads.button(_("Download q, K, q ∘ K, the scores and the softmax (NumPy .npz)"),
                     lambda: npz_of(run, view_, layer, head, query), f"neurons_query{query}.npz",
                     "application/octet-stream")
    downloads.button(_("Download the scores and the softmax (CSV)"), lambda: csv_of(run, view_),
                     f"neurons_query{query}.csv", "text/csv")
