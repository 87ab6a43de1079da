"""The figures of a decoding, step by step: the causal self-attention so far, one step's cross-attention row, and
the next word's distribution with the word chosen and the words cut. Plain dicts (viz.spec.FigureSpec)."""
import html

import numpy as np

from locales import _
from viz.attention import axis_labels, heatmap_spec
from viz.compare import outlined
from viz.labels import tick_angle
from viz.spec import FigureSpec

BLOCKED_GREY = "#c8c8c8"
BAR_BLUE, CHOSEN_ORANGE, CUT_GREY = "#3b6ea8", "#e4572e", "#b4b4b4"


def causal_step_spec(probs, inputs, step: int, title: str, outline: bool = False) -> FigureSpec:
    """The decoder's self-attention (T, T) of a whole decoding, as it stands at `step`: rows up to `step` (the words
    read so far) with their probabilities, the later keys of each row grey (the causal mask blocks them), and the
    rows after `step` empty (not written yet). outline: a box around row `step`, the row this step adds."""
    z = np.array(probs, dtype=np.float32)
    T = z.shape[0]
    rows, cols = np.indices((T, T))
    z[rows > step] = np.nan
    blocked = np.where((cols > rows) & (rows <= step), 1.0, np.nan).astype(np.float32)
    spec = heatmap_spec(z, inputs, inputs, title, keys=_("key: a word read before (or itself)"),
                        queries=_("query: the word read at each step"))
    data, layout = spec.parts()
    labels = axis_labels(inputs)
    data.append({"type": "heatmap", "z": blocked, "x": labels, "y": labels, "showscale": False,
                 "colorscale": [[0, BLOCKED_GREY], [1, BLOCKED_GREY]], "hoverongaps": False,
                 "hovertemplate": _("query: %{y}<br>key: %{x}<br>blocked: a later word") + "<extra></extra>"})
    return outlined(FigureSpec(data, layout), step if outline else None, T)


def source_row_spec(row, src_tokens, title: str) -> FigureSpec:
    """One step's cross-attention over the source characters, as bars on a fixed 0..1 axis."""
    return token_bars(src_tokens, axis_labels(src_tokens), np.asarray(row, dtype=np.float32), BAR_BLUE,
                      _("key: %{x}<br>p = %{y:.4f}"), title, 300,
                      _("key: a Chinese character (the encoder's output)"),
                      {"title": {"text": _("attention")}, "range": [0.0, 1.0]})


def token_bars(tokens, labels: list[str], values: np.ndarray, colour, hover: str, title: str, height: int,
               x_title: str, yaxis: dict) -> FigureSpec:
    """One bar a token (labels: the tokens' axis labels, in order), coloured (one colour, or one each), under an
    escaped title."""
    bar = {"type": "bar", "x": labels, "y": values, "marker": {"color": colour},
           "hovertemplate": hover + "<extra></extra>"}
    return FigureSpec([bar], {
        "title": {"text": html.escape(title, quote=False)}, "height": height,
        "margin": {"l": 10, "r": 10, "t": 50, "b": 10},
        "xaxis": {"type": "category", "tickangle": tick_angle(tokens), "categoryorder": "array",
                  "categoryarray": labels, "title": {"text": x_title}},
        "yaxis": yaxis})


def next_word_spec(words, final, tempered, chosen: int | None, title: str) -> FigureSpec:
    """The next word's candidates, most likely first: bars of the probability it is drawn with (`final`: after
    temperature and truncation), the chosen one orange; a word cut by top-k or top-p as a grey bar of the
    probability it had before the cut (`tempered`), marked "cut"."""
    final, tempered = np.asarray(final, dtype=np.float32), np.asarray(tempered, dtype=np.float32)
    labels = axis_labels(words)[::-1]  # plotly draws horizontal bars bottom-up
    cut = (final == 0) & (tempered > 0)
    colours = [CHOSEN_ORANGE if i == chosen else CUT_GREY if cut[i] else BAR_BLUE for i in range(len(words))]
    shown = np.where(cut, tempered, final)
    cut_at, chosen_at = _("{p} cut"), _("{p} ← chosen")
    text = [(cut_at if cut[i] else chosen_at if i == chosen else "{p}").format(p=f"{p:.3f}")
            for i, p in enumerate(shown)]
    bar = {"type": "bar", "orientation": "h", "y": labels, "x": shown[::-1], "marker": {"color": colours[::-1]},
           "text": text[::-1], "textposition": "outside", "cliponaxis": False,
           "customdata": tempered[::-1],
           "hovertemplate": _("%{y}<br>p = %{x:.4f}<br>before the cut: %{customdata:.4f}") + "<extra></extra>"}
    return FigureSpec([bar], {
        "title": {"text": html.escape(title, quote=False)}, "height": 60 + 26 * len(words),
        "margin": {"l": 10, "r": 40, "t": 50, "b": 10},
        "xaxis": {"title": {"text": _("probability of being the next word")}, "range": [0.0, 1.15]},
        "yaxis": {"type": "category", "categoryorder": "array", "categoryarray": labels}})
