"""How a model learns: the training loss after every step and a held-out score now and then (the translator's exact
match, the toy GPT's copy accuracy), in one small figure (two y axes), a step marked on it and stretches of training
shaded (the toy GPT's plateau and its jump); and, for the toy GPT, every head's induction and previous-token score
over training, lines beside the copy accuracy."""
import numpy as np

from locales import _
from viz.colours import CATEGORIES, SUMMARY, category
from viz.spec import FigureSpec

LOSS_COLOUR, SCORE_COLOUR, MARK_COLOUR = CATEGORIES[0], SUMMARY, "#555555"  # blue and black: apart for everyone
PLATEAU_FILL, JUMP_FILL = "rgba(127, 127, 127, 0.13)", "rgba(255, 127, 14, 0.2)"  # for spans


def learning_curve(loss, scores, mark: int | None = None, steps: int | None = None, title: str = "",
                   score_label: str | None = None, score_axis: str | None = None, score_hover: str | None = None,
                   spans=()) -> FigureSpec:
    """loss: the loss of steps 1..len(loss); scores: (step, score in 0..1) pairs; mark: a step to draw a vertical
    line at (a snapshot); steps: the x axis runs to it (a live run's budget), else to the last step; score_label: the
    score's name in the legend (default "held-out exact match"), score_axis on its axis (default "exact match"),
    score_hover its hover template; spans: (first step, last step, label, fill colour) stretches shaded."""
    loss = np.asarray(loss, dtype=np.float32)
    if loss.ndim != 1:
        raise ValueError(f"loss must be one number per step, not of shape {loss.shape}")
    at = np.asarray([s for s, __ in scores], dtype=np.int32)
    score = np.asarray([v for __, v in scores], dtype=np.float32)
    if score.size and not ((score >= 0) & (score <= 1)).all():
        raise ValueError("scores must be in 0..1")
    last = max(steps or 0, len(loss), int(at.max()) if at.size else 0, mark or 0, 1)
    data = [
        {"type": "scatter", "mode": "lines", "name": _("training loss"),
         "x": np.arange(1, len(loss) + 1, dtype=np.int32), "y": loss, "line": {"color": LOSS_COLOUR, "width": 1.5},
         "hovertemplate": _("step %{x}<br>loss %{y:.3f}") + "<extra></extra>"},
        {"type": "scatter", "mode": "lines+markers", "name": score_label or _("held-out exact match"), "x": at,
         "y": score, "yaxis": "y2", "line": {"color": SCORE_COLOUR, "width": 1.5},
         "marker": {"size": 7, "color": SCORE_COLOUR},
         "hovertemplate": (score_hover or _("step %{x}<br>exact match %{y:.1%}")) + "<extra></extra>"},
    ]
    return _over_steps(data, 320, last, title, mark, spans, {
        "yaxis": {"title": {"text": _("loss"), "font": {"color": LOSS_COLOUR}}, "rangemode": "tozero"},
        "yaxis2": {"title": {"text": score_axis or _("exact match"), "font": {"color": SCORE_COLOUR}},
                   "overlaying": "y", "side": "right", "range": [0, 1.05], "tickformat": ".0%", "showgrid": False,
                   "tickmode": "array", "tickvals": [0, 0.25, 0.5, 0.75, 1]}})


def _over_steps(data: list, height: int, last: int, title: str, mark: int | None, spans, axes: dict) -> FigureSpec:
    """A figure whose x axis is the training step (0 to `last`), with the legend below, the title at the top, the
    step `mark` and the `spans` drawn, and its own y `axes`."""
    layout = {
        "height": height, "margin": {"l": 10, "r": 10, "t": 60 if title else 30, "b": 10},
        "xaxis": {"title": {"text": _("training step")}, "range": [0, last * 1.02]}, **axes,
        "legend": {"orientation": "h", "x": 0, "y": -0.2, "yanchor": "top"}, "showlegend": True,
        "hovermode": "closest",
    }
    if title:
        layout["title"] = {"text": title, "y": 1, "yref": "container", "yanchor": "top", "pad": {"t": 8}}
    _marked(layout, mark, spans)
    return FigureSpec(data, layout)


def _marked(layout: dict, mark: int | None, spans) -> None:
    """The step marked (a dotted line, first of the shapes) and the spans shaded behind the lines, each labelled."""
    shapes, annotations = [], []
    if mark is not None:
        shapes.append({"type": "line", "xref": "x", "yref": "paper", "x0": mark, "x1": mark, "y0": 0, "y1": 1,
                       "line": {"color": MARK_COLOUR, "width": 2, "dash": "dot"}})
        annotations.append({"text": _("step {step}").format(step=mark), "xref": "x", "yref": "paper", "x": mark,
                            "y": 0.98, "showarrow": False, "xanchor": "left", "yanchor": "top", "xshift": 4,
                            "font": {"color": MARK_COLOUR}})
    for first, last, label, fill in spans:
        shapes.append({"type": "rect", "xref": "x", "yref": "paper", "x0": first, "x1": last, "y0": 0, "y1": 1,
                       "fillcolor": fill, "line": {"width": 0}, "layer": "below"})
        annotations.append({"text": label, "xref": "x", "yref": "paper", "x": (first + last) / 2, "y": 0.03,
                            "showarrow": False, "yanchor": "bottom", "font": {"color": MARK_COLOUR, "size": 11}})
    if shapes:
        layout["shapes"], layout["annotations"] = shapes, annotations


def head_scores(steps, accuracy, induction, previous, names, mark: int | None = None, spans=(),
                highlight: tuple[int, int] | None = None, title: str = "") -> FigureSpec:
    """Scores over training, one point per evaluation (steps (E,)): the copy accuracy (accuracy (E,), thick, black),
    each head's induction score (induction (E, layers, heads), solid) and previous-token score (previous, dotted),
    one colour per head (past seven, a marker shape too: viz.colours.category), named by names[layer][head];
    highlight: a head drawn thicker (the induction head); mark and spans as learning_curve's."""
    steps = np.asarray(steps, dtype=np.int32)
    induction, previous = np.asarray(induction, dtype=np.float32), np.asarray(previous, dtype=np.float32)
    if induction.shape != previous.shape or induction.ndim != 3 or induction.shape[0] != steps.size:
        raise ValueError(f"scores of shapes {induction.shape} and {previous.shape} do not fit {steps.size} steps")
    data = []
    layers, heads = induction.shape[1:]
    for layer in range(layers):
        for head in range(heads):
            # the head's colour; past seven heads, a marker's shape too (the dash tells the two scores apart)
            colour, _dash, symbol = category(layer * heads + head)
            shaped = {"mode": "lines"} if symbol == "circle" else {
                "mode": "lines+markers", "marker": {"symbol": symbol, "size": 7, "color": colour}}
            width = 3.5 if (layer, head) == highlight else 1.5
            name, group = names[layer][head], f"{layer}.{head}"
            data.append({"type": "scatter", **shaped, "name": name, "legendgroup": group, "x": steps,
                         "y": induction[:, layer, head], "line": {"color": colour, "width": width},
                         "hovertemplate": _("step %{x}<br>induction score %{y:.2f}") + f"<extra>{name}</extra>"})
            data.append({"type": "scatter", **shaped, "name": name, "legendgroup": group, "showlegend": False,
                         "x": steps, "y": previous[:, layer, head],
                         "line": {"color": colour, "width": width * 0.8, "dash": "dot"},
                         "hovertemplate": _("step %{x}<br>previous-token score %{y:.2f}") + f"<extra>{name}</extra>"})
    data.append({"type": "scatter", "mode": "lines+markers", "name": _("copy accuracy"), "x": steps,
                 "y": np.asarray(accuracy, dtype=np.float32), "line": {"color": SCORE_COLOUR, "width": 4},
                 "marker": {"size": 5, "color": SCORE_COLOUR},
                 "hovertemplate": _("step %{x}<br>copy accuracy %{y:.1%}") + "<extra></extra>"})
    return _over_steps(data, 480, max(int(steps.max(initial=0)), mark or 0, 1), title, mark, spans, {
        "yaxis": {"title": {"text": _("score")}, "range": [0, 1.05], "tickvals": [0, 0.25, 0.5, 0.75, 1]}})
