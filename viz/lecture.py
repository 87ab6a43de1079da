"""A figure made for a projector: 20 px ticks and token labels, a height that fits a 1280x720 screen, numbers in the
cells of a small map, and token labels thinned (and said so) where 20 px labels would not fit.

for_projector() takes plotly's figure as a dict ({"data": [...], "layout": {...}}) and returns a new one: pages
apply it to every chart in lecture mode (views/shell/lecture.py), whatever builder made it.
"""
import copy
import math

from locales import _

TICK_PX = 20  # ticks, token labels, legend, colour bar
TITLE_PX = 20
CELL_TEXT_TOKENS = 16  # a map of at most this many tokens a side gets its probabilities written in its cells
BAR_ROOM_PX = 700  # the width of a bar chart's plot across the page's main column, in lecture mode
LINE_PX = TICK_PX  # what one label needs across its axis, upright (20 px rows: labels touch, never overlap)


def _font(existing: dict | None, size: int) -> dict:
    return {**(existing or {}), "size": max(size, (existing or {}).get("size") or 0)}


def _step(n: int, room_px: float) -> int:
    """k: label every k-th of n tokens so that 20 px labels do not overlap in room_px (1: every one)."""
    return 1 if n * LINE_PX <= room_px else math.ceil(n * LINE_PX / max(room_px, LINE_PX))


def _said(n: int, k: int) -> str:
    return _("{n} tokens, one label in {k}").format(k=k, n=n)


def _thin(axis: dict, labels: list, room_px: float, name_axis: bool, across: bool = True) -> None:
    """Every category of an axis labelled, or every k-th when all would overlap, and then the axis title says so
    (across: on the title's line; else, for an upright axis whose title runs along the plot's height, on a line of its
    own, so that the longer title still fits beside a short plot)."""
    n = len(labels)
    if n == 0:
        return
    k = _step(n, room_px)
    axis["tickmode"] = "array"
    axis["tickvals"] = labels[::k]
    axis["ticktext"] = labels[::k]  # every label given: plotly would otherwise drop some silently
    if name_axis and k > 1:
        title = axis.get("title")
        text = title.get("text", "") if isinstance(title, dict) else (title or "")
        note = _said(n, k)
        joined = f"{text}{' ' if across else '<br>'}({note})" if text else note
        axis["title"] = {**(title if isinstance(title, dict) else {}), "text": joined}


def _thin_column(trace: dict, room_px: float) -> str | None:
    """A column of token labels drawn as text (a trace marked meta.token_column: the line view's): every k-th label
    where 20 px labels would overlap, the hover still naming every token; the note to put in the title, or None."""
    text = trace.get("text")
    k = _step(len(text), room_px) if isinstance(text, list | tuple) else 1
    if k == 1:
        return None
    template = trace.get("hovertemplate")
    if isinstance(template, str) and "%{text}" in template:  # the hover reads every label from customdata
        trace["customdata"] = list(text)
        trace["hovertemplate"] = template.replace("%{text}", "%{customdata}")
    trace["text"] = [label if i % k == 0 else "" for i, label in enumerate(text)]
    return _said(len(text), k)


def _labels(values) -> list:
    """A heatmap axis's token labels (strings), or [] for numbers (dimensions, positions: plotly spaces those)."""
    if not isinstance(values, list | tuple) or not values or not isinstance(values[0], str):
        return []
    return list(values)


def for_projector(figure: dict, height: int) -> dict:
    """figure, readable on a projector: fonts at least TICK_PX, `height` px tall, small maps' cells numbered."""
    figure = copy.copy(figure)
    layout = copy.deepcopy(figure.get("layout", {}))
    data = [dict(trace) for trace in figure.get("data", [])]
    layout["font"] = _font(layout.get("font"), TICK_PX)
    title = layout.get("title")
    if isinstance(title, dict):
        layout["title"] = {**title, "font": _font(title.get("font"), TITLE_PX)}
    layout["height"] = height
    layout["hoverlabel"] = {**layout.get("hoverlabel", {}), "font": _font(layout.get("hoverlabel", {}).get("font"),
                                                                           TICK_PX)}
    layout["legend"] = {**layout.get("legend", {}), "font": _font(layout.get("legend", {}).get("font"), TICK_PX)}
    for key in sorted({"xaxis", "yaxis", *(k for k in layout if k.startswith(("xaxis", "yaxis")))}):
        axis = dict(layout.get(key) or {})
        axis["tickfont"] = _font(axis.get("tickfont"), TICK_PX)
        axis["automargin"] = True
        if isinstance(axis.get("title"), dict):
            axis["title"] = {**axis["title"], "font": _font(axis["title"].get("font"), TICK_PX)}
        layout[key] = axis
    for annotation in layout.get("annotations", []):
        annotation["font"] = _font(annotation.get("font"), TICK_PX)
    thinned = set()  # the axes labelled already: a map drawn as two heatmaps (its masked cells grey) shares them
    for trace in data:
        if "colorbar" in trace:
            bar = dict(trace["colorbar"])
            bar["tickfont"] = _font(bar.get("tickfont"), TICK_PX)
            trace["colorbar"] = bar
        if trace.get("type") == "heatmap":
            x, y = _labels(trace.get("x")), _labels(trace.get("y"))
            bar = trace.get("colorbar", {}).get("title", {})
            probabilities = (bar.get("text") if isinstance(bar, dict) else bar) == "p"  # not a mask, not a Δp
            if probabilities and x and y and max(len(x), len(y)) <= CELL_TEXT_TOKENS and "texttemplate" not in trace:
                trace["texttemplate"] = "%{z:.2f}"
                trace["textfont"] = {"size": 16}
            plot_px = height - 150  # the rest is the title, the key labels above and the margins
            if x and "xaxis" not in thinned:
                _thin(layout.setdefault("xaxis", {}), x, plot_px * 1.6, name_axis=True)  # slanted labels: more room
                thinned.add("xaxis")
            if y and "yaxis" not in thinned:
                _thin(layout.setdefault("yaxis", {}), y, plot_px, name_axis=True, across=False)
                thinned.add("yaxis")
        if trace.get("type") == "bar" and _labels(trace.get("x")) and "tickvals" not in layout.get("xaxis", {}):
            _thin(layout.setdefault("xaxis", {}), _labels(trace.get("x")), BAR_ROOM_PX, name_axis=True)
    notes = {_thin_column(trace, height - 150) for trace in data if (trace.get("meta") or {}).get("token_column")}
    if notes - {None} and isinstance(layout.get("title"), dict):  # said once, in the title: the axes are hidden
        title = layout["title"]
        layout["title"] = {**title, "text": f"{title.get('text', '')} ({', '.join(sorted(notes - {None}))})"}
    if any(isinstance(a, dict) and a.get("side") == "top" for k, a in layout.items() if k.startswith("xaxis")):
        margin = layout.setdefault("margin", {})  # the title above the key labels and their axis title
        margin["t"] = max(margin.get("t") or 0, 200)
    figure["layout"] = layout
    figure["data"] = data
    return figure
