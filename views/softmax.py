"""Softmax rows: one query's scores q.k, scaled, masked, and turned into probabilities; a temperature to play with."""
import html
import math

import numpy as np
import streamlit as st

from views import state
from views.frame import Page
from views.pickers import chart_config
from viz.labels import long_text_labels, token_label
from viz.softmax import (
    SCALE_OPTIONS,
    as_neg_inf,
    entropy,
    probability_bars,
    scale_factor,
    scale_label,
    score_bars,
    softmax_row,
)


def view(page: Page) -> None:
    """The sliders, one query's row in four steps, its entropy, then the row under another temperature."""
    run = page.run
    T = len(run.tokens)
    keys = long_text_labels(run.tokens)

    col1, col2, col3 = st.columns([2, 2, 3])
    layer = state.int_slider("Layer", "layer", 0, run.num_layers - 1, 0, container=col1)
    head = state.int_slider("Head", "head", 0, run.num_heads - 1, 0, container=col2)
    query = state.choice("Query token", "query", range(T), 1 if T > 2 else 0, container=col3,
                         format_func=lambda i: token_label(run.tokens, i))
    attn = run.attention(layer)
    d_k = page.model().facts.head_dim
    by_factor = sorted(SCALE_OPTIONS, key=lambda o: scale_factor(o, d_k))
    option = state.choice("Scale (temperature) τ of q·k", "scale", by_factor, "standard", widget="radio",
                          horizontal=True, format_func=lambda o: scale_label(o, d_k))
    state.show_notices()

    st.latex(r"p_{ij} = \mathrm{softmax}_j\!\left(\frac{q_i \cdot k_j}{\sqrt{d_k}} + M_{ij}\right)"
             r" = \frac{e^{s_{ij}}}{\sum_{j'} e^{s_{ij'}}}, \qquad d_k = " + str(d_k))

    scaled = attn.scores[0, head, query].numpy().astype(np.float64)  # (S,) q.k * scale, before the mask
    raw = scaled / attn.scale  # (S,) q.k
    mask = np.zeros(T) if attn.mask is None else as_neg_inf(
        np.broadcast_to(attn.mask.numpy(), attn.scores.shape)[0, head, query])  # (S,) 0 or -inf
    probs = attn.probs[0, head, query].numpy()  # (S,) what the model computed
    who = html.escape(token_label(run.tokens, query), quote=False)  # a token, in a title: plotly reads some HTML

    c1, c2 = st.columns(2)
    c1.plotly_chart(score_bars(raw, keys, f"(1) raw scores q·k for query {who}", "q·k"),
                    config=chart_config())
    c2.plotly_chart(score_bars(scaled, keys, f"(2) scaled: q·k × {attn.scale:.4g}", "q·k / √d_k"),
                    config=chart_config())
    c3, c4 = st.columns(2)
    c3.plotly_chart(score_bars(mask, keys, "(3) mask M added (0 = allowed, -inf = blocked)", "M",
                               show_values=T <= 64),
                    config=chart_config())
    c4.plotly_chart(probability_bars(probs, keys, "(4) softmax probabilities"), config=chart_config())
    c3.caption("No mask on this page (no padding), so every key gets 0. A blocked key would be -inf, which a chart "
               "cannot draw: it is shown as a grey hatched bar reaching down off the axis, labelled -inf.")
    if not math.isclose(attn.scale, 1 / math.sqrt(d_k), rel_tol=1e-4):
        c2.caption(f"This model scales by {attn.scale:.4g}, not 1/√d_k = {1 / math.sqrt(d_k):.4g}.")

    allowed = int(np.isfinite(scaled + mask).sum())
    h = entropy(probs)
    m1, m2, m3, m4 = st.columns(4)
    m1.metric("Row sum", f"{probs.astype(np.float64).sum():.6f}")
    m2.metric("Entropy (nats)", f"{h:.4f}")
    m3.metric("Entropy (bits)", f"{h / math.log(2):.4f}")
    m4.metric("Max possible: log T", f"{math.log(allowed):.4f} nats" if allowed else "—",
              help=f"All {allowed} allowed keys equally likely: {math.log2(max(allowed, 1)):.4f} bits.")
    check = np.nanmax(np.abs(softmax_row(scaled + mask) - probs)) if allowed else 0.0
    st.caption(f"Recomputed here with numpy from the scores above, the softmax matches the model's row to "
               f"max |difference| = {check:.1e}.")
    temperature(raw, mask, keys, scale_factor(option, d_k), d_k)


def temperature(raw: np.ndarray, mask: np.ndarray, keys, tau: float, d_k: int) -> None:
    """The same row under the chosen scale τ beside the standard 1/√d_k: the model is not run again."""
    st.subheader("Temperature: how the scale sharpens or flattens the softmax")
    st.latex(r"p_j(\tau) = \mathrm{softmax}_j\big(\tau\,(q_i \cdot k_j) + M_{ij}\big), \qquad \tau_{\text{standard}} "
             r"= \tfrac{1}{\sqrt{d_k}}")
    standard = softmax_row(raw * scale_factor("standard", d_k) + mask)  # (S,)
    chosen = softmax_row(raw * tau + mask)  # (S,) only this row is recomputed; the model is not re-run
    st.plotly_chart(probability_bars(standard, keys, f"standard τ = {scale_factor('standard', d_k):.4g} vs "
                                     f"chosen τ = {tau:.4g}", compare=chosen, compare_name=f"τ = {tau:.4g}",
                                     name="standard 1/√d_k"), config=chart_config())
    h_std, h_new = entropy(standard), entropy(chosen)
    t1, t2, t3 = st.columns(3)
    t1.metric("Entropy, standard", f"{h_std:.4f} nats", help=f"{h_std / math.log(2):.4f} bits")
    t2.metric(f"Entropy, τ = {tau:.4g}", f"{h_new:.4f} nats", delta=f"{h_new - h_std:+.4f}", delta_color="off",
              help=f"{h_new / math.log(2):.4f} bits")
    t3.metric("Largest probability", f"{np.nanmax(chosen):.4f}",
              delta=f"{np.nanmax(chosen) - np.nanmax(standard):+.4f}", delta_color="off")
    st.caption("A bigger τ stretches the score gaps: the softmax sharpens toward the largest score (lower entropy). "
               "A smaller τ flattens it toward uniform (entropy toward log T). Without 1/√d_k, dot products grow with "
               "d_k and the softmax saturates.")
