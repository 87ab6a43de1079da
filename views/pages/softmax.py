"""Softmax rows: one query's scores q.k, scaled, masked, and turned into probabilities; a temperature to play with."""
import html
import math

import numpy as np
import streamlit as st

from locales import _
from views.charts.mounted import streamlit_chart
from views.shell import lecture
from views.shell.frame import Page
from views.widgets import notices, state
from views.widgets.pickers import first_head
from viz.labels import long_text_labels, token_label
from viz.softmax import as_neg_inf, entropy, probability_bars, score_bars, softmax_row, with_temperature

TEMPERATURES = (0.1, 5.0)  # the slider's range; 1 is the model


def view(page: Page) -> None:
    """The sliders, one query's row in four steps, its entropy, then the row under another temperature."""
    run = page.run
    T = len(run.tokens)
    keys = long_text_labels(run.tokens)

    first = first_head(page.choice, run.num_layers, run.num_heads)
    col1, col2, col3 = lecture.controls([2, 2, 3])
    layer = state.int_slider(_("Layer"), "layer", 0, run.num_layers - 1, first[0], container=col1)
    head = state.int_slider(_("Head"), "head", 0, run.num_heads - 1, first[1], container=col2)
    it = run.tokens.index("it") if first != (0, 0) and "it" in run.tokens else None  # the showcase head's row
    query = state.choice(_("Query token"), "query", range(T), it if it is not None else (1 if T > 2 else 0),
                         container=col3,
                         format_func=lambda i: token_label(run.tokens, i))
    attn = run.attention(layer)
    d_k = page.model().facts.head_dim
    notices.show_notices()

    st.latex(r"p_{ij} = \mathrm{softmax}_j\!\left(\frac{q_i \cdot k_j}{\sqrt{d_k}} + M_{ij}\right)"
             r" = \frac{e^{s_{ij}}}{\sum_{j'} e^{s_{ij'}}}, \qquad d_k = " + str(d_k))

    scaled = attn.scores[0, head, query].numpy().astype(np.float64)  # (S,) q.k * scale, before the mask
    raw = scaled / attn.scale  # (S,) q.k
    mask = np.zeros(T) if attn.mask is None else as_neg_inf(
        np.broadcast_to(attn.mask.numpy(), attn.scores.shape)[0, head, query])  # (S,) 0 or -inf
    probs = attn.probs[0, head, query].numpy()  # (S,) what the model computed
    who = html.escape(token_label(run.tokens, query), quote=False)  # a token, in a title: plotly reads some HTML

    c1, c2 = lecture.charts_row(2)
    streamlit_chart(score_bars(raw, keys, _("(1) raw scores q·k for query {token}").format(token=who), "q·k"),
                    "raw", c1)
    streamlit_chart(score_bars(scaled, keys, _("(2) scaled: q·k × {scale}").format(scale=f"{attn.scale:.4g}"),
                               "q·k / √d_k"), "scaled", c2)
    c3, c4 = lecture.charts_row(2)
    streamlit_chart(score_bars(mask, keys, _("(3) mask M added (0 = allowed, -inf = blocked)"), "M",
                               show_values=T <= 64), "mask", c3)
    streamlit_chart(probability_bars(probs, keys, _("(4) softmax probabilities")), "probabilities", c4)
    c3.caption(_("No mask on this page (no padding), so every key gets 0. A blocked key would be -inf, which a chart "
                 "cannot draw: it is shown as a grey hatched bar reaching down off the axis, labelled -inf."))
    if not math.isclose(attn.scale, 1 / math.sqrt(d_k), rel_tol=1e-4):
        c2.caption(_("This model scales by {scale}, not 1/√d_k = {standard}.").format(
            scale=f"{attn.scale:.4g}", standard=f"{1 / math.sqrt(d_k):.4g}"))
    numbers(run.tokens, raw, scaled, mask, probs)

    allowed = int(np.isfinite(scaled + mask).sum())
    h = entropy(probs)
    m1, m2, m3, m4 = st.columns(4)
    m1.metric(_("Row sum"), f"{probs.astype(np.float64).sum():.6f}")
    m2.metric(_("Entropy (nats)"), f"{h:.4f}")
    m3.metric(_("Entropy (bits)"), f"{h / math.log(2):.4f}")
    m4.metric(_("Max possible: log T"), _("{value} nats").format(value=f"{math.log(allowed):.4f}") if allowed else "—",
              help=_("All {n} allowed keys equally likely: {bits} bits.").format(
                  n=allowed, bits=f"{math.log2(max(allowed, 1)):.4f}"))
    check = np.nanmax(np.abs(softmax_row(scaled + mask) - probs)) if allowed else 0.0
    st.caption(_("Recomputed here with numpy from the scores above, the softmax matches the model's row to "
                 "max |difference| = {check}.").format(check=f"{check:.1e}"))
    temperature(scaled + mask, keys, d_k)


def numbers(tokens, raw, scaled, mask, probs) -> None:
    """The four charts' numbers, key by key, as a table (a screen reader reads it; its toolbar downloads it as CSV)."""
    with st.expander(_("The numbers of the four charts, key by key")):
        st.dataframe({_("position"): range(len(tokens)), _("key"): list(tokens), "q·k": raw, "q·k / √d_k": scaled,
                      "M": mask, "p": probs}, hide_index=True)


def temperature(scores: np.ndarray, keys, d_k: int) -> None:
    """The row under a temperature T, softmax(s / T), beside the model's (T = 1): the model is not run again."""
    st.header(_("Temperature: how T sharpens or flattens the softmax"))
    slider, formula = lecture.controls([2, 3])
    t = state.float_slider(_("Temperature T"), "temp", *TEMPERATURES, 1.0, container=slider, step=0.1,
                           help=_("T = 1 is the model. T > 1 flattens the row toward uniform; T < 1 sharpens it "
                                  "toward the largest score."))
    notices.show_notices()  # a bad ?temp= in the link, said here, by its slider
    # a narrow column breaks the line before s_ij (kept whole), or also after p_j(T) = (views/shell/formulas.py)
    formula.latex(r"p_j(T) = \mathrm{softmax}_j\!\left(\frac{s_{ij}}{T}\right), \qquad\allowbreak {s_{ij} = "
                  r"\frac{q_i \cdot k_j}{\sqrt{d_k}} + M_{ij}}")
    model_row = softmax_row(scores)  # (S,) T = 1
    chosen = with_temperature(scores, t)  # (S,) only this row is recomputed; the model is not re-run
    streamlit_chart(probability_bars(model_row, keys, _("the model (T = 1) vs T = {t}").format(t=f"{t:g}"),
                                     compare=chosen, compare_name=f"T = {t:g}", name=_("the model, T = 1")),
                    "temperature")
    h_model, h_new = entropy(model_row), entropy(chosen)
    t1, t2, t3 = st.columns(3)
    t1.metric(_("Entropy, T = 1"), _("{value} nats").format(value=f"{h_model:.4f}"),
              help=_("{bits} bits").format(bits=f"{h_model / math.log(2):.4f}"))
    t2.metric(_("Entropy, T = {t}").format(t=f"{t:g}"), _("{value} nats").format(value=f"{h_new:.4f}"),
              delta=f"{h_new - h_model:+.4f}", delta_color="off",
              help=_("{bits} bits").format(bits=f"{h_new / math.log(2):.4f}"))
    t3.metric(_("Largest probability"), f"{np.nanmax(chosen):.4f}",
              delta=f"{np.nanmax(chosen) - np.nanmax(model_row):+.4f}", delta_color="off")
    st.caption(_("Dividing q·k by √d_k is itself a temperature of √d_k = {root}: without it, dot products grow with "
                 "d_k and the softmax saturates on the largest score. Leaving it out is the same as T = 1/√d_k = "
                 "{inverse} here.").format(root=f"{math.sqrt(d_k):.3g}", inverse=f"{1 / math.sqrt(d_k):.3g}"))
