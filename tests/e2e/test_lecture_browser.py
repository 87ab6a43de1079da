"""Lecture mode in the real browser, in Chinese, on a 1280x720 projector: each page's main chart is whole in the
viewport without scrolling, its ticks at least 20 px, measured from the rendered SVG (bench/lecture.py prints the same
figures). 1920x1080 at 150 % is the same 1280x720 CSS pixels drawn at device scale 1.5, where bench/lecture.py measured
the very same figures on every page: checked here on three pages (a map, the step-by-step panels, the line view's
token columns), not on all of them again."""
from urllib.parse import urlencode

import pytest

from harness.projector import CHART, MEASURE, case_id, pages
from tests.e2e.streamlit_browser import settled
from tests.e2e.test_pages import TIMEOUT, assert_no_error

AT_150 = ("heatmap", "steps", "lines")
CASES = [pytest.param(1.0, path, params, id=f"1280x720-{case_id(path, params)}") for path, params in pages()] + [
    pytest.param(1.5, path, params, id=f"1920x1080-at-150-{path}") for path, params in pages() if path in AT_150]


@pytest.fixture
def projector(request, browser):
    context = browser.new_context(viewport={"width": 1280, "height": 720}, device_scale_factor=request.param)
    page = context.new_page()
    page.errors = []
    page.on("pageerror", lambda e: page.errors.append(str(e)))
    yield page
    context.close()


@pytest.mark.parametrize(("projector", "path", "params"), CASES, indirect=["projector"])
def test_the_main_chart_is_whole_with_20_px_ticks(projector, server, path, params):
    query = urlencode({**{k: str(v) for k, v in params.items()}, "lang": "zh", "lecture": "1"})
    projector.goto(f"{server}/{path}?{query}")
    projector.wait_for_selector(CHART + " .main-svg", timeout=TIMEOUT)
    settled(projector)
    found = projector.evaluate(MEASURE, CHART)
    assert found["visible"] == pytest.approx(1.0), found
    assert found["tick"] is not None and found["tick"] >= 20, found
    assert_no_error(projector)
