"""The Language model page's own figures: each word's loss along a text, its repeat marked. Plain dicts
(viz.spec.FigureSpec)."""
import html

import numpy as np

from locales import _
from viz.attention import axis_labels
from viz.decoding import BAR_BLUE, CHOSEN_ORANGE
from viz.labels import tick_angle
from viz.spec import FigureSpec


def position_loss_spec(tokens, nll, repeated, title: str) -> FigureSpec:
    """Bars of each word's loss -log p(word | the words before), for tokens[1:] (nll (T-1,)): orange where the word
    repeats what followed an earlier occurrence of the word before it (copying from context can predict it), blue
    elsewhere. repeated: (T-1,) booleans."""
    nll = np.asarray(nll, dtype=np.float32)
    labels = axis_labels(tokens)[1:]
    colours = [CHOSEN_ORANGE if r else BAR_BLUE for r in repeated]
    bar = {"type": "bar", "x": labels, "y": nll, "marker": {"color": colours},
           "hovertemplate": _("word: %{x}<br>loss = %{y:.3f} nats") + "<extra></extra>"}
    return FigureSpec([bar], {
        "title": {"text": html.escape(title, quote=False)}, "height": 320,
        "margin": {"l": 10, "r": 10, "t": 50, "b": 10},
        "xaxis": {"type": "category", "tickangle": tick_angle(tokens), "categoryorder": "array",
                  "categoryarray": labels,
                  "title": {"text": _("word predicted (from the words before it)")}},
        "yaxis": {"title": {"text": _("loss (nats): −log p")}, "rangemode": "tozero"}})
