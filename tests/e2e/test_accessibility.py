"""Every page usable by every student, in the real browser: axe-core finds no serious or critical violation on any page
view (every page of the registry, in English and Chinese, normal and in lecture mode; bench/accessibility.py prints
the whole table), every chart has a name that says what it shows and its text (which axe does not check in an SVG) at
4.5:1 at least, and the guided tour can be walked with the keyboard alone. One server, one browser, one page reused
for all the views."""
import re

import pytest

from harness.axe import BLOCKING, TITLE, chart_names, check, opened, views
from tests.e2e.streamlit_browser import settled
from tests.e2e.test_pages import CHART, TIMEOUT, assert_no_error
from views.shell import registry, tour_stops

VIEWS = views()


@pytest.fixture(scope="module")
def tab(browser):
    """One browser page for every view of this file, at a projector's 1280x720 (what bench/accessibility.py uses)."""
    context = browser.new_context(viewport={"width": 1280, "height": 720})
    page = context.new_page()
    page.errors = []
    page.on("pageerror", lambda e: page.errors.append(str(e)))
    yield page
    context.close()


@pytest.mark.parametrize("view", VIEWS, ids=[v.name.replace(" ", "-") for v in VIEWS])
def test_no_serious_or_critical_violation_every_chart_named_and_its_text_legible(tab, server, view):
    tab.errors.clear()
    opened(tab, view, server)
    found = check(tab, view)
    blocking = {rule: (impact, n, found.samples[rule]) for rule, (impact, n) in found.blocking().items()}
    assert not blocking, f"{view.name}: {', '.join(BLOCKING)} violations: {blocking}"
    names = chart_names(tab)
    assert view.path == "tour" or names, "no chart drawn"
    assert all(names), f"{view.name}: a chart without a name: {names}"
    assert found.chart_text is None or found.chart_text >= 4.5, f"{view.name}: chart text at {found.chart_text:.2f}:1"
    assert_no_error(tab)


def test_a_charts_name_follows_its_own_sliders(tab, server):
    """The heatmap's chart repaints in the browser when its own Head slider moves (views/charts/head_chart.py): its
    name says the head shown, in the page's language."""
    tab.goto(f"{server}/?lang=zh&text=The+cat+sat&layer=2&head=3")
    tab.wait_for_selector(".attnviz-chart[aria-label]", timeout=TIMEOUT)
    chart = tab.locator(".attnviz-chart")
    assert chart.get_attribute("aria-label").startswith("第 2 层，第 3 个头。热力图，5 行 × 5 列。")
    tab.locator(".attnviz-heads").get_by_role("slider", name="头", exact=True).press("ArrowRight")
    tab.wait_for_function("() => document.querySelector('.attnviz-chart').getAttribute('aria-label')"
                          ".startsWith('第 2 层，第 4 个头。')", timeout=TIMEOUT)
    assert_no_error(tab)


def focused(page) -> dict:
    element = page.evaluate("""() => { const e = document.activeElement;
        return {tag: e.tagName, text: (e.innerText || e.getAttribute('aria-label') || '').trim()}; }""")
    return element


def tab_to(page, name: re.Pattern, limit: int = 120) -> int:
    """Press Tab until the link whose text matches `name` has the focus (Shift+Tab back when it went past it: the
    focus may start below the link); how many key presses it took."""
    for presses in range(1, limit + 1):
        page.keyboard.press("Tab")
        now = focused(page)
        if now["tag"] == "A" and name.search(now["text"]):
            return presses
    for presses in range(limit + 1, 3 * limit + 1):
        page.keyboard.press("Shift+Tab")
        now = focused(page)
        if now["tag"] == "A" and name.search(now["text"]):
            return presses
    raise AssertionError(f"no link {name.pattern!r} reached with Tab and Shift+Tab; the focus is on {focused(page)}")


def test_the_whole_tour_with_the_keyboard_alone(tab, server):
    """From the tour's page, Tab to "Start the tour" and Enter; at each stop Tab to "Next: ..." and Enter, to the last
    stop: no mouse, no other page.goto. Each stop's page opens, at its stop, with its chart."""
    tab.goto(f"{server}/tour?lang=en")
    tab.wait_for_selector(TITLE, timeout=TIMEOUT)
    settled(tab)
    tab_to(tab, re.compile("Start the tour"))
    tab.keyboard.press("Enter")
    n = len(tour_stops.STOPS)
    for k, stop in enumerate(tour_stops.STOPS, start=1):
        at = "" if registry.by_path(stop.path).default else stop.path  # the default page is served at /
        tab.wait_for_url(re.compile(f"/{at}\\?.*tour={k}(&|$)"), timeout=TIMEOUT)
        tab.get_by_text(f"Tour, stop {k} of {n}").wait_for(timeout=TIMEOUT)
        tab.wait_for_selector(CHART, timeout=TIMEOUT)
        settled(tab)
        assert tab.locator(TITLE).inner_text() == registry.by_path(stop.path).title
        if k < n:
            tab_to(tab, re.compile("Next: "))
            tab.keyboard.press("Enter")
    assert_no_error(tab)
