"""Two languages in the real browser: the browser's language decides a first visit, the sidebar switch changes the
language and the link, and the language stays when the student moves to another page."""
import re

from tests.e2e.test_pages import CHART, TIMEOUT, assert_no_error


def _zh_context(browser, locale="zh-CN"):
    context = browser.new_context(viewport={"width": 1400, "height": 1000}, locale=locale)
    page = context.new_page()
    page.errors = []
    page.on("pageerror", lambda e: page.errors.append(str(e)))
    return context, page


def test_a_chinese_browser_gets_chinese_and_the_switch_writes_the_link(browser, server, shoot):
    context, page = _zh_context(browser)
    try:
        page.goto(f"{server}/softmax")
        page.wait_for_selector(CHART, timeout=TIMEOUT)
        page.get_by_role("heading", name="Softmax 行").wait_for(timeout=TIMEOUT)
        assert "lang=zh" in page.url
        shoot(page, "languages-zh-browser")
        page.locator('[data-testid="stSidebar"]').get_by_text("English", exact=True).click()
        page.get_by_role("heading", name="Softmax rows").wait_for(timeout=TIMEOUT)
        page.wait_for_function("() => location.search.includes('lang=en')", timeout=TIMEOUT)
        assert_no_error(page)
    finally:
        context.close()


def test_the_language_stays_across_pages(browser, server):
    context, page = _zh_context(browser, locale="en-US")
    try:
        page.goto(f"{server}/softmax?lang=zh&layer=2")
        page.get_by_role("heading", name="Softmax 行").wait_for(timeout=TIMEOUT)
        page.locator('[data-testid="stSidebarNav"]').get_by_role("link", name=re.compile("掩码")).click()
        page.get_by_role("heading", name="掩码").wait_for(timeout=TIMEOUT)
        page.wait_for_selector(CHART, timeout=TIMEOUT)
        page.wait_for_function("() => location.search.includes('lang=zh')", timeout=TIMEOUT)
        assert "layer=2" in page.url  # the layer came along too
        assert_no_error(page)
    finally:
        context.close()
