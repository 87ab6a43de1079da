"""One query's softmax row: the math (stable softmax with -inf, entropy, temperature) and its bar charts."""
import numpy as np

from locales import _
from model.masks import is_blocked
from viz.attention import axis_labels
from viz.spec import FigureSpec

BLOCKED_COLOR = "#9e9e9e"
LEGEND = {"orientation": "h", "yanchor": "bottom", "y": 1.0, "xanchor": "right", "x": 1.0}


def softmax_row(scores) -> np.ndarray:
    """Stable softmax of one row; -inf entries get probability 0; an all -inf row gives NaN (as torch does)."""
    x = np.asarray(scores, dtype=np.float64)  # (S,)
    finite = np.isfinite(x)
    if not finite.any():
        return np.full(x.shape, np.nan)
    e = np.where(finite, np.exp(x - x[finite].max()), 0.0)  # the max is subtracted so exp never overflows
    return e / e.sum()


def entropy(probs) -> float:
    """H = -sum p log p in nats; zero-probability keys add nothing (0 log 0 = 0)."""
    p = np.asarray(probs, dtype=np.float64)
    p = p[p > 0]
    return float(-(p * np.log(p)).sum())


def with_temperature(scores, temperature: float) -> np.ndarray:
    """softmax(s / T) of one row of scores s (the model's, already scaled and masked): T = 1 is the model's row,
    T > 1 flattens it toward uniform, T < 1 sharpens it toward the largest score."""
    if not temperature > 0:
        raise ValueError(f"the temperature must be positive, not {temperature}")
    return softmax_row(np.asarray(scores, dtype=np.float64) / temperature)


def as_neg_inf(mask_row) -> np.ndarray:
    """An additive mask row with blocked keys (model.masks.is_blocked) as exactly -inf (some models use a huge
    negative number)."""
    m = np.asarray(mask_row, dtype=np.float64)
    return np.where(is_blocked(m), -np.inf, m)


def score_bars(values, key_tokens, title: str, y_title: str, show_values: bool = False) -> FigureSpec:
    """Signed scores over the keys; -inf keys become grey hatched bars reaching down off the axis, labelled -inf.

    show_values writes each finite value on its bar (so a mask's zeros are visible). Plotly's dicts (viz.spec): the
    softmax page draws three of these on every rerun, and each took 6-10 ms as a checked go.Figure.
    """
    v = np.asarray(values, dtype=np.float64)
    if v.shape != (len(key_tokens),):
        raise ValueError(f"values of shape {v.shape} do not fit {len(key_tokens)} keys")
    labels = axis_labels(key_tokens)
    blocked = np.isneginf(v)
    finite = v[np.isfinite(v)]
    lo, hi = (min(finite.min(), 0.0), max(finite.max(), 0.0)) if finite.size else (0.0, 0.0)
    pad = 0.12 * (hi - lo) or 1.0
    bottom = lo - pad  # -inf bars are drawn from 0 down to the bottom of the axis
    shown = np.where(np.isfinite(v), v, np.nan).astype(np.float32)
    bars = [{"type": "bar", "x": labels, "y": shown, "name": _("score"), "marker": {"color": "#3b6ea8"},
             "textposition": "outside", "hovertemplate": _("key: %{x}<br>%{y:.4f}<extra></extra>")}]
    if show_values:
        bars[0]["text"] = [f"{x:.3g}" if np.isfinite(x) else "" for x in v]
    if blocked.any():
        bars.append({
            "type": "bar", "x": [lab for lab, b in zip(labels, blocked) if b],
            "y": np.full(int(blocked.sum()), bottom, np.float32), "name": _("blocked (-inf)"),
            "marker": {"color": BLOCKED_COLOR, "pattern": {"shape": "/"}}, "text": "-inf", "textposition": "inside",
            "insidetextanchor": "end", "textfont": {"color": "black"},
            "hovertemplate": _("key: %{x}<br>-inf (blocked)<extra></extra>")})
    layout = _layout(title, labels, showlegend=bool(blocked.any()), barmode="overlay", height=320)
    layout["yaxis"] = {"title": {"text": y_title}, "range": [bottom, hi + pad], "zeroline": True}
    return FigureSpec(bars, layout)


def probability_bars(probs, key_tokens, title: str, compare=None, compare_name: str = "",
                     name: str | None = None) -> FigureSpec:
    """Probabilities on a fixed 0..1 axis; `compare` (another row) is overlaid as a second bar per key. name: the
    bars' name (default: "probability"). Plotly's dicts, as score_bars."""
    name = _("probability") if name is None else name
    p = np.asarray(probs, dtype=np.float32)
    if p.shape != (len(key_tokens),):
        raise ValueError(f"probs of shape {p.shape} do not fit {len(key_tokens)} keys")
    labels = axis_labels(key_tokens)
    bars = [{"type": "bar", "x": labels, "y": p, "name": name, "marker": {"color": "#3b6ea8"},
             "hovertemplate": _("key: %{x}<br>p = %{y:.4f}") + f"<extra>{name}</extra>"}]
    if compare is not None:
        bars.append({"type": "bar", "x": labels, "y": np.asarray(compare, dtype=np.float32), "name": compare_name,
                     "marker": {"color": "#e4572e"},
                     "hovertemplate": _("key: %{x}<br>p = %{y:.4f}") + f"<extra>{compare_name}</extra>"})
    layout = _layout(title, labels, showlegend=compare is not None, barmode="group", height=340)
    layout["yaxis"] = {"title": {"text": _("probability")}, "range": [0.0, 1.0]}
    return FigureSpec(bars, layout)


def _layout(title: str, labels: list[str], **settings) -> dict:
    """What the bar charts of one row share: a slanted category axis of the keys, in their order."""
    return {"title": {"text": title}, **settings, "margin": {"l": 10, "r": 10, "t": 50, "b": 10}, "legend": LEGEND,
            "xaxis": {"type": "category", "tickangle": -60, "categoryorder": "array", "categoryarray": labels}}
