"""Lecture mode (?lecture=1): every page runs, in both languages, its charts made for a projector (20 px ticks, a
1280x720 height) and each saying what it shows (viz.describe), its controls in the sidebar; the steps page one step at
a time."""
import re

import pytest
from streamlit.testing.v1 import AppTest

import locales
from harness.apptest import TIMEOUT, _app_starting_at, bundled_traces, charts, link_value
from views.shell import lecture, registry, tour_stops
from viz.lecture import TICK_PX

PAGES = [spec.path for spec in registry.PAGES if spec.path != "tour"]
STATES = {stop.path: stop.params for stop in tour_stops.STOPS}  # each page as the tour opens it


def _open(path: str, **params) -> AppTest:
    at = AppTest.from_function(_app_starting_at, args=(path,), default_timeout=TIMEOUT)
    for k, v in {**STATES.get(path, {}), **params}.items():
        at.query_params[k] = str(v)
    return at.run()


# What a chart's text alternative (viz.describe) says it is, in each language; English words left in a Chinese one
KINDS = {"en": re.compile(r"A heatmap|heatmaps side by side|A bar chart|A line chart|A scatter plot|An image"),
         "zh": re.compile(r"热力图|条形图|折线图|散点图|图像")}
ENGLISH_WORDS = re.compile(r"\b(A heatmap|A bar chart|A line chart|Rows|Columns|Across|Up|Series|Lines|On the chart)\b")


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("path", PAGES)
def test_every_chart_is_made_for_a_projector_and_says_what_it_shows(path, lang):
    """Also each chart's text alternative (the mounted chart's aria-label, st.plotly_chart's alt): a name (its title,
    or what the page calls it), what kind of chart and its size, the map its own sliders show, in the page's language
    (the same words in normal mode: only the figure's fonts and height differ)."""
    at = _open(path, lecture="1", lang=lang)
    assert not at.exception, at.exception
    assert at.sidebar.toggle(key="lecture").value is True and link_value(at, "lecture") == "1"
    drawn = charts(at)
    assert drawn
    with locales.use(lang):
        nameless = locales._("A chart.")
    for chart in drawn:
        if chart.payload:  # a mounted chart: drawn by the app's partial plotly.js bundle
            assert {trace.get("type", "scatter") for trace in chart.figure["data"]} <= bundled_traces()
        layout = chart.figure["layout"]
        assert layout["height"] <= lecture.CHART_HEIGHT
        for axis in (k for k in layout if k.startswith(("xaxis", "yaxis"))):
            assert layout[axis]["tickfont"]["size"] >= TICK_PX, (axis, layout[axis])
        assert not chart.label.startswith(nameless) and KINDS[lang].search(chart.label), chart.label
        assert "{layer}" not in chart.label and "{head}" not in chart.label, chart.label
        assert lang == "en" or not ENGLISH_WORDS.search(chart.label), chart.label


@pytest.mark.parametrize("path", ["heatmap", "softmax", "masks", "steps", "all-heads", "encoder-decoder",
                                  "translate", "positional", "architecture"])
def test_the_controls_are_in_the_sidebar(path):
    at = _open(path, lecture="1")
    main_sliders = [s for s in at.main.slider]
    assert not main_sliders, [s.label for s in main_sliders]


def test_the_all_heads_page_draws_the_chosen_head_the_whole_width():
    """Its map has its probabilities in its cells (16 tokens here): in two thirds of the width they overlapped."""
    at = _open("all-heads", lecture="1", text="The animal didn't cross the street because it was too tired.")
    assert not at.exception
    preview = charts(at)[-1].figure
    assert len(preview["data"][0]["x"]) == 16 and preview["data"][0]["texttemplate"] == "%{z:.2f}"
    assert not at.main.columns and _open("all-heads").main.columns  # side by side only out of lecture mode


def test_the_steps_page_shows_one_step_at_a_time_with_previous_and_next():
    at = _open("steps", lecture="1")
    assert at.sidebar.slider(key="stage").value == 1
    first = len(charts(at))
    at.sidebar.button[1].click().run()  # Next
    assert at.sidebar.slider(key="stage").value == 2 and link_value(at, "stage") == "2"
    second = len(charts(at))
    assert 1 <= first <= 5 and 1 <= second <= 4  # one step's matrices, not the 20 of the whole page
    at.sidebar.button[0].click().run()  # Previous
    assert at.sidebar.slider(key="stage").value == 1


def test_without_lecture_mode_the_page_is_as_before():
    at = _open("steps")
    assert len(charts(at)) >= 16 and at.main.slider
