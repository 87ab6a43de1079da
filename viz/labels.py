"""Token labels for axes, selectors and files: "i: token" where a token alone would be ambiguous."""
import unicodedata

SLANTED = -60  # key labels slant so that words fit under narrow columns


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
