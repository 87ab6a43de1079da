"""The toy GPT in a real browser: a page opens on its sentence written twice at its induction head, whose map shows
the stripe (each word of the second copy looking at the word after its first occurrence); the masks page says, in
Chinese too, that its causal mask is always on."""
from model.gpt.toy import SHOWCASE_TEXT as GPT_TEXT
from model.gpt.toy import showcase_head
from tests.e2e.streamlit_browser import settled
from tests.e2e.test_pages import CHART, TIMEOUT, assert_no_error


def test_the_heatmap_opens_at_the_induction_head(page, server, shoot):
    page.goto(f"{server}/?model=gpt")
    page.wait_for_selector(CHART, timeout=TIMEOUT)
    settled(page)
    layer, head = showcase_head()
    assert f"layer={layer}" in page.url and f"head={head}" in page.url
    assert page.locator("textarea").first.input_value() == GPT_TEXT
    assert page.get_by_text(f"Layer {layer}, head {head}").count() >= 1
    assert_no_error(page)
    shoot(page, "gpt-heatmap")


def test_the_masks_page_says_the_causal_mask_is_always_on_in_chinese(page, server):
    page.goto(f"{server}/masks?model=gpt&lang=zh")
    page.wait_for_selector(CHART, timeout=TIMEOUT)
    settled(page)
    assert page.get_by_text("因果掩码始终开启").count() == 1
    assert_no_error(page)
