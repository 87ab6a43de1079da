"""The head atlas in the real browser: the table's link opens that head on the heatmap page (a new tab, the same text
and model), and at 512 tokens the page arrives whole within the issue's byte budget (1 MB)."""
import re
from urllib.parse import quote

from harness.texts import sentence
from tests.e2e.streamlit_browser import settled
from tests.e2e.test_pages import CHART, TIMEOUT, assert_no_error

GRID = '[data-testid="stDataFrame"]'
HEADER_PX, ROW_PX = 35, 52  # the table's header and row heights (views/pages/atlas.py row_height)


def received_bytes(page) -> list:
    """A list whose first item counts the websocket payload bytes the browser receives from now on."""
    count = [0]
    page.on("websocket", lambda ws: ws.on("framereceived", lambda data: count.__setitem__(0, count[0] + len(data))))
    return count


def test_a_heads_link_opens_it_on_the_heatmap(page, server, shoot):
    page.set_viewport_size({"width": 1400, "height": 1000})
    page.goto(f"{server}/atlas?text={quote('the cat sat on the mat')}")
    page.wait_for_selector(CHART, timeout=TIMEOUT)
    grid = page.locator(GRID).first
    grid.wait_for(timeout=TIMEOUT)
    grid.scroll_into_view_if_needed()
    settled(page)
    assert_no_error(page)
    shoot(page, "atlas")
    box = grid.bounding_box()
    with page.context.expect_page(timeout=TIMEOUT) as opened:  # row 2 is layer 0, head 2; its link cell is first
        x, y = box["x"] + 40, box["y"] + HEADER_PX + 2 * ROW_PX + ROW_PX / 2
        page.mouse.move(x, y)  # the grid draws the link under the mouse, then takes the click
        page.wait_for_timeout(300)  # time-based by design: the grid shows the link after the mouse rests
        page.mouse.click(x, y)
    heatmap = opened.value
    heatmap.errors = []
    heatmap.on("pageerror", lambda e: heatmap.errors.append(str(e)))
    heatmap.wait_for_selector(CHART, timeout=TIMEOUT)
    assert re.search(r"layer=0&head=2", heatmap.url) and "text=the+cat+sat+on+the+mat" in heatmap.url
    assert heatmap.locator(".gtitle").first.text_content() == "Layer 0, head 2"
    assert_no_error(heatmap)
    heatmap.close()


def test_512_tokens_arrive_within_a_megabyte(page, server):
    count = received_bytes(page)
    page.goto(f"{server}/atlas?text={quote(sentence(512))}")
    page.wait_for_selector(CHART, timeout=TIMEOUT)
    page.locator(GRID).first.wait_for(timeout=TIMEOUT)
    settled(page)
    assert_no_error(page)
    assert page.get_by_text("72 heads (6 layers × 12 heads) over 512 tokens").count() == 1
    assert 0 < count[0] <= 1_000_000, count[0]
