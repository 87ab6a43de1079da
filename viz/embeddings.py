"""The sentence-embedding lens's figures: cosine similarities, a 2-D map of the sentences, their path through the
layers, and each token's share of a sentence's vector."""
import html

import numpy as np
import plotly.graph_objects as go

from locales import _
from viz.attention import axis_labels
from viz.colours import DIVERGING, NEGATIVE, POSITIVE, category

MARGIN = {"l": 10, "r": 10, "t": 50, "b": 10}


def short(sentence: str, limit: int = 28) -> str:
    """A sentence as a label: its first `limit` characters, escaped (plotly reads some HTML)."""
    cut = sentence if len(sentence) <= limit else sentence[:limit - 1] + "…"
    return html.escape(cut, quote=False)


def labels_of(sentences) -> list[str]:
    return [f"{i + 1}: {short(s)}" for i, s in enumerate(sentences)]


def cosine_figure(similarity: np.ndarray, sentences, title: str) -> go.Figure:
    """(N, N) cosine similarities, the value written in each cell; -1..1, orange for similar, blue for opposite."""
    labels = labels_of(sentences)
    fig = go.Figure(go.Heatmap(z=np.asarray(similarity, dtype=np.float32), x=labels, y=labels, zmin=-1.0, zmax=1.0,
                               colorscale=DIVERGING, texttemplate="%{z:.2f}", colorbar={"thickness": 12},
                               hovertemplate=_("%{y}<br>%{x}<br>cosine = %{z:.4f}<extra></extra>")))
    fig.update_layout(title={"text": title, "font": {"size": 14}}, height=max(320, 34 * len(labels) + 200),
                      margin={"l": 10, "r": 10, "t": 50, "b": 10},
                      xaxis={"tickangle": -30, "type": "category"}, yaxis={"autorange": "reversed", "type": "category"})
    return fig


def map_figure(coords: np.ndarray, explained, sentences, title: str) -> go.Figure:
    """The sentence embeddings on their first two principal axes, each point named."""
    labels = labels_of(sentences)
    styles = [category(i) for i in range(len(labels))]  # a colour each; past seven, a shape too
    fig = go.Figure(go.Scatter(x=coords[:, 0], y=coords[:, 1], mode="markers+text", text=labels,
                               textposition="top center",
                               marker={"size": 12, "color": [c for c, _d, _s in styles],
                                       "symbol": [s for _c, _d, s in styles]},
                               hovertemplate="%{text}<extra></extra>"))
    fig.update_layout(title={"text": title, "font": {"size": 14}}, height=420, margin=MARGIN,
                      xaxis={"title": _("axis 1 ({share} of the variance)").format(share=f"{explained[0]:.0%}")},
                      yaxis={"title": _("axis 2 ({share} of the variance)").format(share=f"{explained[1]:.0%}"),
                             "scaleanchor": "x"})
    return fig


def paths_figure(coords: np.ndarray, explained, sentences, title: str) -> go.Figure:
    """coords (N, layers + 1, 2): each sentence's pooled vector after the embeddings (0) and every layer, on the
    principal axes of all of them together, as a path; the numbers are the layers."""
    fig = go.Figure()
    for i, label in enumerate(labels_of(sentences)):
        colour, dash, symbol = category(i)
        steps = np.arange(coords.shape[1])
        fig.add_trace(go.Scatter(x=coords[i, :, 0], y=coords[i, :, 1], mode="lines+markers+text", name=label,
                                 text=[str(s) for s in steps], textposition="top center",
                                 line={"color": colour, "dash": dash}, marker={"symbol": symbol},
                                 hovertemplate=_("{sentence}<br>after layer %{text}<extra></extra>").replace(
                                     "{sentence}", "%{fullData.name}")))  # the visitor's text is no template
    fig.update_layout(title={"text": title, "font": {"size": 14}}, height=460, margin=MARGIN,
                      xaxis={"title": _("axis 1 ({share} of the variance)").format(share=f"{explained[0]:.0%}")},
                      yaxis={"title": _("axis 2 ({share} of the variance)").format(share=f"{explained[1]:.0%}")},
                      legend={"orientation": "h", "y": -0.15})
    return fig


def shares_figure(shares: np.ndarray, tokens, title: str) -> go.Figure:
    """Each token's share of the pooled vector (the shares sum to 1)."""
    labels = axis_labels(tokens)
    s = np.asarray(shares, dtype=np.float32)
    fig = go.Figure(go.Bar(x=labels, y=s, marker_color=np.where(s >= 0, POSITIVE, NEGATIVE),
                           hovertemplate=_("token: %{x}<br>share = %{y:.4f}<extra></extra>")))
    fig.update_layout(title={"text": title, "font": {"size": 14}}, height=340, margin=MARGIN,
                      xaxis={"type": "category", "tickangle": -60, "categoryorder": "array", "categoryarray": labels},
                      yaxis={"title": _("share of the sentence vector")})
    return fig
