"""The Translate page's "Teacher forcing" part in a real browser: 我有一只猫 with every cross-attention head switched
off (from the heads part's button) parts teacher forcing from free generation; an early training snapshot parts them
too, and the slider back to the trained model brings them together."""
import re

from tests.e2e.test_pages import TIMEOUT, assert_no_error
from tests.e2e.test_translate_heads_browser import open_part

GRID_WORDS = """(el) => Array.from(el.querySelectorAll('text'))
  .map((t) => t.textContent.split('\\u200b')[0])"""


def grid_words(page) -> list[str]:
    """Every word drawn in the grid (the first chart), the probabilities left out."""
    page.locator(".js-plotly-plot").first.wait_for(timeout=TIMEOUT)
    return page.locator(".js-plotly-plot").first.evaluate(GRID_WORDS)


def show_part(page, label: str) -> None:
    page.locator('[data-testid="stButtonGroup"] button', has_text=label).click()


def test_cross_heads_switched_off_part_teacher_forcing_from_generation(page, server, shoot):
    open_part(page, server, "heads", src="我有一只猫")
    page.get_by_text("The whole model: I have a cat").wait_for(timeout=TIMEOUT)
    page.get_by_role("button", name="All cross-attention").click()
    page.get_by_text(re.compile("Without the 8 heads switched off:")).wait_for(timeout=TIMEOUT)
    show_part(page, "Teacher forcing")
    page.get_by_text(re.compile(r"They part at position \d+\.")).wait_for(timeout=TIMEOUT)
    page.get_by_text(re.compile("with 8 heads switched off")).wait_for(timeout=TIMEOUT)
    words = grid_words(page)
    assert "first divergence" in words and "teacher forcing predicts" in words
    assert words[:5] == ["<bos>", "I", "have", "a", "cat"]  # teacher forcing reads the reference, shifted right
    assert page.locator(".js-plotly-plot").count() == 2  # the grid, and the decoder's self-attention
    assert_no_error(page)
    shoot(page, "translate-forcing-cross-off")


def test_an_early_snapshot_parts_them_and_the_trained_model_agrees(page, server, shoot):
    open_part(page, server, "forcing", src="我有一只猫", snap=150)
    page.get_by_text("They part at position 4.").wait_for(timeout=TIMEOUT)
    words = grid_words(page)
    assert "small" in words and "cats" in words and "first divergence" in words
    shoot(page, "translate-forcing-snapshot-150")
    page.get_by_role("slider").first.press("End")  # the snapshot slider, to the trained model
    page.get_by_text("They agree at every position.").wait_for(timeout=TIMEOUT)
    page.wait_for_function("() => location.search.includes('snap=600')", timeout=TIMEOUT)
    assert "first divergence" not in grid_words(page)
    assert_no_error(page)


def test_a_text_outside_the_language_asks_for_a_reference_then_reads_it(page, server):
    open_part(page, server, "forcing", src="你好吗")
    page.get_by_text(re.compile("Teacher forcing reads a correct translation")).wait_for(timeout=TIMEOUT)
    box = page.get_by_label(re.compile("English reference"))
    box.fill("how are you ?")
    box.press("Enter")
    page.get_by_text(re.compile(r"They part at position \d+\.")).wait_for(timeout=TIMEOUT)
    assert "<unk>" in grid_words(page)  # words it has never seen are read as <unk>
    page.get_by_text(re.compile("The translator has never seen these words")).wait_for(timeout=TIMEOUT)
    assert_no_error(page)
