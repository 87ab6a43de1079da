"""The line view (BertViz's head view): tokens in two columns, queries on the left and keys on the right, a line from
each query to the keys it attends to, its opacity the attention weight, one colour per head.

A 512-token text has 12 x 512 x 512 weights; the lines drawn are bounded (lines_of): for each query and head its
strongest keys, at most MAX_SEGMENTS lines in all, and the page says what share of the attention they carry. The lines
travel as float32 arrays (a NaN between two segments), one trace per head and opacity band."""
import html

import numpy as np

from locales import _
from viz.colours import category
from viz.spec import FigureSpec

MAX_SEGMENTS = 6000  # lines in the figure, whatever the length (about 150 KB on the wire)
MIN_WEIGHT = 0.02  # a weight below this is not drawn (invisible at its opacity anyway)
BANDS = 8  # opacity steps: one trace per head and band


def lines_of(maps: np.ndarray, heads, max_segments: int = MAX_SEGMENTS, min_weight: float = MIN_WEIGHT):
    """maps (heads, T, T) of one layer; heads: which to draw. -> (per head: (queries, keys, weights) of the lines
    drawn, k the keys kept per query, the share of the drawn heads' attention the lines carry)."""
    t = maps.shape[-1]
    k = int(max(1, min(t, max_segments // max(1, t * len(heads)))))
    drawn = {}
    for h in heads:
        m = np.asarray(maps[h], dtype=np.float32)
        keys = np.argsort(-m, axis=-1, kind="stable")[:, :k]  # (T, k) the strongest keys of each query
        weights = np.take_along_axis(m, keys, axis=-1)
        keep = weights >= min_weight
        drawn[h] = (np.repeat(np.arange(t), k).reshape(t, k)[keep], keys[keep], weights[keep])
    total = sum(w.size for _q, _k, w in drawn.values())
    if total > max_segments:  # one key per query is still too many (long texts, many heads): the strongest lines
        order = np.argsort(-np.concatenate([w for _q, _k, w in drawn.values()]), kind="stable")[:max_segments]
        chosen = np.zeros(total, dtype=bool)
        chosen[order] = True
        starts = np.cumsum([0, *(w.size for _q, _k, w in drawn.values())])
        drawn = {h: tuple(a[chosen[lo:hi]] for a in lines)
                 for (h, lines), lo, hi in zip(drawn.items(), starts[:-1], starts[1:])}
    share = sum(float(w.sum()) for _q, _k, w in drawn.values()) / max(1, t * len(heads))
    return drawn, k, share


def _segments(queries, keys) -> tuple[np.ndarray, np.ndarray]:
    """x, y of line segments (0, query) -> (1, key), a NaN after each: one trace draws them all."""
    n = queries.size
    x = np.tile(np.array([0.0, 1.0, np.nan], dtype=np.float32), n)
    y = np.empty(3 * n, dtype=np.float32)
    y[0::3], y[1::3], y[2::3] = queries, keys, np.nan
    return x, y


def lines_spec(tokens, drawn: dict, query: int | None, title: str) -> FigureSpec:
    """The two columns of tokens and the lines; the selected query's lines bright and its label red, the others
    faint. Plotly's dicts (viz.spec): up to 12 heads x 8 bands of lines, each a trace, which as checked go.Scatters
    took 75 ms a rerun."""
    t = len(tokens)
    labels = [html.escape(str(tok), quote=False) for tok in tokens]
    traces = []

    def line(x, y, colour: str, dash: str, width: float, opacity: float) -> dict:
        return {"type": "scatter", "x": x, "y": y, "mode": "lines",
                "line": {"color": colour, "width": width, "dash": dash},
                "opacity": opacity, "hoverinfo": "skip", "showlegend": False}

    for h, (queries, keys, weights) in drawn.items():
        colour, dash, _symbol = category(h)  # the head's colour; past seven heads, its dash too
        band = np.minimum((weights * BANDS).astype(int), BANDS - 1)
        for b in range(BANDS):
            chosen = band == b
            if query is not None:
                chosen &= queries != query  # the selected query's own lines are drawn on top, below
            if chosen.any():
                fade = 0.15 if query is not None else 1.0
                traces.append(line(*_segments(queries[chosen], keys[chosen]), colour, dash, 1.5,
                                   fade * (b + 1) / BANDS))
        if query is not None and (queries == query).any():
            mine = queries == query
            for q, kk, w in zip(queries[mine], keys[mine], weights[mine]):
                traces.append(line(np.array([0.0, 1.0], dtype=np.float32), np.array([q, kk], np.float32), colour, dash,
                                   3, float(max(0.25, w))))
        traces.append({"type": "scatter", "x": [None], "y": [None], "mode": "lines",
                       "line": {"color": colour, "width": 4, "dash": dash}, "name": _("head {head}").format(head=h)})
    ys = np.arange(t, dtype=np.float32)
    # the tokens as text beside the columns' dots (marked token_column: thinned in lecture mode, viz/lecture.py);
    # not as the y axes' tick labels, which plotly takes 20 times longer to draw (5.8 s against 0.12-0.17 s at 512)
    for side, anchor in ((0.0, "left"), (1.0, "right")):
        colours = ["#d62728" if side == 0.0 and i == query else "#333333" for i in range(t)]
        traces.append({
            "type": "scatter", "x": np.full(t, side, dtype=np.float32), "y": ys, "mode": "markers+text",
            "text": labels, "textposition": "middle left" if anchor == "left" else "middle right",
            "marker": {"size": 7, "color": colours}, "textfont": {"color": colours}, "showlegend": False,
            "meta": {"token_column": True},
            "hovertemplate": (_("query %{text}: click to select") if side == 0.0 else _("key %{text}")) +
            "<extra></extra>"})
    layout = {"title": {"text": title, "font": {"size": 14}}, "height": int(min(8200, max(420, 18 * t + 120))),
              "margin": {"l": 10, "r": 10, "t": 50, "b": 10}, "clickmode": "event+select", "dragmode": False,
              "xaxis": {"range": [-0.8, 1.8], "visible": False, "fixedrange": True},
              "yaxis": {"range": [t - 0.5, -0.5], "visible": False, "fixedrange": True},
              "legend": {"orientation": "h", "y": 0, "yanchor": "top", "x": 0}}
    return FigureSpec(traces, layout)
