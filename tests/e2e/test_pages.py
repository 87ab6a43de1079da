"""Every page in a real browser: it renders its charts, keeps the URL, and survives hostile text."""
import re
from urllib.parse import quote

import pytest

from harness.axe import DIAGRAM
from tests.e2e.streamlit_browser import settled
from views.shell.registry import PAGES as REGISTRY

CHART = ".js-plotly-plot .main-svg"
FIGURE = f"{CHART}, {DIAGRAM}"  # a chart, or a diagram drawn as an image (/modern opens on its three blocks)
PAGES = ["" if spec.default else spec.path for spec in REGISTRY if spec.path != "tour"]  # the default at /; the
# tour's page is links, not charts (tests/e2e/test_tour_browser.py)
TIMEOUT = 90_000


def open_page(page, server, path, **params):
    query = "&".join(f"{k}={quote(str(v))}" for k, v in params.items())
    page.goto(f"{server}/{path}" + (f"?{query}" if query else ""))
    page.wait_for_selector(FIGURE, timeout=TIMEOUT)
    settled(page)


def assert_no_error(page):
    assert page.locator('[data-testid="stException"]').count() == 0, page.locator(
        '[data-testid="stException"]').first.inner_text()
    assert not page.errors, page.errors


@pytest.mark.parametrize("path", PAGES)
def test_page_renders_its_charts(page, server, shoot, path):
    open_page(page, server, path)
    assert page.locator(FIGURE).count() >= 1
    assert_no_error(page)
    shoot(page, path or "heatmap")


def test_token_labels_and_text_round_trip(page, server):
    open_page(page, server, "", text="Students love attention maps", layer=2, head=5)
    labels = page.locator(".xtick text").all_text_contents()
    assert [lab.replace("\u200b", "") for lab in labels][:5] == ["[CLS]", "students", "love", "attention", "maps"]
    assert page.locator("textarea").input_value() == "Students love attention maps"
    assert "layer=2" in page.url and "head=5" in page.url and "Students" in page.url


def test_text_carries_to_another_page(page, server):
    open_page(page, server, "", text="Carry me over")
    page.get_by_role("link", name=re.compile("Softmax rows")).click()
    page.wait_for_url(re.compile("/softmax"), timeout=TIMEOUT)
    page.wait_for_selector(CHART, timeout=TIMEOUT)
    assert page.locator("textarea").first.input_value() == "Carry me over"


def test_hostile_text_is_shown_not_executed(page, server, shoot):
    hostile = "<script>window.__pwned=1</script><img src=x onerror=\"window.__pwned=2\"> & <b>bold</b>"
    open_page(page, server, "", text=hostile)
    assert page.evaluate("() => window.__pwned") is None
    assert page.locator("textarea").input_value() == hostile
    assert_no_error(page)
    shoot(page, "hostile")


def test_600_words_are_cut_with_a_notice(page, server, shoot):
    open_page(page, server, "", text=" ".join(["attention"] * 600))
    assert page.get_by_text(re.compile("the rest was cut")).count() == 1
    assert_no_error(page)
    shoot(page, "600-words")


@pytest.mark.parametrize("text", ["注意力机制很有趣", "attention 🤖🔥 emoji", "الانتباه هو كل ما تحتاجه"])
def test_scripts_and_emoji(page, server, text):
    open_page(page, server, "", text=text)
    assert_no_error(page)


def test_bad_url_value_gives_a_notice(page, server):
    open_page(page, server, "", layer=42)
    assert "Ignored layer=42 in the link" in page.locator('[data-testid="stAlert"]').first.inner_text()
    assert_no_error(page)


def slider(page, label):
    """A slider by the label shown above it: a chart's own (views/charts/head_chart.py: the heatmap's Layer and Head for
    a short text), else a Streamlit slider's thumb."""
    own = page.locator(".attnviz-heads").get_by_role("slider", name=label, exact=True)
    return own if own.count() else streamlit_slider(page, label)


def streamlit_slider(page, label):
    """A Streamlit slider's thumb by its label: for a page that has no chart of its own sliders, where the previous
    page's chart may still be on screen while this one draws."""
    return page.locator('[data-testid="stSlider"]').filter(has_text=label).get_by_role("slider")


def test_slider_moves_redraw_the_map_and_the_link(page, server):
    """Sliders rerun only their fragment of the page: the map, the URL and the rest of the page must follow."""
    open_page(page, server, "", text="Slide to the next layer", layer=0, head=0)
    slider(page, "Layer").press("ArrowRight")
    page.wait_for_selector(".gtitle:has-text('Layer 1, head 0')", timeout=TIMEOUT)
    slider(page, "Head").press("ArrowRight")
    page.wait_for_selector(".gtitle:has-text('Layer 1, head 1')", timeout=TIMEOUT)
    page.wait_for_function("() => location.search.includes('layer=1') && location.search.includes('head=1')",
                           timeout=TIMEOUT)
    assert page.locator("textarea").input_value() == "Slide to the next layer"
    assert page.get_by_role("link", name=re.compile("All heads")).count() == 1  # the navigation is still there
    assert_no_error(page)


def test_slider_positions_carry_to_another_page_and_move_on_there(page, server):
    """Moves rerun only the page's fragment; the next page draws its own widgets, which start where these
    were (views.widgets.state), and move on from there."""
    open_page(page, server, "", text="Carry the head over", layer=0, head=0)
    slider(page, "Layer").press("ArrowRight")
    page.wait_for_selector(".gtitle:has-text('Layer 1, head 0')", timeout=TIMEOUT)
    slider(page, "Head").press("ArrowRight")
    page.wait_for_selector(".gtitle:has-text('Layer 1, head 1')", timeout=TIMEOUT)
    page.get_by_role("link", name=re.compile("All heads")).click()
    page.wait_for_url(re.compile("/all-heads"), timeout=TIMEOUT)
    # the all-heads page's own slider, not the heatmap's chart still on screen while the page changes
    streamlit_slider(page, "Head").wait_for(timeout=TIMEOUT)
    page.wait_for_selector(".gtitle:has-text('Layer 1, head 1')", timeout=TIMEOUT)  # the preview of that head
    streamlit_slider(page, "Head").press("ArrowRight")
    page.wait_for_selector(".gtitle:has-text('Layer 1, head 2')", timeout=TIMEOUT)
    page.wait_for_function("() => location.pathname.endsWith('/all-heads') && location.search.includes('head=2')"
                           " && location.search.includes('layer=1')", timeout=TIMEOUT)
    page.get_by_role("link", name=re.compile("Attention heatmap")).click()  # back: the heatmap starts there
    # the heatmap's own chart and sliders, not the all-heads preview still on screen while the page changes
    page.locator(".attnviz-heads").get_by_role("slider", name="Head", exact=True).wait_for(timeout=TIMEOUT)
    page.wait_for_selector(".gtitle:has-text('Layer 1, head 2')", timeout=TIMEOUT)
    assert slider(page, "Head").input_value() == "2"
    slider(page, "Layer").press("ArrowRight")
    page.wait_for_selector(".gtitle:has-text('Layer 2, head 2')", timeout=TIMEOUT)
    assert_no_error(page)


def test_all_heads_sliders_move_the_preview_and_the_big_view_link(page, server):
    open_page(page, server, "all-heads", text="Every head at once", layer=0, head=0)
    slider(page, "Head").press("ArrowRight")
    page.wait_for_selector(".gtitle:has-text('Layer 0, head 1')", timeout=TIMEOUT)
    link = page.get_by_role("link", name=re.compile("Open layer 0 head 1 in the big view"))
    assert "head=1" in link.get_attribute("href")
    page.wait_for_function("() => location.search.includes('head=1')", timeout=TIMEOUT)
    assert_no_error(page)
