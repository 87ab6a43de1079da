"""A 20,000-character text (the app's own limit) never writes a link the server refuses: the link leaves the text
out, says so, and reloads."""
import re

from tests.e2e.test_pages import CHART, TIMEOUT, assert_no_error, open_page


def test_a_20000_character_text_writes_a_link_that_reloads(page, server, shoot):
    open_page(page, server, "", layer=1)
    box = page.locator("textarea").first
    box.fill("我有一只猫" * 4_000)
    box.press("Control+Enter")  # submit, as a student leaving the box would
    page.get_by_text(re.compile("too long for the page's link")).wait_for(timeout=TIMEOUT)
    assert_no_error(page)
    shoot(page, "long-text")
    assert len(page.url) < 8_000 and "layer=1" in page.url  # nginx refuses a request line over 8 KB
    response = page.reload()
    assert response.status == 200
    page.wait_for_selector(CHART, timeout=TIMEOUT)
    assert_no_error(page)
