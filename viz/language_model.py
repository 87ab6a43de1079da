"""The Language model page's own figures: each word's loss along a text, its repeat marked. Plain dicts
(viz.spec.FigureSpec)."""
import numpy as np

from locales import _
from viz.attention import axis_labels
from viz.decoding import BAR_BLUE, CHOSEN_ORANGE, token_bars
from viz.spec import FigureSpec


def position_loss_spec(tokens, nll, repeated, title: str) -> FigureSpec:
    """Bars of each word's loss -log p(word | the words before), for tokens[1:] (nll (T-1,)): orange where the word
    repeats what followed an earlier occurrence of the word before it (copying from context can predict it), blue
    elsewhere. repeated: (T-1,) booleans."""
    colours = [CHOSEN_ORANGE if r else BAR_BLUE for r in repeated]
    return token_bars(tokens, axis_labels(tokens)[1:], np.asarray(nll, dtype=np.float32), colours,
                      _("word: %{x}<br>loss = %{y:.3f} nats"), title, 320,
                      _("word predicted (from the words before it)"),
                      {"title": {"text": _("loss (nats): −log p")}, "rangemode": "tozero"})
