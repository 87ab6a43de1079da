"""Rollout, flow and saliency: where each token's representation comes from, through every layer, and which input
tokens a chosen output is most sensitive to."""
import html
import io

import numpy as np
import streamlit as st
import torch

from locales import N_, _
from model.analysis.rollout import FLOW_MAX_TOKENS, TARGETS, flow_row, rollout, saliency
from runtime.budget import Kind
from runtime.model_thread import on_model_thread
from runtime.models import loaded_model
from runtime.runs import Run, on_maps
from views.charts.mounted import show_chart
from views.shell import lecture
from views.shell.errors import cached
from views.shell.frame import Page
from views.widgets import downloads, notices, state
from viz.attention import heatmap_spec
from viz.labels import token_label
from viz.rollout import saliency_bars
from viz.softmax import probability_bars

TARGET_NAMES = {"sentence": N_("the sentence vector (mean of the last layer's tokens)"),
                "token": N_("the query token's last-layer vector")}


def rollouts_of(run: Run) -> np.ndarray:
    """(layers, T, T): the rollout up to every layer, computed once per run and shared."""
    return cached(("rollout", run.key), lambda: on_maps(run, rollout), _("The rollout"),
                  kind=Kind.ATTRIBUTION)


def flow_of(run: Run, query: int, upto: int) -> np.ndarray:
    """On a model thread, as every computation of this page: at most as many at once as the cores hold."""
    return cached(("flow", run.key, query, upto), lambda: on_maps(run, flow_row, query, upto),
                  _("The flow"), kind=Kind.ATTRIBUTION)


def saliency_of(run: Run, target: str, token: int) -> tuple[np.ndarray, np.ndarray]:
    """Gradient x input on the model thread, once per (run, target, token): from the run's layer inputs when the run
    is the model's plain pass (no mask of the page's, no padding), as saliency's own first pass would make them."""
    def compute():
        model = loaded_model(run.key[0]).model
        inputs = run.hidden if run.plain else None
        return on_model_thread(saliency, model, torch.tensor([run.ids]), target, token, inputs)

    key = ("saliency", run.key, target, token if target == "token" else None)
    return cached(key, compute, _("The saliency"), kind=Kind.ATTRIBUTION)


def npz_of(run: Run, rollouts: np.ndarray, upto: int, query: int, flow, signed, norm, target: str) -> bytes:
    out = io.BytesIO()
    np.savez_compressed(out, tokens=np.array(run.tokens, dtype=str), rollout=rollouts[upto], layer=upto, query=query,
                        flow=np.array([], dtype=np.float32) if flow is None else flow, saliency=signed,
                        saliency_norm=norm, target=np.array(target))
    return out.getvalue()


def csv_of(run: Run, row, flow, signed, norm) -> bytes:
    """Per input token: the query's rollout row, its flow (empty beyond the flow's limit), the saliencies."""
    lines = [downloads.BOM + "position,token,rollout,flow,saliency,saliency_norm"]
    for j, token in enumerate(run.tokens):
        cell = downloads.csv_cell(token)
        f = "" if flow is None else f"{flow[j]:.8g}"
        lines.append(f"{j},{cell},{row[j]:.8g},{f},{signed[j]:.8g},{norm[j]:.8g}")
    return ("\n".join(lines) + "\n").encode("utf-8")


def view(page: Page) -> None:
    run = page.run
    t = len(run.tokens)
    left, middle, right = lecture.controls([2, 3, 3])
    upto = state.int_slider(_("Up to layer"), "layer", 0, run.num_layers - 1, run.num_layers - 1, container=left)
    query = state.choice(_("Query token"), "query", range(t), 1 if t > 2 else 0, container=middle,
                         format_func=lambda i: token_label(run.tokens, i))
    target = state.choice(_("Saliency of"), "target", TARGETS, "sentence", container=right,
                          format_func=lambda name: _(TARGET_NAMES[name]))
    notices.show_notices()

    rollouts = rollouts_of(run)
    st.latex(r"\hat A_l = \tfrac12\,\overline{A_l} + \tfrac12\,I, \qquad R_l = \hat A_l\,\hat A_{l-1}\cdots\hat A_0")
    title = _("Attention rollout through layers 0..{layer}").format(layer=upto)
    show_chart(heatmap_spec(rollouts[upto], run.tokens, run.tokens, title=title), key="rollout")
    st.caption(_("Row i: how much token i after layer {layer} draws on each input token, counting the residual "
                 "connection as half of every layer (Abnar & Zuidema 2020). Each layer's heads are averaged; each "
                 "row sums to 1.").format(layer=upto))

    flow = None
    if t <= FLOW_MAX_TOKENS:
        with st.spinner(_("Computing the attention flow…")):
            flow = flow_of(run, query, upto)
    bars = probability_bars(rollouts[upto][query], run.tokens, _("{token} after layer {layer}: rollout and flow")
                            .format(token=html.escape(run.tokens[query]), layer=upto), compare=flow,
                            compare_name=_("flow"), name=_("rollout"))
    show_chart(bars, key="rollout_row")
    if flow is None:
        st.caption(_("Attention flow (a maximum flow through the layers, with the attention as capacities) is "
                     "computed for texts of at most {n} tokens: its time grows with the fourth power of the length, "
                     "and this text has {t}.").format(n=FLOW_MAX_TOKENS, t=t))

    with st.spinner(_("Computing the gradients…")):
        signed, norm = saliency_of(run, target, query)
    of = _(TARGET_NAMES[target]) if target == "sentence" else _("the vector of {token} after the last layer").format(
        token=html.escape(run.tokens[query]))
    show_chart(saliency_bars(signed, norm, run.tokens, _("Gradient × input: saliency of the norm of {what}").format(
        what=of)), key="saliency")
    facts = page.model().facts
    x_is = (_("x is the vector each token enters the first layer with (token + position embeddings, after their "
              "layer norm)") if facts.embedding_norm else
            _("x is the vector each token enters the first layer with (its token embedding: RoPE adds no position "
              "vector)") if facts.positional == "rotary" else
            _("x is the vector each token enters the first layer with (its token and position embeddings)"))
    st.caption(x_is + _("; y is the norm of the output named above. Σ x·∂y/∂x is the first-order share of y each "
                        "token accounts for; the grey bar is its size, whatever the sign."))

    downloads.button(_("Download the rollout, flow and saliency (NumPy .npz)"),
                     lambda: npz_of(run, rollouts, upto, query, flow, signed, norm, target), "rollout.npz",
                     "application/octet-stream")
    downloads.button(_("Download the query's row and the saliency (CSV)"),
                     lambda: csv_of(run, rollouts[upto][query], flow, signed, norm), "rollout.csv", "text/csv")
