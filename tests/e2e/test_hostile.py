"""Hostile input against a running server in a real browser: the Markdown injection link on every page,
every Markdown extra of Streamlit in a link, a lone surrogate typed in a text box."""
import re
from urllib.parse import quote, urlsplit

import pytest

from tests.e2e.streamlit_browser import settled

CHART = ".js-plotly-plot .main-svg"
TIMEOUT = 90_000
INJECTION = "`![](http://evil.example/p.png)[Log in](http://evil.example)`"
# url path: a parameter the page reads (a slider from 0 or 1), where the injection goes
PAGES = {"": "layer", "all-heads": "layer", "softmax": "layer", "steps": "layer", "masks": "layer",
         "positional": "pe_from", "architecture": "layers", "encoder-decoder": "layer"}
ALERT = '[data-testid="stAlert"]'


def open_link(page, server, path: str, query: str) -> None:
    page.goto(f"{server}/{path}?{query}")
    page.wait_for_selector(CHART, timeout=TIMEOUT)
    settled(page)


def assert_no_error(page) -> None:
    assert page.locator('[data-testid="stException"]').count() == 0
    assert not page.errors, page.errors


@pytest.mark.parametrize("path", PAGES, ids=[p or "heatmap" for p in PAGES])
def test_the_injection_link_shows_its_text_and_nothing_else(page, server, path):
    asked = []
    page.on("request", lambda request: asked.append(request.url))
    open_link(page, server, path, f"{PAGES[path]}={quote(INJECTION)}")
    notice = page.locator(ALERT).filter(has_text="in the link")
    assert notice.count() == 1 and notice.is_visible()
    assert f"Ignored {PAGES[path]}={INJECTION[:60]}… in the link" in notice.inner_text()
    assert page.locator('a[href*="evil.example"]').count() == 0
    assert page.locator('img[src*="evil.example"]').count() == 0
    assert not [url for url in asked if urlsplit(url).hostname == "evil.example"]  # no tracking image fetched
    assert_no_error(page)


# Each extra Streamlit's Markdown has, in two values of at most 60 characters (a notice shows no more); the
# backtick first, as a single-backtick code span would end there.
EXTRAS = {"layer": "` :red[red] :orange-badge[b] :material/home: :streamlit: $x$",
          "head": "` <b>b</b> **s** _e_ -- :smile: [Log](http://evil.example)"}


def test_every_markdown_extra_in_a_link_is_shown_as_text(page, server):
    open_link(page, server, "", "&".join(f"{k}={quote(v)}" for k, v in EXTRAS.items()))
    for name, value in EXTRAS.items():
        notice = page.locator(ALERT).filter(has_text=f"Ignored {name}=")
        body = notice.locator('[data-testid="stMarkdownContainer"]')
        # Streamlit rewrites ":material/" to ":material_" before parsing, code spans included; the rest is as typed
        assert f"Ignored {name}={value.replace(':material/', ':material_')} in the link" in body.inner_text()
        for foreign in ("a", "img", "b", "strong", "em", ".katex", '[class*="stMarkdownColored"]',
                        ".stMarkdownBadge", '[data-testid="stIconMaterial"]'):
            assert body.locator(foreign).count() == 0, foreign
    assert_no_error(page)


# What a broken copy and paste, or a script, can put in a box: the first half of a UTF-16 pair, alone.
TYPE_LONE_SURROGATE = r"""(box) => {
  const setter = Object.getOwnPropertyDescriptor(Object.getPrototypeOf(box), "value").set;
  setter.call(box, "abc \ud800 def");
  box.dispatchEvent(new Event("input", {bubbles: true}));
  return Array.from(box.value, (c) => c.codePointAt(0));
}"""


@pytest.mark.parametrize("path, selector, commit, link", [
    ("", "textarea", "Control+Enter", ""),
    ("encoder-decoder", "[data-testid=stTextInput] input", "Enter", "&model=random")],  # English words as tokens
                         ids=["text area", "text input"])
def test_a_lone_surrogate_typed_in_a_box_is_replaced_and_said(page, server, path, selector, commit, link):
    closed = []
    page.on("websocket", lambda ws: ws.on("close", lambda _: closed.append(ws.url)))
    open_link(page, server, path, "text=hello&src=hello" + link)
    box = page.locator(selector).first
    assert box.evaluate(TYPE_LONE_SURROGATE) == [ord(c) for c in "abc \ufffd def"]  # replaced as it was typed
    box.press(commit)
    page.get_by_text(re.compile("A character of the text could not be read")).wait_for(timeout=TIMEOUT)
    page.wait_for_function("() => [...document.querySelectorAll('.xtick text')].some(t => t.textContent === 'def')",
                           timeout=TIMEOUT)  # the notice can come before the charts are redrawn
    ticks = [t.replace("\u200b", "") for t in page.locator(".xtick text").all_text_contents()]
    assert "abc" in ticks and "def" in ticks  # the edit reached the server and the model
    assert not closed  # the server refused nothing (it closes the connection on bad UTF-8)
    assert_no_error(page)
