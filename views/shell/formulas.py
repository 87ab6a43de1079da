"""Formulas that fit their column: a long display formula (st.latex, $$...$$) breaks onto a second line at a top-level
operator or relation (=, +, ,), as KaTeX breaks inline math, instead of scrolling sideways.

KaTeX draws a display formula on one line that never breaks, and Streamlit puts it in a box that scrolls sideways
(`.katex-display`, overflow-x: auto). A formula wider than its column (a page's column at 1280 px, the step-by-step
page's formulas beside their matrices) was then a scrolling box that a keyboard cannot reach (nothing in it takes the
focus): axe-core's scrollable-region-focusable, 26 elements on 16 page views (bench/results/accessibility.md).
KaTeX draws a formula as a row of inline blocks, one per part between top-level operators; with white-space: normal
the row wraps between them, so the formula fits and nothing scrolls.

The CSS goes to the browser with the app's other page styles, in one element (app.py).
"""
# The padding takes a glyph's overhang past the last part of a line (a closing delimiter, an italic letter), which
# would otherwise make the box scroll by a pixel or two.
CSS = """<style>
.katex-display {padding-inline: 0.25em;}
.katex-display > .katex, .katex-display > .katex > .katex-html {white-space: normal;}
.katex-display > .katex > .katex-html > .base {margin: 0.1em 0;}
</style>"""

