"""The mounted chart (views.charts.mounted) in a real browser: a slider move redraws the same chart node, and the chart
looks as Streamlit's own st.plotly_chart draws the same figure."""
import io
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from harness.servers import spawn
from tests.e2e.streamlit_browser import settled
from tests.e2e.test_pages import TIMEOUT, assert_no_error, open_page, slider

ROOT = Path(__file__).resolve().parents[2]
# a graph div of views.charts.mounted (the all-heads mosaic is st.plotly_chart's)
MOUNTED = ".attnviz-chart.js-plotly-plot"
MARK = f"() => document.querySelectorAll({MOUNTED!r}).forEach((gd, i) => {{ gd.dataset.mark = 'kept' + i; }})"
MARKS = f"() => Array.from(document.querySelectorAll({MOUNTED!r}), gd => gd.dataset.mark ?? null)"
IMAGES = "() => Array.from(document.querySelectorAll('.js-plotly-plot .hm image'), im => im.getAttribute('href'))"


@pytest.mark.parametrize("path", ["", "masks", "encoder-decoder", "all-heads"])
def test_a_head_move_redraws_the_same_chart_nodes_with_new_data(page, server, path):
    """A marker set on every graph div survives a head move: the charts were redrawn in place (Plotly.react), not
    unmounted and plotted anew; the title names the new head and the map's image changed."""
    open_page(page, server, path, text="Keep the chart mounted", layer=0, head=0)  # not MiniLM's first head
    page.wait_for_selector(MOUNTED, timeout=TIMEOUT)  # all-heads: the mosaic (a chart too) may come first
    settled(page)
    page.evaluate(MARK)
    marks, images = page.evaluate(MARKS), page.evaluate(IMAGES)
    slider(page, "Head").press("ArrowRight")
    page.wait_for_selector(".gtitle:has-text('head 1')", timeout=TIMEOUT)
    settled(page)
    assert marks and all(marks) and page.evaluate(MARKS) == marks, (marks, page.evaluate(MARKS))
    assert page.evaluate(IMAGES) != images
    assert_no_error(page)


def test_the_mounted_chart_looks_like_streamlits_own(page):
    """Same theme, bold title, size and pixels as st.plotly_chart; the toolbar's camera downloads the chart."""
    with spawn(Path(__file__).with_name("chart_pair_app.py"), session_ttl=None,
               env={"PYTHONPATH": str(ROOT)}) as server:
        page.goto(server.url)
        page.wait_for_function("() => document.querySelectorAll('.gtitle').length == 2", timeout=TIMEOUT)
        settled(page)
        native, mounted = page.evaluate("""() => Array.from(document.querySelectorAll('.js-plotly-plot'), gd => ({
            template: gd.layout.template, title: gd.layout.title.text.replace(/<b>|<\\/b>/g, ''),
            bold: gd.layout.title.text.startsWith('<b>'), width: Math.round(gd.layout.width),
            height: gd.layout.height}))""")
        assert mounted == native
        charts = page.locator(".js-plotly-plot")
        native_png, mounted_png = (np.asarray(Image.open(io.BytesIO(charts.nth(i).screenshot())).convert("RGB"), int)
                                   for i in (0, 1))
        # the plotly package's plotly.js and Streamlit's own (another release) shade the colour bar's gradient
        # 1/255 apart in places; every other pixel is the same
        assert native_png.shape == mounted_png.shape and np.abs(native_png - mounted_png).max() <= 2
        charts.nth(1).hover()
        assert charts.nth(1).locator('.modebar-btn[data-title^="Download plot"]').count() == 1
        assert_no_error(page)
