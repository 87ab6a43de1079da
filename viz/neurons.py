"""The neuron view's figure: for one query, every key's vector, its elementwise product with the query, their sum
(the dot product), the scaled score and the softmax, side by side, one row per key."""
import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from locales import _
from viz.attention import axis_labels
from viz.matrix import SIGNED_COLORSCALE, signed_limit


def _signed(z, x, y, hover: str, numbers: bool = False) -> go.Heatmap:
    """Signed values, blue below 0 and red above, in a range symmetric about 0; numbers: written in the cells."""
    limit = signed_limit(np.asarray(z), 99.0)
    return go.Heatmap(z=np.asarray(z, dtype=np.float32), x=x, y=y, colorscale=SIGNED_COLORSCALE, zmin=-limit,
                      zmax=limit, showscale=False, hovertemplate=hover, texttemplate="%{z:.2f}" if numbers else None)


def query_figure(q, title: str) -> go.Figure:
    """The query's vector q (hd,) as one row of signed colours, dimension by dimension."""
    q = np.asarray(q, dtype=np.float32)
    fig = go.Figure(_signed(q[None, :], np.arange(q.size, dtype=np.int32), ["q"],
                            _("dim %{x}<br>q = %{z:.4f}<extra></extra>")))
    fig.update_layout(title={"text": title, "font": {"size": 14}}, height=150, margin={"l": 10, "r": 10, "t": 40,
                                                                                    "b": 10},
                      xaxis={"title": _("dimension"), "type": "linear"}, yaxis={"type": "category"})
    return fig


def neuron_figure(view, keys, positions, title: str) -> go.Figure:
    """view: a model.analysis.neurons.NeuronView restricted to the keys at `positions` (their tokens `keys`): five
    panels sharing the key rows. K and q∘K each get their own symmetric signed range; the scores theirs; p is 0..1."""
    labels = axis_labels(keys)
    dims = np.arange(view.k.shape[1], dtype=np.int32)
    fig = make_subplots(rows=1, cols=5, shared_yaxes=True, column_widths=[0.32, 0.32, 0.12, 0.12, 0.12],
                        horizontal_spacing=0.015,
                        subplot_titles=[_("k_j (keys)"), _("q ∘ k_j (products)"), _("q · k_j (sum)"),
                                        _("× {scale}").format(scale=f"{view.scale:.4g}"),
                                        "softmax"])
    fig.add_trace(_signed(view.k[positions], dims, labels, _("key %{y}, dim %{x}<br>k = %{z:.4f}<extra></extra>")),
                  1, 1)
    fig.add_trace(_signed(view.product[positions], dims, labels,
                          _("key %{y}, dim %{x}<br>q·k = %{z:.4f}<extra></extra>")), 1, 2)
    one = ["·"]
    few = len(keys) <= 48
    fig.add_trace(_signed(view.dot[positions][:, None], one, labels, _("key %{y}<br>q · k = %{z:.4f}<extra></extra>"),
                          few), 1, 3)
    scaled = np.where(np.isfinite(view.mask[positions]), view.scaled[positions], np.nan)[:, None]
    fig.add_trace(_signed(scaled, one, labels, _("key %{y}<br>score = %{z:.4f}<extra></extra>"), few), 1, 4)
    fig.add_trace(go.Heatmap(z=np.asarray(view.probs[positions], dtype=np.float32)[:, None], x=one, y=labels,
                             colorscale="Viridis", zmin=0.0, zmax=1.0, texttemplate="%{z:.2f}" if few else None,
                             colorbar={"thickness": 12, "title": {"text": "p"}}, hoverongaps=False,
                             hovertemplate=_("key %{y}<br>p = %{z:.4f}<extra></extra>")), 1, 5)
    fig.update_yaxes(autorange="reversed", type="category", categoryorder="array", categoryarray=labels)
    fig.update_xaxes(title_text=_("dimension"), col=1)
    fig.update_xaxes(title_text=_("dimension"), col=2)
    for col in (3, 4, 5):
        fig.update_xaxes(showticklabels=False, ticks="", col=col)
    for col in (2, 3, 4, 5):
        fig.update_yaxes(ticks="", col=col)
    fig.update_layout(title={"text": title, "font": {"size": 14}}, height=max(300, min(900, 22 * len(keys) + 140)),
                      margin={"l": 10, "r": 10, "t": 70, "b": 10})
    return fig
