"""The translator on the encoder-decoder page in a real browser: its translation, Chinese characters drawn as
glyphs (not as empty boxes) on the axes, a typed target, and its link reloaded as it was."""
import re
from urllib.parse import parse_qs, urlsplit

from tests.e2e.conftest import SHOTS
from tests.e2e.test_pages import CHART, TIMEOUT, assert_no_error, open_page

SOURCE = ["我", "有", "一", "只", "猫"]

# Two different characters drawn in the font of the charts' tick labels: with no font that has them, both are the
# same empty box (tofu), pixel for pixel; with one, they differ.
GLYPHS_DIFFER = """([a, b]) => {
  const font = getComputedStyle(document.querySelector('.xtick text')).fontFamily;
  const draw = (c) => {
    const canvas = document.createElement('canvas');
    canvas.width = canvas.height = 48;
    const ctx = canvas.getContext('2d');
    ctx.font = `40px ${font}`;
    ctx.fillText(c, 4, 40);
    return Array.from(ctx.getImageData(0, 0, 48, 48).data).join(',');
  };
  return draw(a) !== draw(b);
}"""


def ticks(page, chart: int, axis: str) -> list[str]:
    """The tick labels of one chart's axis in the order shown (left to right, top to bottom), without the
    invisible marks on repeated tokens."""
    labels = page.locator(".js-plotly-plot").nth(chart).locator(f".{axis}tick text").evaluate_all(
        "(ts) => ts.map((t) => { const r = t.getBoundingClientRect(); return [r.x + r.y, t.textContent]; })")
    return [text.replace("\u200b", "").replace("\u200c", "") for _, text in sorted(labels)]


def test_its_translation_with_chinese_and_english_on_the_axes(page, server, shoot):
    open_page(page, server, "encoder-decoder")
    page.get_by_text("Translation: I have a cat").wait_for(timeout=TIMEOUT)
    assert page.locator(".js-plotly-plot").count() == 3
    assert ticks(page, 1, "x") == SOURCE  # cross-attention: keys are the Chinese characters
    assert ticks(page, 1, "y") == ["<bos>", "I", "have", "a", "cat"]  # queries the English words
    assert ticks(page, 0, "x") == ["<bos>", "I", "have", "a", "cat"]
    assert page.evaluate(GLYPHS_DIFFER, ["我", "猫"]), "no font draws Chinese characters (fonts-noto-cjk)"
    assert page.get_by_role("combobox", name="Model", exact=True).input_value().startswith("Translator")
    assert_no_error(page)
    shoot(page, "encoder-decoder-translator")
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.locator(".js-plotly-plot").nth(1).screenshot(path=str(SHOTS / "encoder-decoder-translator-cross.png"))


def test_a_typed_target_and_the_link_reloaded(page, server, shoot):
    open_page(page, server, "encoder-decoder", src="她有两个孩子吗", layer=1)
    page.get_by_text("Translation: does she have two children ?").wait_for(timeout=TIMEOUT)
    target = page.get_by_label(re.compile("Target: English"))
    target.fill("she has two cats")
    target.press("Enter")
    page.get_by_text(re.compile("With your target")).wait_for(timeout=TIMEOUT)
    page.wait_for_function("() => location.search.includes('tgt=she')", timeout=TIMEOUT)
    assert ticks(page, 1, "y") == ["<bos>", "she", "has", "two", "cats"]
    link = parse_qs(urlsplit(page.url).query)
    assert (link["model"], link["src"], link["tgt"], link["layer"]) == (
        ["translator"], ["她有两个孩子吗"], ["she has two cats"], ["1"])
    page.reload()
    page.wait_for_selector(CHART, timeout=TIMEOUT)
    page.get_by_text(re.compile("With your target")).wait_for(timeout=TIMEOUT)
    assert ticks(page, 1, "y") == ["<bos>", "she", "has", "two", "cats"]
    assert ticks(page, 1, "x") == ["她", "有", "两", "个", "孩", "子", "吗"]
    assert page.get_by_label(re.compile("Target: English")).input_value() == "she has two cats"
    assert_no_error(page)
    shoot(page, "encoder-decoder-translator-target")


def test_an_unknown_character_is_named_on_the_page(page, server):
    open_page(page, server, "encoder-decoder", src="我有一只狮")
    page.get_by_text(re.compile("The translator has never seen this character: 狮")).wait_for(timeout=TIMEOUT)
    assert page.locator(".js-plotly-plot").count() == 3
    assert_no_error(page)
