"""A chart's text alternative: what it shows, said in words, for a screen reader (the chart's aria-label).

describe() reads plotly's figure as a dict ({"data": [...], "layout": {...}}), whatever builder made it: its title
(or the name the page gives a chart without one), the kind of chart and its size (a heatmap's rows and columns, a
bar chart's bars, a line chart's lines), what its axes are, and the notes written on it. For example: "Layer 3, head
1. A heatmap of 16 rows by 16 columns. Rows: query (attending); columns: key (attended to)." Every word comes from
the catalog, in the session's language.

The numbers themselves are not in the text: each page's main chart has them in a download or a table beside it.
"""
import base64
import html
import re

import numpy as np

from locales import _, ngettext

_TAGS = re.compile(r"<[^>]*>")
_INVISIBLE = dict.fromkeys(map(ord, "\u200b\u200c\u200d\ufeff"))  # viz.attention.axis_labels' repeat marks
MAX_NAMES = 8  # the traces named one by one, at most (the line view draws a line per query and key)
_FULL_WIDTH_STOPS = ("。", "！", "？")
MAX_NOTES = 6  # the notes written on a chart, at most (more: numbers in the cells of a small map)


def plain(text) -> str:
    """A plotly label as plain text: no HTML tags (<b>, <br>), entities read, no zero-width marks, one line."""
    if not isinstance(text, str):
        return ""
    text = _TAGS.sub("", text.replace("<br>", " · ").replace("<br />", " · "))
    return " ".join(html.unescape(text).translate(_INVISIBLE).split())


def _title(value) -> str:
    return plain(value.get("text") if isinstance(value, dict) else value)


def _axis_title(layout: dict, name: str) -> str:
    axis = layout.get(name)
    return _title(axis.get("title")) if isinstance(axis, dict) else ""


def _length(value) -> int:
    """How many values a plotly array holds along its first axis: a list, a numpy array or a typed array."""
    if value is None:
        return 0
    if isinstance(value, dict):  # plotly's typed array: {dtype, bdata, shape?}
        shape = value.get("shape")
        if shape is not None:
            return int(str(shape).split(",")[0])
        return len(np.frombuffer(base64.b64decode(value["bdata"]), dtype=value["dtype"]))
    return len(value)


def _shape(z) -> tuple[int, int] | None:
    """(rows, columns) of a heatmap's z."""
    if z is None:
        return None
    if isinstance(z, dict):
        dims = [int(n) for n in str(z.get("shape", "")).split(",") if n.strip()]
        return (dims[0], dims[1]) if len(dims) == 2 else None
    array = np.asarray(z, dtype=object) if isinstance(z, list) else z
    if getattr(array, "ndim", 0) == 2:
        return array.shape[0], array.shape[1]
    if isinstance(z, list) and z and hasattr(z[0], "__len__"):
        return len(z), len(z[0])
    return None


def _names(traces: list[dict]) -> str:
    names = [plain(t.get("name")) for t in traces]
    names = [n for n in names if n]
    return ", ".join(names) if names and len(traces) <= MAX_NAMES else ""


def _heatmaps(traces: list[dict], layout: dict, shape: tuple[int, int] | None) -> list[str]:
    shape = shape or _shape(traces[0].get("z"))
    panels = len({(t.get("xaxis", "x"), t.get("yaxis", "y")) for t in traces})  # a map drawn over another is one
    if panels > 1:
        said = [ngettext("{n} heatmap side by side.", "{n} heatmaps side by side.", panels).format(n=panels)]
    elif shape is not None:
        rows = ngettext("{n} row", "{n} rows", shape[0]).format(n=shape[0])
        cols = ngettext("{n} column", "{n} columns", shape[1]).format(n=shape[1])
        said = [_("A heatmap of {rows} by {cols}.").format(rows=rows, cols=cols)]
    else:
        said = [_("A heatmap.")]
    rows, cols = _axis_title(layout, "yaxis"), _axis_title(layout, "xaxis")
    if rows and cols:
        said.append(_("Rows: {rows}; columns: {cols}.").format(rows=rows, cols=cols))
    elif rows:
        said.append(_("Rows: {rows}.").format(rows=rows))
    elif cols:
        said.append(_("Columns: {cols}.").format(cols=cols))
    return said


def _axes(layout: dict, horizontal: bool) -> list[str]:
    across, up = _axis_title(layout, "xaxis"), _axis_title(layout, "yaxis")
    if horizontal:  # horizontal bars: the categories go down, the values across
        return [_("Bars: {bars}; length: {values}.").format(bars=up, values=across)] if up and across else (
            [_("Length of the bars: {values}.").format(values=across)] if across else [])
    if across and up:
        return [_("Across: {across}; up: {up}.").format(across=across, up=up)]
    if up:
        return [_("Up: {up}.").format(up=up)]
    return [_("Across: {across}.").format(across=across)] if across else []


def _bars(traces: list[dict], layout: dict) -> list[str]:
    horizontal = traces[0].get("orientation") == "h"
    n = _length(traces[0].get("y" if horizontal else "x")) or _length(traces[0].get("x" if horizontal else "y"))
    if len(traces) == 1:
        said = [ngettext("A bar chart of {n} bar.", "A bar chart of {n} bars.", n).format(n=n)]
    else:
        names = _names(traces)
        said = [ngettext("A bar chart of {series} series, {n} bar each.", "A bar chart of {series} series, {n} bars "
                         "each.", n).format(series=len(traces), n=n)]
        if names:
            said.append(_("Series: {names}.").format(names=names))
    return said + _axes(layout, horizontal)


def _scatter(traces: list[dict], layout: dict) -> list[str]:
    drawn_as_lines = ["lines" in (t.get("mode") or "lines") for t in traces]  # plotly's default mode draws lines
    lines = [t for t, line in zip(traces, drawn_as_lines, strict=True) if line]
    points = [t for t, line in zip(traces, drawn_as_lines, strict=True) if not line]  # (== on numpy arrays is no test)
    said = []
    if lines:
        said.append(ngettext("A line chart of {n} line.", "A line chart of {n} lines.", len(lines)).format(
            n=len(lines)))
        names = _names(lines)
        if names:
            said.append(_("Lines: {names}.").format(names=names))
    if points:
        n = sum(_length(t.get("x")) or _length(t.get("y")) for t in points)
        said.append(ngettext("A scatter plot of {n} point.", "A scatter plot of {n} points.", n).format(n=n))
    return said + _axes(layout, False)


def describe(figure: dict, name: str = "", shape: tuple[int, int] | None = None) -> str:
    """What the chart shows, in a few sentences of the session's language. name: what to call a chart that has no
    title (or a better name than its title); shape: a heatmap's (rows, columns) when its z is not in the figure (a
    chart with its own sliders: views/charts/head_chart.py)."""
    layout = figure.get("layout") or {}
    traces = [t for t in figure.get("data") or [] if isinstance(t, dict)]
    title = plain(name) or _title(layout.get("title"))
    said = [_("{title}.").format(title=title.rstrip(".")) if title else _("A chart.")]
    kinds = [t.get("type", "scatter") for t in traces]
    heat = [t for t, k in zip(traces, kinds, strict=True) if k == "heatmap"]
    bars = [t for t, k in zip(traces, kinds, strict=True) if k == "bar"]
    scatter = [t for t, k in zip(traces, kinds, strict=True) if k in ("scatter", "scattergl")]
    if "image" in kinds:  # a picture of many maps (the all-heads mosaic), points over it to click
        said.append(_("An image."))
    elif heat:
        said += _heatmaps(heat, layout, shape)
    elif bars:
        said += _bars(bars, layout)
    elif scatter:
        said += _scatter(scatter, layout)
    notes = [plain(a.get("text")) for a in layout.get("annotations") or [] if isinstance(a, dict)]
    notes = [n for n in notes if n]
    if notes and len(notes) <= MAX_NOTES:
        said.append(_("On the chart: {notes}.").format(notes="; ".join(notes)))
    # sentences one after the other: a space after an English full stop, none after a Chinese one
    return "".join(s if s.endswith(_FULL_WIDTH_STOPS) else s + " " for s in said).strip()
