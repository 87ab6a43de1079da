"""Saliency as bars: one per input token, the signed gradient x input and its norm."""
import numpy as np

from locales import _
from viz.attention import axis_labels
from viz.colours import NEGATIVE, POSITIVE
from viz.softmax import LEGEND
from viz.spec import FigureSpec


def saliency_bars(signed, norm, tokens, title: str) -> FigureSpec:
    """signed (T,) Σ_d x·∂y/∂x (red up, blue down) beside norm (T,) |x·∂y/∂x| (grey), per input token. Plotly's dicts
    (viz.spec): the rollout page draws it on every rerun."""
    signed, norm = np.asarray(signed, dtype=np.float32), np.asarray(norm, dtype=np.float32)
    if signed.shape != norm.shape or signed.shape != (len(tokens),):
        raise ValueError(f"saliencies of shapes {signed.shape}, {norm.shape} do not fit {len(tokens)} tokens")
    labels = axis_labels(tokens)
    colours = [POSITIVE if v >= 0 else NEGATIVE for v in signed.tolist()]
    hover = _("token: %{x}<br>%{y:.4g}") + "<extra></extra>"
    bars = [{"type": "bar", "x": labels, "y": signed, "name": _("Σ x·∂y/∂x (signed)"), "marker": {"color": colours},
             "hovertemplate": hover},
            {"type": "bar", "x": labels, "y": norm, "name": _("‖x·∂y/∂x‖ (size)"), "marker": {"color": "#9a9a9a"},
             "hovertemplate": hover}]
    layout = {"title": {"text": title}, "barmode": "group", "height": 340,
              "margin": {"l": 10, "r": 10, "t": 50, "b": 10}, "legend": LEGEND,
              "xaxis": {"type": "category", "tickangle": -60, "categoryorder": "array", "categoryarray": labels},
              "yaxis": {"title": {"text": _("gradient × input")}, "zeroline": True}}
    return FigureSpec(bars, layout)
