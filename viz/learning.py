"""How a model learns: the training loss after every step and the held-out exact match now and then, in one small
figure (two y axes), a step marked on it."""
import numpy as np

from locales import _
from viz.spec import FigureSpec

LOSS_COLOUR, SCORE_COLOUR, MARK_COLOUR = "#1f77b4", "#d62728", "#555555"


def learning_curve(loss, scores, mark: int | None = None, steps: int | None = None, title: str = "",
                   score_label: str | None = None) -> FigureSpec:
    """loss: the loss of steps 1..len(loss); scores: (step, exact match in 0..1) pairs; mark: a step to draw a
    vertical line at (a snapshot); steps: the x axis runs to it (a live run's budget), else to the last step;
    score_label: the exact match's name in the legend (default "held-out exact match")."""
    loss = np.asarray(loss, dtype=np.float32)
    if loss.ndim != 1:
        raise ValueError(f"loss must be one number per step, not of shape {loss.shape}")
    at = np.asarray([s for s, __ in scores], dtype=np.int32)
    score = np.asarray([v for __, v in scores], dtype=np.float32)
    if score.size and not ((score >= 0) & (score <= 1)).all():
        raise ValueError("exact match must be in 0..1")
    last = max(steps or 0, len(loss), int(at.max()) if at.size else 0, mark or 0, 1)
    data = [
        {"type": "scatter", "mode": "lines", "name": _("training loss"),
         "x": np.arange(1, len(loss) + 1, dtype=np.int32), "y": loss, "line": {"color": LOSS_COLOUR, "width": 1.5},
         "hovertemplate": _("step %{x}<br>loss %{y:.3f}") + "<extra></extra>"},
        {"type": "scatter", "mode": "lines+markers", "name": score_label or _("held-out exact match"), "x": at,
         "y": score, "yaxis": "y2", "line": {"color": SCORE_COLOUR, "width": 1.5},
         "marker": {"size": 7, "color": SCORE_COLOUR},
         "hovertemplate": _("step %{x}<br>exact match %{y:.1%}") + "<extra></extra>"},
    ]
    layout = {
        "height": 320, "margin": {"l": 10, "r": 10, "t": 60 if title else 30, "b": 10},
        "xaxis": {"title": {"text": _("training step")}, "range": [0, last * 1.02]},
        "yaxis": {"title": {"text": _("loss"), "font": {"color": LOSS_COLOUR}}, "rangemode": "tozero"},
        "yaxis2": {"title": {"text": _("exact match"), "font": {"color": SCORE_COLOUR}}, "overlaying": "y",
                   "side": "right", "range": [0, 1.05], "tickformat": ".0%", "showgrid": False,
                   "tickmode": "array", "tickvals": [0, 0.25, 0.5, 0.75, 1]},
        "legend": {"orientation": "h", "x": 0, "y": 1.02, "yanchor": "bottom"}, "showlegend": True,
        "hovermode": "closest",
    }
    if title:
        layout["title"] = {"text": title, "y": 1, "yref": "container", "yanchor": "top", "pad": {"t": 8}}
    if mark is not None:
        layout["shapes"] = [{"type": "line", "xref": "x", "yref": "paper", "x0": mark, "x1": mark, "y0": 0, "y1": 1,
                             "line": {"color": MARK_COLOUR, "width": 2, "dash": "dot"}}]
        layout["annotations"] = [{"text": _("step {step}").format(step=mark), "xref": "x", "yref": "paper", "x": mark,
                                  "y": 0.98, "showarrow": False, "xanchor": "left", "yanchor": "top", "xshift": 4,
                                  "font": {"color": MARK_COLOUR}}]
    return FigureSpec(data, layout)
