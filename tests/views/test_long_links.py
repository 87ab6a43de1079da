"""Every link the app writes reloads: a text too long for a link stays in the session, out of the URL, with a
notice; the other settings stay in the link."""
from urllib.parse import quote

import pytest

from harness.apptest import link_value, open_page
from views.widgets.state import LINK_TEXT_BYTES

LONG_CHINESE = "我有一只猫" * 4_000  # 20,000 characters: the app's own text limit, 180 KB in a link


def link_length(at) -> int:
    return len("&".join(f"{k}={quote(str(v), safe='')}" for k, v in at.query_params.items()))


@pytest.mark.parametrize("page, title, box", [("heatmap", "Attention heatmap", "text_area"),
                                              ("encoder-decoder", "Encoder-decoder", "text_input")])
def test_a_text_too_long_for_a_link_is_left_out_of_it_with_a_notice(page, title, box):
    at = open_page(page, title, layer="1")
    getattr(at, box)[0].input(LONG_CHINESE).run(timeout=300)
    assert not at.exception
    assert getattr(at, box)[0].value == LONG_CHINESE  # the page still reads the whole text
    assert LONG_CHINESE[:50] not in "".join(map(str, at.query_params.values()))
    assert link_value(at, "layer") == "1" and link_length(at) < 2 * LINK_TEXT_BYTES + 500
    assert any("too long for the page's link" in w.value for w in at.warning)
    getattr(at, box)[0].input("我有一只猫").run()  # short again: back in the link, no notice
    assert "我有一只猫" in {link_value(at, "text"), link_value(at, "src")}
    assert not any("too long for the page's link" in w.value for w in at.warning)


def test_a_text_just_under_the_limit_stays_in_the_link():
    text = "a" * LINK_TEXT_BYTES
    at = open_page("heatmap", "Attention heatmap")
    at.text_area[0].input(text).run()
    assert link_value(at, "text") == text
