"""A token shown where its control characters would do harm: a byte-level BPE token can be one (a carriage return, a
line feed, \\x0e). Raw, it shows as nothing, breaks a one-line-per-word output, and makes a chart saved as SVG an XML
file no program opens; each is drawn as its visible picture instead: C0 -> U+2400.., DEL -> U+2421, C1 -> \\x.."""

_CONTROL_PICTURES = {**{c: chr(0x2400 + c) for c in range(0x20)}, 0x7F: "\u2421",
                     **{c: f"\\x{c:02x}" for c in range(0x80, 0xA0)}}


def visible(text: str) -> str:
    """text with each control character replaced by a visible stand-in."""
    return text.translate(_CONTROL_PICTURES)
