"""The logit lens's picture: decoder layers (rows, the last on top) x decoding steps (columns), each cell the word
that layer would write and, in colour, its probability of the word the decoder finally wrote."""
import html

import numpy as np

from locales import _
from model.printable import visible
from viz.attention import VIRIDIS
from viz.spec import FigureSpec


def lens_figure(chosen_p, top_words, top_p, chosen_rank, steps, title: str, columns: str | None = None,
                hover: str | None = None) -> FigureSpec:
    """chosen_p (layers, T), top_words (layers, T, k) strings, top_p (layers, T, k), chosen_rank (layers, T),
    steps (T,) the column labels (the word each step wrote). columns: the columns' axis title; hover: a cell's hover
    template (by default both say decoding steps and the word the decoder wrote). Plotly's own dicts (viz.spec): a
    page draws it on every rerun, and building a go.Figure of it cost 20 ms."""
    chosen_p = np.asarray(chosen_p, dtype=np.float32)
    layers, t = chosen_p.shape
    top_words = [[[html.escape(visible(w), quote=False) for w in cell] for cell in row] for row in top_words]
    text = [[f"{row[i][0]}<br>{p[i][0]:.2f}" for i in range(t)] for row, p in zip(top_words, np.asarray(top_p))]
    ranks = np.asarray(chosen_rank).astype(str).tolist()
    custom = [[["<br>".join(f"{w} {q:.3f}" for w, q in zip(row[i], p[i])), rank[i]] for i in range(t)]
              for row, p, rank in zip(top_words, np.asarray(top_p), ranks)]
    heat = {"type": "heatmap", "z": chosen_p,
            "x": [f"{i + 1}: {html.escape(visible(w), quote=False)}" for i, w in enumerate(steps)],
            "y": [_("layer {n}").format(n=n) for n in range(layers)], "zmin": 0.0, "zmax": 1.0,
            "colorscale": VIRIDIS, "text": text, "texttemplate": "%{text}", "customdata": custom,
            "colorbar": {"thickness": 12, "title": {"text": "p"}},
            "hovertemplate": hover or _("%{y}, step %{x}<br>the word written: p = %{z:.3f}, rank %{customdata[1]}<br>"
                                        "top words:<br>%{customdata[0]}<extra></extra>")}
    return FigureSpec([heat], {
        "title": {"text": title, "font": {"size": 14}}, "height": max(260, 70 * layers + 150),
        "margin": {"l": 10, "r": 10, "t": 50, "b": 10},
        "xaxis": {"title": {"text": columns or _("step: the word the decoder wrote")}, "type": "category",
                  "tickangle": -30},
        "yaxis": {"type": "category"}})
