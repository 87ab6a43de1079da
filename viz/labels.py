"""Token labels for axes, selectors and files: "i: token" where a token alone would be ambiguous."""
import unicodedata

SLANTED = -60  # key labels slant so that words fit under narrow columns
# A control character in a label (a byte-level BPE token can be one) is drawn as its visible picture: raw, it shows as
# nothing, and it makes a chart saved as SVG an XML file no program opens. C0 -> U+2400.., DEL -> U+2421, C1 -> \x..
_CONTROL_PICTURES = {**{c: chr(0x2400 + c) for c in range(0x20)}, 0x7F: "\u2421",
                     **{c: f"\\x{c:02x}" for c in range(0x80, 0xA0)}}


def visible(text: str) -> str:
    """text with each control character replaced by a visible stand-in (_CONTROL_PICTURES)."""
    return text.translate(_CONTROL_PICTURES)


def token_label(tokens, i: int) -> str:
    return f"{i}: {tokens[i]}"


def long_text_labels(tokens, limit: int = 64) -> tuple[str, ...]:
    """Tokens as axis labels; beyond `limit`, "i: token" says where each is and stays unique on repeats."""
    return tuple(tokens) if len(tokens) <= limit else tuple(token_label(tokens, i) for i in range(len(tokens)))


def width(label: str) -> int:
    """Columns a label takes: 2 for a wide (Chinese) character, 1 for the others."""
    return sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in label)


def tick_angle(labels) -> int:
    """The key labels' slant: 0 (upright) when each label is one Chinese character or at most two narrow ones, as
    a translator's source reads best; else SLANTED."""
    return 0 if len(labels) and all(width(str(label)) <= 2 for label in labels) else SLANTED
