"""The neuron view and the rollout page in the real browser. A short sentence draws the neuron view's panels and the
query's vector, and the rollout map, the query's rollout and flow, and the saliency. At 512 tokens each page arrives
within the byte budget of their issue (1 MB): the neuron view draws the 48 most attended keys, the rollout page its
map, bars and saliency, its flow cut at FLOW_MAX_TOKENS."""
from urllib.parse import quote

import pytest

from harness.texts import sentence
from model.analysis.rollout import FLOW_MAX_TOKENS
from tests.e2e.streamlit_browser import settled
from tests.e2e.test_atlas_browser import received_bytes
from tests.e2e.test_pages import CHART, TIMEOUT, assert_no_error

DRAWN = {"neurons": "The query's vector q", "rollout": "Gradient × input: saliency of the norm"}  # the last panel


def test_a_short_sentence_draws_every_panel_of_the_neuron_view(page, server, shoot):
    page.goto(f"{server}/neurons?text={quote('the cat sat on the mat because it was tired')}")
    page.wait_for_selector(CHART, timeout=TIMEOUT)
    page.get_by_text(DRAWN["neurons"]).first.wait_for(timeout=TIMEOUT)
    assert page.locator(".js-plotly-plot").count() == 2
    assert page.locator(".gtitle", has_text="query 8: it against every key").count() == 1
    assert_no_error(page)
    shoot(page, "neurons")


def test_a_short_sentence_draws_rollout_flow_and_saliency(page, server, shoot):
    page.goto(f"{server}/rollout?text={quote('the cat sat on the mat')}&query=2")
    page.wait_for_selector(CHART, timeout=TIMEOUT)
    page.get_by_text(DRAWN["rollout"]).first.wait_for(timeout=TIMEOUT)
    assert page.locator(".js-plotly-plot").count() == 3
    assert page.locator(".legendtext", has_text="flow").count() == 1  # the flow's bars beside the rollout's
    assert_no_error(page)
    shoot(page, "rollout")


@pytest.mark.parametrize("path", ["neurons", "rollout"])
def test_512_tokens_arrive_within_a_megabyte(page, server, path):
    count = received_bytes(page)
    page.goto(f"{server}/{path}?text={quote(sentence(512))}")
    page.get_by_text(DRAWN[path]).first.wait_for(timeout=TIMEOUT)
    settled(page)
    if path == "neurons":
        assert page.locator(".gtitle", has_text="the 48 keys it attends to most").count() == 1
    else:
        assert page.locator(".js-plotly-plot").count() == 3
        assert page.get_by_text(f"at most {FLOW_MAX_TOKENS} tokens").count() == 1
    assert_no_error(page)
    assert 0 < count[0] <= 1_000_000, count[0]
