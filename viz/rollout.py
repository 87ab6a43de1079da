"""Saliency as bars: one per input token, the signed gradient x input and its norm."""
import numpy as np
import plotly.graph_objects as go

from locales import _
from viz.attention import axis_labels
from viz.colours import NEGATIVE, POSITIVE
from viz.softmax import LEGEND


def saliency_bars(signed, norm, tokens, title: str) -> go.Figure:
    """signed (T,) Σ_d x·∂y/∂x (red up, blue down) beside norm (T,) |x·∂y/∂x| (grey), per input token."""
    signed, norm = np.asarray(signed, dtype=np.float32), np.asarray(norm, dtype=np.float32)
    if signed.shape != norm.shape or signed.shape != (len(tokens),):
        raise ValueError(f"saliencies of shapes {signed.shape}, {norm.shape} do not fit {len(tokens)} tokens")
    labels = axis_labels(tokens)
    colours = np.where(signed >= 0, POSITIVE, NEGATIVE)
    fig = go.Figure([
        go.Bar(x=labels, y=signed, name=_("Σ x·∂y/∂x (signed)"), marker_color=colours,
               hovertemplate=_("token: %{x}<br>%{y:.4g}") + "<extra></extra>"),
        go.Bar(x=labels, y=norm, name=_("‖x·∂y/∂x‖ (size)"), marker_color="#9a9a9a",
               hovertemplate=_("token: %{x}<br>%{y:.4g}") + "<extra></extra>"),
    ])
    fig.update_layout(title=title, barmode="group", height=340, margin={"l": 10, "r": 10, "t": 50, "b": 10},
                      legend=LEGEND,
                      xaxis={"type": "category", "tickangle": -60, "categoryorder": "array", "categoryarray": labels},
                      yaxis={"title": _("gradient × input"), "zeroline": True})
    return fig
