"""SmolLM2 in the real browser: the heatmap opens on `it` looking at `animal` (layer 13, head 8), and at 512 tokens the
pages that draw the most (the heatmap, all heads, the atlas, the steps) arrive within the page's megabyte, their maps
read a layer at a time on the server (runtime/layer_maps.py)."""
from urllib.parse import quote

import pytest

from harness.texts import sentence
from tests.e2e.streamlit_browser import settled
from tests.e2e.test_atlas_browser import received_bytes
from tests.e2e.test_pages import CHART, TIMEOUT, assert_no_error


def test_its_heatmap_opens_at_the_head_that_finds_the_referent(page, server):
    page.goto(f"{server}/?model=smollm2")
    page.wait_for_selector(CHART, timeout=TIMEOUT)
    settled(page)
    assert_no_error(page)
    assert page.locator(".gtitle").first.text_content() == "Layer 13, head 8"
    assert page.get_by_text("SmolLM2-135M-Instruct", exact=False).count() >= 1


@pytest.mark.parametrize("path", ["", "all-heads", "atlas", "steps"])
def test_512_tokens_arrive_within_a_megabyte(page, server, path):
    count = received_bytes(page)
    page.goto(f"{server}/{path}?model=smollm2&text={quote(sentence(600))}")
    page.wait_for_selector(CHART, timeout=TIMEOUT)
    settled(page)
    assert_no_error(page)
    assert page.get_by_text("a page reads at most 512").count() == 1
    assert 0 < count[0] <= 1_000_000, count[0]
