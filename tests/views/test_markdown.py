"""views.shell.markdown.code: any text becomes one code span that shows it as typed, whatever Markdown it holds."""
import pytest
from markdown_it import MarkdownIt

from views.shell.markdown import code, visible

NASTY = [
    "`![](http://evil.example/p.png)[Log in](http://evil.example)`",
    "a\n\n[Log in](http://evil.example)\n# heading",  # a blank line would end a code span, and the paragraph
    "``` fence", "`", "x``y`", "<img src=x onerror=alert(1)> <b>bold</b> &amp;",
    "$x^2$ and $$y$$", r"$\href{http://evil.example}{x}$",
    ":red[red] :blue-background[blue] :orange-badge[badge] :material/warning: :material_warning: :smile: :streamlit:",
    "**bold** _it_ ~~struck~~ <- -> -- >= [ref]: http://evil.example",
    "tab\there NUL\x00 escape\x1b[31m override\u202eevil\u202c joiner\u200d line\u2028sep",
]


@pytest.mark.parametrize("text", NASTY)
def test_any_text_is_one_code_span_showing_it(text):
    tokens = MarkdownIt("commonmark").parseInline(f"Ignored {code(text)} in the link.")[0].children
    assert [t.type for t in tokens] == ["text", "code_inline", "text"]
    assert tokens[1].content == visible(text)


def test_invisible_characters_are_written_out_and_nothing_else_changes():
    assert visible("a\nb\r\tc\x00d\x1be\x7f") == r"a\nb\r\tc\x00d\x1be\x7f"
    assert visible("\u202eevil\u202c\u200d\u2028\U000e0001") == r"\u202eevil\u202c\u200d\u2028\U000e0001"
    assert visible("注意力 🤖 الانتباه `*_[]()!<>$:") == "注意力 🤖 الانتباه `*_[]()!<>$:"


def test_the_fence_is_longer_than_any_run_of_backticks_inside():
    assert code("plain") == "` plain `"
    assert code("a`b") == "`` a`b ``"
    assert code("```") == "```` ``` ````"
