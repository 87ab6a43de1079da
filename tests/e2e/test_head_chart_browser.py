"""The heatmap's own Layer and Head sliders (views/charts/head_chart.py) in a real browser: the keyboard moves them, the
chart repaints the head picked without the server, the server then learns it (link, download), and a long text
falls back to Streamlit's sliders."""
import csv
import io
import re
from urllib.parse import quote

import numpy as np
import pytest
import torch

from model.loading.sources import DEFAULT_KEY, find_source, load
from tests.e2e.streamlit_browser import count_runs, download, settled, wait_runs
from tests.e2e.test_pages import CHART, TIMEOUT, assert_no_error, open_page

TEXT = "Students move the head slider"
OWN = ".attnviz-heads"
TITLES = """() => {  // every title the chart shows, in order
  window.__titles = [];
  new MutationObserver(() => {
    const title = document.querySelector('.gtitle')?.textContent;
    if (title && title !== window.__titles.at(-1)) window.__titles.push(title);
  }).observe(document.body, {subtree: true, childList: true, characterData: true});
}"""
Z = "() => Array.from(document.querySelector('.attnviz-chart').data[0].z, row => Array.from(row))"


@pytest.fixture(scope="module")
def maps():
    """Every attention map of the default model, as the app computes them: maps(text) -> (layers, heads, T, T)."""
    loaded = load(find_source(DEFAULT_KEY))

    def of(text: str) -> np.ndarray:
        with torch.no_grad():
            _, attentions, _ = loaded.model.inputs_and_attentions(loaded.encode(text).input_ids)
        return attentions[:, 0].numpy()

    return of


def own(page, label: str):
    return page.locator(OWN).get_by_role("slider", name=label, exact=True)


def test_a_key_press_repaints_the_head_it_picks_with_the_server_deaf(page, server, maps):
    """Messages from the page to the server are held back: the chart still repaints the new head (the right map, to
    the 4 decimals of its hover) and no run happens; once they go through, the link follows."""
    held, hold, upstream = [], [False], []

    def route(ws):
        upstream.append(ws.connect_to_server())
        ws.on_message(lambda m: held.append(m) if hold[0] else upstream[0].send(m))
        upstream[0].on_message(ws.send)

    page.route_web_socket(re.compile(r"/_stcore/stream"), route)
    count_runs(page)
    open_page(page, server, "", text=TEXT, layer=0, head=0)  # not MiniLM's first head
    assert page.locator('[data-testid="stSlider"]').count() == 0 and page.locator(f"{OWN} input").count() == 2
    runs = page.runs
    hold[0] = True
    own(page, "Head").focus()
    for _ in range(3):
        page.keyboard.press("ArrowRight")
    page.wait_for_selector(".gtitle:has-text('Layer 0, head 3')", timeout=TIMEOUT)
    page.keyboard.press("ArrowDown")  # as any range input: down is left
    page.wait_for_selector(".gtitle:has-text('Layer 0, head 2')", timeout=TIMEOUT)
    own(page, "Layer").press("End")
    page.wait_for_selector(".gtitle:has-text('Layer 5, head 2')", timeout=TIMEOUT)
    np.testing.assert_allclose(page.evaluate(Z), maps(TEXT)[5, 2], atol=0.5e-4)
    page.wait_for_timeout(500)  # time-based by design: a run that must not happen has had time to
    assert page.runs == runs and held  # the moves' state waits, and nothing ran
    assert "layer=0" in page.url and "head=0" in page.url

    hold[0] = False
    for message in held:
        upstream[0].send(message)
    page.wait_for_function("() => location.search.includes('layer=5') && location.search.includes('head=2')",
                           timeout=TIMEOUT)
    wait_runs(page, runs + 1)
    settled(page)
    assert page.locator(".gtitle").text_content() == "Layer 5, head 2"
    assert (own(page, "Layer").input_value(), own(page, "Head").input_value()) == ("5", "2")
    assert_no_error(page)


def test_a_link_opens_the_sliders_and_the_chart_at_its_head(page, server, maps):
    open_page(page, server, "", text=TEXT, layer=2, head=5)
    assert page.locator(".gtitle").text_content() == "Layer 2, head 5"
    assert (own(page, "Layer").input_value(), own(page, "Head").input_value()) == ("2", "5")
    assert own(page, "Head").get_attribute("max") == "11" and own(page, "Layer").get_attribute("max") == "5"
    np.testing.assert_allclose(page.evaluate(Z), maps(TEXT)[2, 5], atol=0.5e-4)
    assert_no_error(page)


def test_quick_presses_are_not_undone_by_the_reruns_they_cause(page, server):
    """Each press writes the selection, and each write reruns the page; the reruns' answers (the same chart) must
    not move the slider back nor redraw an older head, and the maps are not sent again."""
    received = []
    page.on("websocket", lambda ws: ws.on("framereceived", lambda p: received.append(len(p))))
    count_runs(page)
    open_page(page, server, "", text=TEXT, layer=0, head=0)  # not MiniLM's first head
    runs, before = page.runs, len(received)
    page.evaluate(TITLES)
    own(page, "Head").focus()
    for _ in range(7):
        page.keyboard.press("ArrowRight")
        page.wait_for_timeout(40)  # a student's quick presses, 40 ms apart
    page.wait_for_function("() => location.search.includes('head=7')", timeout=TIMEOUT)
    wait_runs(page, runs + 1)
    settled(page)
    assert own(page, "Head").input_value() == "7" and page.locator(".gtitle").text_content() == "Layer 0, head 7"
    shown = [int(title.rsplit(" ", 1)[1]) for title in page.evaluate("() => window.__titles")]
    assert shown == sorted(shown) and shown[-1] == 7, shown  # never an older head again
    assert sum(received[before:]) < 40_000  # the page's other elements, and the chart by reference (all: 51 KB)
    assert_no_error(page)


def test_a_move_then_the_download_of_this_map(page, server, maps, tmp_path):
    count_runs(page)
    open_page(page, server, "", text=TEXT, layer=0, head=0)  # not MiniLM's first head
    runs = page.runs
    own(page, "Layer").press("ArrowRight")
    own(page, "Head").press("End")
    page.wait_for_function("() => location.search.includes('layer=1') && location.search.includes('head=11')",
                           timeout=TIMEOUT)
    wait_runs(page, runs + 1)
    settled(page)
    path = download(page, page.get_by_role("button", name="Download this map (CSV)").click, tmp_path)
    assert path.name == "heatmap_all-MiniLM-L6-v2_attention_layer1_head11.csv"  # page, model, layer, head
    rows = list(csv.reader(io.StringIO(path.read_text(encoding="utf-8-sig"))))
    np.testing.assert_allclose([[float(x) for x in row[1:]] for row in rows[1:]], maps(TEXT)[1, 11], rtol=1e-5)
    chart = page.locator(".js-plotly-plot").first  # the camera's file name follows the chart's own sliders (heads.js)
    chart.hover()
    image = download(page, chart.locator('.modebar-btn[data-title^="Download plot"]').click, tmp_path)
    assert image.name == "heatmap_all-MiniLM-L6-v2_layer1_head11.png"


def test_a_long_text_keeps_streamlits_sliders(page, server):
    long_text = " ".join(["word"] * 50)  # 52 tokens: every map together would be 389 KB
    page.goto(f"{server}/?text={quote(long_text)}&layer=0&head=4")
    page.wait_for_selector(CHART, timeout=TIMEOUT)
    settled(page)
    assert page.locator(OWN).count() == 0
    thumb = page.locator('[data-testid="stSlider"]').filter(has_text="Head").get_by_role("slider")
    thumb.press("ArrowRight")
    page.wait_for_selector(".gtitle:has-text('Layer 0, head 5')", timeout=TIMEOUT)
    page.wait_for_function("() => location.search.includes('head=5')", timeout=TIMEOUT)
    assert_no_error(page)
