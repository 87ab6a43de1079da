"""The Ask page's figures (views.ask): which words of the question an answer word drew on, by attention and by
gradient x input side by side; one step's row of attention in every head of every layer. Plain dicts (viz.spec)."""
import html

import numpy as np

from locales import _
from viz.attention import axis_labels, heatmap_spec
from viz.decoding import BAR_BLUE, CHOSEN_ORANGE
from viz.spec import FigureSpec

MARGIN = {"l": 10, "r": 10, "t": 60, "b": 10}


def ranking_spec(words, attention, saliency, title: str) -> FigureSpec:
    """The question's words (Q,) ranked by attention (Q,), most first, as horizontal bars; each word's share of the
    gradient x input norm (Q,) beside it (None: not computed). Both on a 0..1 axis."""
    attention = np.asarray(attention, dtype=np.float32)
    order = np.argsort(-attention, kind="stable")
    labelled = axis_labels(words)
    labels = [labelled[i] for i in order][::-1]  # plotly draws horizontal bars bottom-up
    bars = [{"type": "bar", "orientation": "h", "name": _("attention"), "y": labels, "x": attention[order][::-1],
             "marker": {"color": BAR_BLUE}, "text": [f"{v:.2f}" for v in attention[order][::-1]],
             "textposition": "outside", "cliponaxis": False,
             "hovertemplate": _("%{y}<br>attention: %{x:.3f}") + "<extra></extra>"}]
    if saliency is not None:
        share = np.asarray(saliency, dtype=np.float32)[order][::-1]
        bars.append({"type": "bar", "orientation": "h", "name": _("gradient × input (share)"), "y": labels,
                     "x": share, "marker": {"color": CHOSEN_ORANGE}, "text": [f"{v:.2f}" for v in share],
                     "textposition": "outside", "cliponaxis": False,
                     "hovertemplate": _("%{y}<br>gradient × input: %{x:.3f} of the question's") + "<extra></extra>"})
    top = max(1.0, float(np.nanmax(attention)) if attention.size else 1.0)
    return FigureSpec(bars, {
        "title": {"text": html.escape(title, quote=False)}, "barmode": "group",
        "height": 90 + 30 * len(labels) * (2 if saliency is not None else 1),
        "margin": {"l": 10, "r": 40, "t": 60, "b": 10}, "legend": {"orientation": "h", "y": 1.02, "yanchor": "bottom"},
        "xaxis": {"title": {"text": _("share")}, "range": [0.0, top * 1.15]},
        "yaxis": {"type": "category", "categoryorder": "array", "categoryarray": labels}})


def every_head_spec(rows, tokens, heads: int, title: str) -> FigureSpec:
    """rows (layers * heads, S): one step's row of attention in every head of every layer (layer-major), over the S
    tokens read; a heatmap with a row per head, labelled layer.head."""
    rows = np.asarray(rows, dtype=np.float32)
    names = [f"{i // heads}.{i % heads}" for i in range(rows.shape[0])]
    spec = heatmap_spec(rows, names, tokens, title, keys=_("key: a token read"),
                        queries=_("layer.head"))
    data, layout = spec.parts()
    heat = dict(data[0], hovertemplate=_("layer.head %{y}<br>key: %{x}<br>p = %{z:.4f}") + "<extra></extra>")
    layout["height"] = 160 + 4 * rows.shape[0]
    layout["yaxis"] = dict(layout["yaxis"], tickvals=[names[i] for i in range(0, len(names), heads)],
                           ticktext=[f"{i // heads}" for i in range(0, len(names), heads)])
    return FigureSpec([heat], layout)


def sink_layers_spec(by_layer, line: float, title: str) -> FigureSpec:
    """by_layer (layers,): each layer's mean share to the first token, as horizontal bars, a dashed line at `line`."""
    by_layer = np.asarray(by_layer, dtype=np.float32)
    colours = [CHOSEN_ORANGE if v > line else BAR_BLUE for v in by_layer]
    return FigureSpec([{
        "type": "bar", "orientation": "h", "x": by_layer, "y": list(range(len(by_layer))), "marker": {"color": colours},
        "hovertemplate": _("layer %{y}: %{x:.3f} to the first token") + "<extra></extra>"}], {
        "title": {"text": html.escape(title, quote=False)}, "height": 560, "margin": MARGIN,
        "shapes": [{"type": "line", "x0": line, "x1": line, "y0": 0, "y1": 1, "yref": "paper",
                    "line": {"dash": "dash", "color": "#666"}}],
        "xaxis": {"title": {"text": _("attention to the first token")}, "range": [0.0, 1.0]},
        "yaxis": {"title": {"text": _("layer")}, "autorange": "reversed", "dtick": 2}})


def loss_bars_spec(tokens, losses, base: float, title: str) -> FigureSpec:
    """The answer's loss with each token evicted (the first token's bar orange), a dashed line at the loss with
    nothing evicted."""
    losses = np.asarray(losses, dtype=np.float32)
    labels = axis_labels(tokens)
    colours = [CHOSEN_ORANGE] + [BAR_BLUE] * (len(losses) - 1)
    bar = {"type": "bar", "x": labels, "y": losses, "marker": {"color": colours},
           "text": [f"{v:.2f}" for v in losses], "textposition": "outside", "cliponaxis": False,
           "hovertemplate": _("%{x} evicted: loss %{y:.3f} nats a token") + "<extra></extra>"}
    return FigureSpec([bar], {
        "title": {"text": html.escape(title, quote=False)}, "height": 380, "margin": MARGIN,
        "shapes": [{"type": "line", "x0": 0, "x1": 1, "xref": "paper", "y0": base, "y1": base,
                    "line": {"dash": "dash", "color": "#666"}}],
        "xaxis": {"type": "category", "categoryorder": "array", "categoryarray": labels,
                  "title": {"text": _("the token evicted")}},
        "yaxis": {"title": {"text": _("loss (nats a token)")}, "rangemode": "tozero"}})
