"""The rollout page in the real browser: a short sentence draws the rollout map, the query's rollout and flow, and the
saliency; at 512 tokens the page (rollout map, bars, saliency) arrives within the issue's byte budget (1 MB)."""
from urllib.parse import quote

from harness.texts import sentence
from tests.e2e.streamlit_browser import settled
from tests.e2e.test_atlas_browser import received_bytes
from tests.e2e.test_pages import CHART, TIMEOUT, assert_no_error


def test_a_short_sentence_draws_rollout_flow_and_saliency(page, server, shoot):
    page.goto(f"{server}/rollout?text={quote('the cat sat on the mat')}&query=2")
    page.wait_for_selector(CHART, timeout=TIMEOUT)
    page.get_by_text("Gradient × input: saliency of the norm").first.wait_for(timeout=TIMEOUT)
    assert page.locator(".js-plotly-plot").count() == 3
    assert page.locator(".legendtext", has_text="flow").count() == 1  # the flow's bars beside the rollout's
    assert_no_error(page)
    shoot(page, "rollout")


def test_512_tokens_arrive_within_a_megabyte(page, server):
    count = received_bytes(page)
    page.goto(f"{server}/rollout?text={quote(sentence(512))}")
    page.get_by_text("Gradient × input: saliency of the norm").first.wait_for(timeout=TIMEOUT)
    settled(page)
    assert page.locator(".js-plotly-plot").count() == 3
    assert page.get_by_text("at most 24 tokens").count() == 1
    assert_no_error(page)
    assert 0 < count[0] <= 1_000_000, count[0]
