"""Watch it learn (/translate?part=learning) in a real browser: at the first snapshot a random model's map and
translation, at the last one I have a cat with where each word looked; the slider moves between them."""
from urllib.parse import parse_qs, urlsplit

from model.translator.snapshots import snapshot_steps
from tests.e2e.conftest import SHOTS
from tests.e2e.test_encoder_decoder_translator import ticks
from tests.e2e.test_pages import TIMEOUT, assert_no_error, open_page

SOURCE = ["我", "有", "一", "只", "猫"]


def charts(page) -> tuple[int, int]:
    """(the cross-attention map, the learning curve): their index among the page's plotly charts."""
    kinds = page.locator(".js-plotly-plot").evaluate_all("(ps) => ps.map((p) => p.data[0].type)")
    return kinds.index("heatmap"), kinds.index("scatter")


def test_the_first_and_the_last_snapshot(page, server, shoot):
    last = snapshot_steps()[-1]
    open_page(page, server, "translate", part="learning")
    page.get_by_text("Its translation at step 0 (random weights):").wait_for(timeout=TIMEOUT)
    cross, curve = charts(page)
    assert ticks(page, cross, "x") == SOURCE
    assert "cat" not in ticks(page, cross, "y") and len(ticks(page, cross, "y")) > 0
    assert page.get_by_text("✗ wrong").count() == 1
    marked = page.locator(".js-plotly-plot").nth(curve).evaluate("(p) => p.layout.shapes[0].x0")
    assert marked == 0
    assert_no_error(page)
    shoot(page, "translate-learning-first")

    slider = page.get_by_role("slider")  # the snapshot slider: the map's layer and head are sliders too
    slider = slider.nth(0)
    slider.focus()
    page.keyboard.press("End")
    page.get_by_text(f"Its translation after {last} steps:").wait_for(timeout=TIMEOUT)
    page.get_by_text("✓ right").wait_for(timeout=TIMEOUT)
    page.wait_for_function("() => location.search.includes('snap=%s')" % last, timeout=TIMEOUT)
    cross, curve = charts(page)
    page.wait_for_function(f"() => document.querySelectorAll('.js-plotly-plot')[{cross}].data[0].y.length === 5",
                           timeout=TIMEOUT)
    assert ticks(page, cross, "y") == ["I", "have", "a", "cat", "<eos>"]
    assert ticks(page, cross, "x") == SOURCE
    assert page.locator(".js-plotly-plot").nth(curve).evaluate("(p) => p.layout.shapes[0].x0") == last
    assert parse_qs(urlsplit(page.url).query)["snap"] == [str(last)]
    assert_no_error(page)
    shoot(page, "translate-learning-last")
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.locator(".js-plotly-plot").nth(cross).screenshot(path=str(SHOTS / "translate-learning-last-cross.png"))
