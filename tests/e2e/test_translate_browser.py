"""The Translate page in a real browser: 我有一只猫 stepped into I have a cat with the buttons, play, an unknown
character named, empty input and 200 characters answered with a plain message, the link reloaded as it was."""
import re
from urllib.parse import parse_qs, urlsplit

from tests.e2e.streamlit_browser import back_and_play, emptied, next_writes, step_line
from tests.e2e.test_encoder_decoder_translator import ticks
from tests.e2e.test_pages import CHART, TIMEOUT, assert_no_error, open_page


def test_stepping_i_have_a_cat_word_by_word(page, server, shoot):
    open_page(page, server, "translate")
    page.get_by_text("I have a cat", exact=False).first.wait_for(timeout=TIMEOUT)
    assert "writes I" in step_line(page)
    assert ticks(page, 1, "x") == ["我", "有", "一", "只", "猫"]  # the cross-attention row over the characters
    next_writes(page, ["have", "a", "cat", "<eos>"])
    assert ticks(page, 2, "y")[0] == "<eos>"  # the next-word bars: the most likely (chosen) word on top
    assert_no_error(page)
    shoot(page, "translate-step-4")
    back_and_play(page, 4)
    assert_no_error(page)


def test_an_unknown_character_is_named_and_still_translated(page, server):
    open_page(page, server, "translate", src="我有一只狮")
    page.get_by_text(re.compile("The translator has never seen this character: 狮")).wait_for(timeout=TIMEOUT)
    assert page.locator("p", has_text=re.compile(r"^Translation")).count() == 1
    assert page.locator(".js-plotly-plot").count() == 3
    assert_no_error(page)


def test_empty_input_and_two_hundred_characters_get_a_plain_message(page, server, shoot):
    open_page(page, server, "translate")
    box = emptied(page, "Chinese sentence (what the encoder reads)", "Type a Chinese sentence above")
    box.fill("我有一只猫" * 40)
    box.press("Enter")
    page.get_by_text(re.compile("This text has 200 characters; the translator reads at most 64")).wait_for(
        timeout=TIMEOUT)
    page.wait_for_selector(CHART, timeout=TIMEOUT)
    assert_no_error(page)
    shoot(page, "translate-200-characters")


def test_the_link_of_a_beam_search_at_a_step_reloads_as_it_was(page, server):
    open_page(page, server, "translate", src="昨天我买了一本书", decode="beam", beam=3, step=2, layer=1)
    page.get_by_text(re.compile("The beam after step 2")).wait_for(timeout=TIMEOUT)
    link = parse_qs(urlsplit(page.url).query)
    assert (link["decode"], link["beam"], link["step"], link["layer"]) == (["beam"], ["3"], ["2"], ["1"])
    page.reload()
    page.wait_for_selector(CHART, timeout=TIMEOUT)
    page.get_by_text(re.compile("The beam after step 2")).wait_for(timeout=TIMEOUT)
    assert "writes a" in step_line(page)  # I bought a ...
    assert_no_error(page)
