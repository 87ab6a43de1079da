"""The app's colours for signed values and for categories a student must tell apart, chosen for colour-blind students.

A signed value (a difference of attentions, an embedding, a similarity, a saliency) is blue below 0, white at 0 and
orange above: blue and orange stay apart under every common colour-vision deficiency (protanopia, deuteranopia,
tritanopia), where red and green do not. DIVERGING is ColorBrewer's RdBu on the blue side and its PuOr on the orange
side, each darker with the size of the value (CIE L* 20..97..33); tests/viz/test_colours.py checks the mirrored stops
apart by a CIE ΔE of at least 15 under simulated deficiencies (Machado et al., 2009).

Categories (the heads of a chart, the sentences of a plot) are told apart by CATEGORIES: Okabe and Ito's colours
that keep 3:1 against white, as lines and dots must (WCAG 1.4.11), with Paul Tol's purple and indigo and IBM's light
blue; any two at least ΔE 15 apart under every simulated deficiency, as the diverging stops. There are seven: past
them a category is told apart by its line's dash and its marker's shape as well (category()), never by colour alone.
SUMMARY, black, is the line drawn over the categories (a copy accuracy over every head's score).
"""
DIVERGING = [[0.0, "#053061"], [0.1, "#2166ac"], [0.2, "#4393c3"], [0.3, "#92c5de"], [0.4, "#d1e5f0"],
             [0.5, "#f7f7f7"],
             [0.6, "#fee0b6"], [0.7, "#fdb863"], [0.8, "#e08214"], [0.9, "#b35806"], [1.0, "#7f3b08"]]
NEGATIVE, POSITIVE = "#2166ac", "#b35806"  # a bar of a signed value: its sign's colour from DIVERGING
CATEGORIES = ("#0072B2", "#D55E00", "#009E73", "#CC79A7", "#332288", "#AA3377", "#648FFF")
DASHES = ("solid", "dash", "dot", "dashdot")
SYMBOLS = ("circle", "square", "diamond", "triangle-up")
SUMMARY = "#000000"


def category(i: int) -> tuple[str, str, str]:
    """(colour, line dash, marker symbol) of the i-th category: the colours in turn with solid lines and round
    markers, then again with the next dash and shape; distinct for the first 28."""
    turn = i // len(CATEGORIES)
    return CATEGORIES[i % len(CATEGORIES)], DASHES[turn % len(DASHES)], SYMBOLS[turn % len(SYMBOLS)]
