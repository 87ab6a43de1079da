"""The app's colours for signed values and for categories a student must tell apart, chosen for colour-blind students.

A signed value (a difference of attentions, an embedding, a similarity, a saliency) is blue below 0, white at 0 and
orange above: blue and orange stay apart under every common colour-vision deficiency (protanopia, deuteranopia,
tritanopia), where red and green do not. DIVERGING is ColorBrewer's RdBu on the blue side and its PuOr on the orange
side, each darker with the size of the value (CIE L* 20..97..33); tests/viz/test_colours.py checks the mirrored stops
apart by a CIE ΔE of at least 15 under simulated deficiencies (Machado et al., 2009).
"""
DIVERGING = [[0.0, "#053061"], [0.1, "#2166ac"], [0.2, "#4393c3"], [0.3, "#92c5de"], [0.4, "#d1e5f0"],
             [0.5, "#f7f7f7"],
             [0.6, "#fee0b6"], [0.7, "#fdb863"], [0.8, "#e08214"], [0.9, "#b35806"], [1.0, "#7f3b08"]]
NEGATIVE, POSITIVE = "#2166ac", "#b35806"  # a bar of a signed value: its sign's colour from DIVERGING
