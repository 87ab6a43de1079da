"""Compare in the real browser: two short sentences draw A, B, B − A and the query's rows, the same row outlined in
each map; at 512 tokens the page (one map at a time) arrives within the issue's byte budget (1 MB)."""
from urllib.parse import quote

from harness.texts import sentence
from tests.e2e.streamlit_browser import settled
from tests.e2e.test_atlas_browser import received_bytes
from tests.e2e.test_pages import CHART, TIMEOUT, assert_no_error


def test_two_sentences_draw_three_maps_with_the_row_outlined(page, server, shoot):
    page.set_viewport_size({"width": 1600, "height": 1000})
    page.goto(f"{server}/compare?text={quote('the cat sat on the mat')}&text2={quote('the big dog sat on the mat')}"
              "&query=3")
    page.locator(".gtitle", has_text="A and B over the keys both have").wait_for(timeout=TIMEOUT)
    assert page.locator(".js-plotly-plot").count() == 4
    assert page.locator(".js-plotly-plot .shapelayer path").count() == 3  # the outline, once per map
    assert_no_error(page)
    shoot(page, "compare")


def test_512_tokens_arrive_within_a_megabyte(page, server):
    count = received_bytes(page)
    long = sentence(512)
    page.goto(f"{server}/compare?text={quote(long)}&text2={quote('dog ' + long.partition(' ')[2])}")
    page.wait_for_selector(CHART, timeout=TIMEOUT)
    page.locator(".gtitle", has_text="B − A on the").wait_for(timeout=TIMEOUT)
    settled(page)
    assert_no_error(page)
    assert 0 < count[0] <= 1_000_000, count[0]
