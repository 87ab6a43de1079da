"""The cleaning every text box and text parameter goes through (views.widgets.state.text ->
views.widgets.cleaning.readable), checked on the function itself: the fast tier's share of the hostile-input table
(tests/views/test_hostile_input.py renders it on every page, in the slow tier)."""
import pytest

from views.widgets import cleaning, notices

CONTROLS = "a\x00b \x1b[1mbold \u202eevil\u202c end"  # NUL, an ANSI escape, a right-to-left override and its end


@pytest.fixture
def said(monkeypatch) -> list[str]:
    said = []
    monkeypatch.setattr(notices, "notice", said.append)
    return said


def test_invisible_controls_are_removed_and_said_with_their_code_points(said):
    assert cleaning.readable(CONTROLS, new=True) == "ab [1mbold evil end"
    assert said == ["Removed 4 invisible control characters (U+0000, U+001B, U+202C, U+202E) from the text."]


def test_one_control_is_said_in_the_singular_and_at_most_five_code_points_are_listed(said):
    cleaning.readable("a\x07b", new=False)
    cleaning.readable("".join(chr(c) for c in range(1, 9)), new=False)
    assert said[0] == "Removed 1 invisible control character (U+0007) from the text."
    assert said[1].startswith("Removed 8 invisible control characters (U+0001, U+0002, U+0003, U+0004, U+0005)")


@pytest.mark.parametrize("text", [
    "",
    "word " * 600,
    "注意力就是你所需要的 الانتباه هو كل ما تحتاجه",
    "attention 🤖🔥 is all 👩‍🔬",  # the zero-width joiner of 👩‍🔬 stays: emoji sequences need it
    "<script>alert('x')</script> & <b>bold</b>",
    "tabs\tand\nline ends\r\nstay",
])
def test_text_without_controls_comes_back_as_typed_and_nothing_is_said(said, text):
    assert cleaning.readable(text, new=True) == text
    assert said == []


def test_a_character_that_could_not_be_read_is_explained_once_when_the_text_is_new(said):
    assert cleaning.readable("half an emoji \ufffd here", new=False) == "half an emoji \ufffd here"
    assert said == []
    cleaning.readable("half an emoji \ufffd here", new=True)
    assert len(said) == 1 and "could not be read" in said[0] and "�" in said[0]


def test_a_value_echoed_in_a_notice_is_cut_to_its_limit():
    assert cleaning.cut("x" * 60) == "x" * 60
    assert cleaning.cut("x" * 61) == "x" * 60 + "…"
    assert cleaning.cut("abcdef", limit=3) == "abc…"
