"""Teacher forcing beside free generation, as a grid of words: one column per position, five rows (what teacher
forcing reads, what it predicts, the correct next word, what free generation writes, what it reads). A predicted or
written word is blue where it is the correct one and red where not; a word generation reads is yellow where it is
its own wrong word (teacher forcing reads the correct one there). The first divergence is framed."""
import html

import numpy as np

from locales import N_, _
from viz.spec import FigureSpec

NEUTRAL, RIGHT, WRONG, OWN = 0, 1, 2, 3
# grey, blue, red, yellow: apart under every common colour-vision deficiency (green and red were not, for deuteranopes:
# tests/viz/test_colours.py)
COLOURS = ("#ececec", "#9ecae1", "#f4a582", "#f0e442")
# a discrete colour scale over z = 0..3: each value its own colour
_SCALE = [[0.0, COLOURS[0]], [1 / 6, COLOURS[0]], [1 / 6, COLOURS[1]], [0.5, COLOURS[1]], [0.5, COLOURS[2]],
          [5 / 6, COLOURS[2]], [5 / 6, COLOURS[3]], [1.0, COLOURS[3]]]
ROWS = (N_("teacher forcing reads"), N_("teacher forcing predicts"), N_("correct next word"),
        N_("free generation writes"), N_("free generation reads"))


def forcing_grid(reference, forced_inputs, forced, forced_p, generated_inputs, generated, generated_p,
                 reference_p, first_divergence: int | None) -> FigureSpec:
    """reference: the correct words then <eos>; forced (and forced_p): teacher forcing's choice at each of its
    positions; generated (and generated_p): free generation's words (<eos> included); the *_inputs: what each read
    (<bos> first); reference_p: the probability teacher forcing gives each correct word."""
    T = max(len(reference), len(generated))
    z = np.full((5, T), np.nan, dtype=np.float32)
    z[0, :len(forced_inputs)] = NEUTRAL
    z[2, :len(reference)] = NEUTRAL
    for row, words in ((1, forced), (3, generated)):
        for i, w in enumerate(words):
            z[row, i] = RIGHT if i < len(reference) and w == reference[i] else WRONG
    for i, w in enumerate(generated_inputs):
        z[4, i] = OWN if i >= len(forced_inputs) or w != forced_inputs[i] else NEUTRAL
    rows = ((forced_inputs, None), (forced, forced_p), (reference, reference_p), (generated, generated_p),
            (generated_inputs, None))
    names = [_(row) for row in ROWS]
    at, at_p = _("{row}, position {position}: {word}"), _("{row}, position {position}: {word} (p {p})")
    text = [[""] * T for __ in rows]
    hover = [[""] * T for __ in rows]
    for r, (words, probs) in enumerate(rows):
        for i, word in enumerate(words):
            shown = html.escape(word, quote=False)
            p = "" if probs is None else f"{probs[i]:.2f}"
            text[r][i] = shown + (f"<br><sub>{p}</sub>" if p else "")
            hover[r][i] = (at_p if p else at).format(row=names[r], position=i + 1, word=shown, p=p)
    heat = {"type": "heatmap", "z": z, "x": [str(i + 1) for i in range(T)], "y": names, "text": text,
            "texttemplate": "%{text}", "textfont": {"size": 14}, "customdata": hover,
            "hovertemplate": "%{customdata}<extra></extra>", "colorscale": _SCALE, "zmin": 0, "zmax": 3,
            "showscale": False, "hoverongaps": False, "xgap": 2, "ygap": 2}
    layout = {"height": 360, "margin": {"l": 10, "r": 10, "t": 40, "b": 10},
              "xaxis": {"title": {"text": _("position (the word predicted after reading one more)")}, "side": "top",
                        "type": "category"},
              "yaxis": {"autorange": "reversed", "type": "category"}}
    if first_divergence is not None:
        layout["shapes"] = [{"type": "rect", "xref": "x", "yref": "paper", "x0": first_divergence - 0.5,
                             "x1": first_divergence + 0.5, "y0": 0, "y1": 1, "line": {"color": "#c0392b", "width": 3},
                             "fillcolor": "rgba(0,0,0,0)"}]
        layout["annotations"] = [{"text": _("first divergence"), "xref": "x", "yref": "paper", "x": first_divergence,
                                  "y": 0, "yanchor": "top", "showarrow": False, "font": {"color": "#c0392b"}}]
        layout["margin"]["b"] = 30
    return FigureSpec([heat], layout)
