"""A visitor's text (a value from the link, a typed sentence, its tokens) inside the Markdown of a message.

Streamlit renders Markdown in every message, caption and label, with extras: links and images, LaTeX
between $...$, :red[...] colours, :material/...: icons, :smile: emoji, :streamlit: (its logo) and " -- "
as a dash. Escaping each special character with a backslash is not enough: the icons, the logo, the emoji
and the dashes are found in the text after Markdown has undone the backslashes. A code span is enough:
nothing inside it is parsed, and the extras skip code. Two gaps remain, both harmless: Streamlit rewrites
":material/" to ":material_" in the whole message before parsing it, code included, so a value with
":material/x:" shows ":material_x:"; and a message that puts `$` or a backtick before the span could pair
it with one inside (keep both out of the text around a code span).
"""
import re
import unicodedata

# Controls, format characters (bidi overrides, zero widths), surrogates, line and paragraph separators:
# invisible, or able to end the line, reorder the message or break the code span.
_INVISIBLE = frozenset({"Cc", "Cf", "Cs", "Zl", "Zp"})
_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def visible(text: str) -> str:
    """text with each invisible or line-breaking character written out: \\n, \\x1b, \\u202e."""
    return "".join(_written_out(c) if unicodedata.category(c) in _INVISIBLE else c for c in text)


def _written_out(c: str) -> str:
    n = ord(c)
    return _NAMED.get(c) or (f"\\x{n:02x}" if n < 0x100 else f"\\u{n:04x}" if n < 0x10000 else f"\\U{n:08x}")


def code(text: str) -> str:
    """text as a Markdown code span that shows it character for character (invisible ones written out).

    The fence is one backtick longer than the longest run of backticks inside, so none of them closes it;
    the spaces inside the fence are dropped by Markdown and let the text start or end with a backtick."""
    text = visible(text)
    fence = "`" * (max(map(len, re.findall("`+", text)), default=0) + 1)
    return f"{fence} {text} {fence}"


def plain(word: str) -> str:
    """A word of the translator's vocabulary in Markdown: a special token (<eos>, <unk>) as code, not as HTML."""
    return code(word) if word.startswith("<") else word
