"""Token labels for axes, selectors and files: "i: token" where a token alone would be ambiguous."""


def token_label(tokens, i: int) -> str:
    return f"{i}: {tokens[i]}"


def long_text_labels(tokens, limit: int = 64) -> tuple[str, ...]:
    """Tokens as axis labels; beyond `limit`, "i: token" says where each is and stays unique on repeats."""
    return tuple(tokens) if len(tokens) <= limit else tuple(token_label(tokens, i) for i in range(len(tokens)))
