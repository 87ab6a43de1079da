"""The neuron view in the real browser: a short sentence draws the five panels and the query's vector; at 512 tokens
the page arrives within the issue's byte budget (1 MB), the 48 most attended keys drawn."""
from urllib.parse import quote

from harness.texts import sentence
from tests.e2e.streamlit_browser import settled
from tests.e2e.test_atlas_browser import received_bytes
from tests.e2e.test_pages import CHART, TIMEOUT, assert_no_error


def test_a_short_sentence_draws_every_panel(page, server, shoot):
    page.goto(f"{server}/neurons?text={quote('the cat sat on the mat because it was tired')}")
    page.wait_for_selector(CHART, timeout=TIMEOUT)
    page.get_by_text("The query's vector q").first.wait_for(timeout=TIMEOUT)
    assert page.locator(".js-plotly-plot").count() == 2
    assert page.locator(".gtitle", has_text="query 8: it against every key").count() == 1
    assert_no_error(page)
    shoot(page, "neurons")


def test_512_tokens_arrive_within_a_megabyte(page, server):
    count = received_bytes(page)
    page.goto(f"{server}/neurons?text={quote(sentence(512))}")
    page.get_by_text("The query's vector q").first.wait_for(timeout=TIMEOUT)
    settled(page)
    assert page.locator(".gtitle", has_text="the 48 keys it attends to most").count() == 1
    assert_no_error(page)
    assert 0 < count[0] <= 1_000_000, count[0]
