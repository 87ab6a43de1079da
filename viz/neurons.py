"""The neuron view's figure: for one query, every key's vector, its elementwise product with the query, their sum
(the dot product), the scaled score and the softmax, side by side, one row per key."""
import numpy as np

from locales import _
from viz.attention import VIRIDIS, axis_labels
from viz.matrix import SIGNED_COLORSCALE, signed_limit
from viz.spec import FigureSpec, subplots_layout


def _signed(z, x, y, hover: str, numbers: bool = False) -> dict:
    """Signed values, blue below 0 and red above, in a range symmetric about 0; numbers: written in the cells."""
    limit = signed_limit(np.asarray(z), 99.0)
    trace = {"type": "heatmap", "z": np.asarray(z, dtype=np.float32), "x": x, "y": y, "colorscale": SIGNED_COLORSCALE,
             "zmin": -limit, "zmax": limit, "showscale": False, "hovertemplate": hover}
    if numbers:
        trace["texttemplate"] = "%{z:.2f}"
    return trace


def query_figure(q, title: str) -> FigureSpec:
    """The query's vector q (hd,) as one row of signed colours, dimension by dimension. The figures of this module are
    plotly's dicts (viz.spec): as checked figures on make_subplots, the neuron view took 25 ms a rerun to build."""
    q = np.asarray(q, dtype=np.float32)
    heat = _signed(q[None, :], np.arange(q.size, dtype=np.int32), ["q"], _("dim %{x}<br>q = %{z:.4f}<extra></extra>"))
    layout = {"title": {"text": title, "font": {"size": 14}}, "height": 150,
              "margin": {"l": 10, "r": 10, "t": 40, "b": 10},
              "xaxis": {"title": {"text": _("dimension")}, "type": "linear"}, "yaxis": {"type": "category"}}
    return FigureSpec([heat], layout)


def neuron_figure(view, keys, positions, title: str) -> FigureSpec:
    """view: a model.analysis.neurons.NeuronView restricted to the keys at `positions` (their tokens `keys`): five
    panels sharing the key rows. K and q∘K each get their own symmetric signed range; the scores theirs; p is 0..1."""
    labels = axis_labels(keys)
    dims = np.arange(view.k.shape[1], dtype=np.int32)
    layout = subplots_layout(rows=1, cols=5, shared_yaxes=True, column_widths=[0.32, 0.32, 0.12, 0.12, 0.12],
                             horizontal_spacing=0.015,
                             subplot_titles=[_("k_j (keys)"), _("q ∘ k_j (products)"), _("q · k_j (sum)"),
                                             _("× {scale}").format(scale=f"{view.scale:.4g}"), "softmax"])
    one = ["·"]
    few = len(keys) <= 48
    scaled = np.where(np.isfinite(view.mask[positions]), view.scaled[positions], np.nan)[:, None]
    probs = {"type": "heatmap", "z": np.asarray(view.probs[positions], dtype=np.float32)[:, None], "x": one,
             "y": labels, "colorscale": VIRIDIS, "zmin": 0.0, "zmax": 1.0,
             "colorbar": {"thickness": 12, "title": {"text": "p"}}, "hoverongaps": False,
             "hovertemplate": _("key %{y}<br>p = %{z:.4f}<extra></extra>")}
    if few:
        probs["texttemplate"] = "%{z:.2f}"
    traces = [
        _signed(view.k[positions], dims, labels, _("key %{y}, dim %{x}<br>k = %{z:.4f}<extra></extra>")),
        _signed(view.product[positions], dims, labels, _("key %{y}, dim %{x}<br>q·k = %{z:.4f}<extra></extra>")),
        _signed(view.dot[positions][:, None], one, labels, _("key %{y}<br>q · k = %{z:.4f}<extra></extra>"), few),
        _signed(scaled, one, labels, _("key %{y}<br>score = %{z:.4f}<extra></extra>"), few),
        probs,
    ]
    for col, trace in enumerate(traces, start=1):
        axis = "" if col == 1 else str(col)
        trace.update(xaxis="x" + axis, yaxis="y" + axis)
        layout["yaxis" + axis].update(autorange="reversed", type="category", categoryorder="array",
                                      categoryarray=labels)
        if col <= 2:
            layout["xaxis" + axis]["title"] = {"text": _("dimension")}
        else:
            layout["xaxis" + axis].update(showticklabels=False, ticks="")
        if col >= 2:
            layout["yaxis" + axis]["ticks"] = ""
    layout.update(title={"text": title, "font": {"size": 14}}, height=max(300, min(900, 22 * len(keys) + 140)),
                  margin={"l": 10, "r": 10, "t": 70, "b": 10})
    return FigureSpec(traces, layout)
