"""Every chart says what it shows (its text alternative: viz.describe, the chart's aria-label or st.plotly_chart's alt),
on every page as the tour opens it and on the parts no stop opens, in Chinese (every word from the catalog), and on the
heatmap and the steps page in English."""
import re

import pytest
from streamlit.testing.v1 import AppTest

import locales
from harness.apptest import TIMEOUT, _app_starting_at, charts
from harness.projector import case_id, pages

CASES = pages()
KINDS = {"en": re.compile(r"A heatmap|heatmaps side by side|A bar chart|A line chart|A scatter plot|An image"),
         "zh": re.compile(r"热力图|条形图|折线图|散点图|图像")}
ENGLISH_WORDS = re.compile(r"\b(A heatmap|A bar chart|A line chart|Rows|Columns|Across|Up|Series|Lines|On the chart)\b")


def _open(path: str, params: dict, lang: str) -> AppTest:
    at = AppTest.from_function(_app_starting_at, args=(path,), default_timeout=TIMEOUT)
    for k, v in {**params, "lang": lang}.items():
        at.query_params[k] = str(v)
    return at.run()


@pytest.mark.parametrize("path, params, lang", [(*case, "zh") for case in CASES] + [
    (path, params, "en") for path, params in CASES if path in ("heatmap", "steps")],
    ids=[f"{case_id(*case)}-zh" for case in CASES] + ["heatmap-en", "steps-en"])
def test_every_chart_has_a_text_alternative_that_names_it(path, params, lang):
    at = _open(path, params, lang)
    assert not at.exception, at.exception
    drawn = charts(at)
    assert drawn
    for chart in drawn:
        label = chart.label
        with locales.use(lang):
            nameless = locales._("A chart.")
        assert not label.startswith(nameless), label  # a title, or the name the page gives it
        assert KINDS[lang].search(label), label  # what kind of chart, and its size
        assert "{layer}" not in label and "{head}" not in label, label  # a chart with sliders names the map shown
        if lang == "zh":
            assert not ENGLISH_WORDS.search(label), label
