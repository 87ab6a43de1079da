"""The tour in the real browser, in Chinese: from the tour's page to the first stop, then Next through every stop,
each page opening in its preset state with its chart, no error, the link of each stop in the address bar."""
import re

from tests.e2e.streamlit_browser import settled
from tests.e2e.test_pages import CHART, TIMEOUT, assert_no_error
from views.shell import registry, tour_stops


def test_walk_the_tour_in_chinese_with_next(page, server, shoot):
    page.goto(f"{server}/tour?lang=zh")
    page.get_by_role("link", name=re.compile("开始导览")).click()
    for k, stop in enumerate(tour_stops.STOPS, start=1):
        at = "" if registry.by_path(stop.path).default else stop.path  # the default page is served at /
        page.wait_for_url(re.compile(f"/{at}\\?.*tour={k}"), timeout=TIMEOUT)
        page.get_by_text(re.compile(f"第 {k} 站（共 {len(tour_stops.STOPS)} 站）")).wait_for(timeout=TIMEOUT)
        page.wait_for_selector(CHART, timeout=TIMEOUT)
        settled(page)
        for name, value in stop.params.items():
            if name not in ("text", "src", "prompt", "q", "mtext"):  # free text: written with + for spaces
                assert f"{name}={value}" in page.url, (name, page.url)
        assert "lang=zh" in page.url
        assert_no_error(page)
        if k == 2:
            shoot(page, "tour-stop-2-zh")
        if k < len(tour_stops.STOPS):
            page.get_by_role("link", name=re.compile("下一站")).click()


def test_a_stops_link_for_a_slide_opens_the_stop(page, server):
    """The link a lecturer copies (views.pages.tour.link, /heatmap?...) opens the stop, also for the default page."""
    page.goto(server + tour_stops.link(2, "zh"))
    page.get_by_text(re.compile("第 2 站")).wait_for(timeout=TIMEOUT)
    assert page.get_by_text("Page not found").count() == 0  # /, where the default page is served
    page.wait_for_selector(CHART, timeout=TIMEOUT)
    assert "layer=3" in page.url and "head=1" in page.url
    assert_no_error(page)
