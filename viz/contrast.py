"""Chart text a student can read: axis ticks and titles, the colour bar, the legend and hover text in a grey of 5.5:1
on white (WCAG AA asks 4.5:1) instead of the 3.7:1 of Streamlit's chart theme.

Both ways the app draws a chart (views/charts/mounted.py: its own element and st.plotly_chart) take Streamlit's chart
theme as the plotly template, whose text is #808495; the token labels on a heatmap's axes are what a student reads
most. readable() sets the darker grey in the figure itself, where the template leaves it: in the layout's font (the
colour bar's and annotations' text follow it), and on each axis's ticks and title, the hover label and the legend's
title, which the template sets on their own. A colour a figure sets itself stays.
"""
import copy
import re

GREY = "#646878"  # the theme's #808495, darker: 5.54:1 on white
_AXIS = re.compile(r"^[xy]axis\d*$")


def _with_colour(font) -> dict:
    return {"color": GREY, **(font or {})}


def _titled(title) -> dict:
    title = {"text": title} if isinstance(title, str) else dict(title or {})
    title["font"] = _with_colour(title.get("font"))
    return title


def readable(figure: dict) -> dict:
    """figure (plotly's dict) with its text in GREY where it sets no colour of its own; a new dict (the traces
    shared)."""
    figure = copy.copy(figure)
    layout = dict(figure.get("layout") or {})
    layout["font"] = _with_colour(layout.get("font"))
    for name in {"xaxis", "yaxis", *(k for k in layout if _AXIS.match(k))}:
        axis = dict(layout.get(name) or {})
        axis["tickfont"] = _with_colour(axis.get("tickfont"))
        axis["title"] = _titled(axis.get("title"))
        layout[name] = axis
    hover = dict(layout.get("hoverlabel") or {})
    hover["font"] = _with_colour(hover.get("font"))
    layout["hoverlabel"] = hover
    legend = dict(layout.get("legend") or {})
    legend["title"] = _titled(legend.get("title"))
    layout["legend"] = legend
    figure["layout"] = layout
    return figure
