"""A visitor's text made safe to show: invisible controls removed (and said), an unreadable character explained,
a long value cut where a notice echoes it."""
import re

from locales import _, ngettext
from views.widgets import notices

# Invisible characters that change how the text around them shows: C0 and C1 controls (but tab and line
# ends), bidi embeddings, overrides and isolates. Zero-width joiners stay: emoji sequences need them.
_CONTROLS = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def readable(text: str, new: bool) -> str:
    """The text without invisible controls (said once); a U+FFFD in new text is explained.

    U+FFFD is what a lone surrogate typed in the browser arrives as (views.shell.lone_surrogates), and what a link's
    bytes that are no UTF-8 are read as."""
    controls = _CONTROLS.findall(text)
    if controls:
        text = _CONTROLS.sub("", text)
        codes = ", ".join(f"U+{ord(c):04X}" for c in sorted(set(controls))[:5])
        notices.notice(ngettext("Removed {n} invisible control character ({codes}) from the text.",
                                "Removed {n} invisible control characters ({codes}) from the text.",
                                len(controls)).format(n=len(controls), codes=codes))
    if new and "\ufffd" in text:
        notices.notice(_("A character of the text could not be read (half of an emoji, say, from a broken copy and "
                         "paste, or a broken link): it is shown as �."))
    return text


def cut(text: str, limit: int = 60) -> str:
    """A visitor's value as a notice echoes it: at most `limit` characters."""
    return text if len(text) <= limit else text[:limit] + "…"
