"""The line view in the real browser: a click on a token of the left column selects it (its lines bright, its row
outlined in the heatmap, ?query= in the link); at 512 tokens the page arrives within the byte budget (1 MB)."""
import re
from urllib.parse import quote

from harness.texts import sentence
from tests.e2e.streamlit_browser import settled
from tests.e2e.test_atlas_browser import received_bytes
from tests.e2e.test_pages import TIMEOUT, assert_no_error

TITLE = ".gtitle"


def test_a_click_on_a_token_selects_it(page, server, shoot):
    page.set_viewport_size({"width": 1500, "height": 1100})
    page.goto(f"{server}/lines?text={quote('the cat sat on the mat')}&query=1")
    page.locator(TITLE, has_text="query 1: the selected").wait_for(timeout=TIMEOUT)
    assert_no_error(page)
    point = page.locator(".js-plotly-plot").first.locator(".scatterlayer .trace").nth(-2).locator("path.point").nth(3)
    point.click(force=True)  # "sat", the 4th token of the left column
    page.locator(TITLE, has_text="query 3: sat selected").wait_for(timeout=TIMEOUT)
    page.wait_for_url(re.compile(r"query=3"), timeout=TIMEOUT)
    assert_no_error(page)
    shoot(page, "lines")


def test_512_tokens_arrive_within_a_megabyte(page, server):
    count = received_bytes(page)
    page.goto(f"{server}/lines?text={quote(sentence(512))}")
    page.locator(TITLE, has_text="selected").wait_for(timeout=TIMEOUT)
    page.locator(TITLE, has_text="mean of the 12 heads drawn").wait_for(timeout=TIMEOUT)
    settled(page)
    assert_no_error(page)
    assert 0 < count[0] <= 1_000_000, count[0]
