"""The Translate page's "Switch heads off" part in a real browser: 我有一只猫 typed, every cross-attention head
switched off with one button (the sidebar and the link follow, the translation breaks, the exact match falls), then
every head back on."""
import re
from urllib.parse import parse_qs, urlsplit

from tests.e2e.test_pages import TIMEOUT, assert_no_error

EVERY_CROSS = [f"cross.{layer}.{head}" for layer in range(2) for head in range(4)]


def open_part(page, server, part: str, **params) -> None:
    query = "&".join([f"part={part}", *(f"{k}={v}" for k, v in params.items())])
    page.goto(f"{server}/translate?{query}")


def type_source(page, text: str) -> None:
    box = page.get_by_label("Chinese sentence (what the encoder reads)")
    box.wait_for(timeout=TIMEOUT)
    box.fill(text)
    box.press("Enter")


def test_switching_every_cross_head_off_breaks_the_translation_and_back_on_restores_it(page, server, shoot):
    open_part(page, server, "heads", src="他不喜欢狗")
    page.get_by_text("The whole model: he does not like dogs").wait_for(timeout=TIMEOUT)
    type_source(page, "我有一只猫")
    page.get_by_text("The whole model: I have a cat").wait_for(timeout=TIMEOUT)
    page.get_by_text(re.compile(r"single heads change nothing")).wait_for(timeout=TIMEOUT)  # the ranking is there

    page.get_by_role("button", name="All cross-attention").click()
    without = page.get_by_text(re.compile("Without the 8 heads switched off:"))
    without.wait_for(timeout=TIMEOUT)
    page.wait_for_function("() => location.search.includes('off=cross.0.0')", timeout=TIMEOUT)
    assert "I have a cat" not in without.inner_text()
    assert parse_qs(urlsplit(page.url).query)["off"] == [",".join(EVERY_CROSS)]
    chips = page.locator('[data-testid="stSidebar"] [aria-label^="Remove "]')  # a chip per head switched off
    assert chips.count() == 8
    falls = page.locator('[data-testid="stMetricDelta"]').inner_text()
    assert float(re.search(r"-?[\d.]+", falls).group()) < -50  # points: far below the whole model's 100 %
    assert_no_error(page)
    shoot(page, "translate-heads-cross-off")

    page.get_by_role("button", name="Switch every head back on").click()
    page.get_by_text(re.compile("No head is switched off")).wait_for(timeout=TIMEOUT)
    assert chips.count() == 0 and page.get_by_text("The whole model: I have a cat").count() == 1
    assert_no_error(page)


def test_an_unknown_character_and_a_text_outside_the_language_with_heads_off(page, server):
    open_part(page, server, "heads", src="我有一只狮", off="cross.1.3")
    page.get_by_text(re.compile("The translator has never seen this character: 狮")).wait_for(timeout=TIMEOUT)
    page.get_by_text(re.compile("Without the 1 head switched off:")).wait_for(timeout=TIMEOUT)
    type_source(page, "你好吗")
    page.get_by_text(re.compile("Not a sentence of the toy language")).wait_for(timeout=TIMEOUT)
    page.get_by_text(re.compile("Without the 1 head switched off:")).wait_for(timeout=TIMEOUT)
    assert_no_error(page)
