"""The logit lens in the real browser: the Translate page's part draws the layers x steps grid, the last layer's
words being the translation."""
from tests.e2e.test_pages import TIMEOUT, assert_no_error


def test_the_lens_draws_every_layer_and_step(page, server, shoot):
    page.goto(f"{server}/translate?part=lens&src=%E6%88%91%E6%9C%89%E4%B8%80%E5%8F%AA%E7%8C%AB")  # 我有一只猫
    page.locator(".gtitle", has_text="read out as if it were the last").wait_for(timeout=TIMEOUT)
    cells = page.locator(".js-plotly-plot .hm text, .js-plotly-plot text.textpoint")
    texts = [t for t in cells.all_text_contents() if t]
    assert any(t.startswith("cat") for t in texts), texts[:12]
    assert_no_error(page)
    shoot(page, "translate-lens")
