"""Accessibility measured in the browser: axe-core (the axe-playwright-python package's copy) on every page view of
the registry, in both languages, normal and in lecture mode (bench/accessibility.py prints the table,
tests/e2e/test_accessibility.py asserts that no view has a serious or critical violation).

A page view is (path, lang, lecture). It is opened with page.goto and measured once Streamlit's script run has
finished and its charts are drawn: axe sees what a student sees.
"""
from dataclasses import dataclass, field
from urllib.parse import urlencode

from views.shell import registry, tour_stops

IMPACTS = ("critical", "serious", "moderate", "minor")
BLOCKING = ("critical", "serious")  # what no page view may have
LANGS = ("en", "zh")
MODES = ("0", "1")  # ?lecture=
IDLE = '[data-testid="stApp"][data-test-script-state="notRunning"]'  # Streamlit's own: no script run going on
CHART = '[data-testid="stMain"] .js-plotly-plot .main-svg'
DIAGRAM = '[data-testid="stMain"] img[src^="data:image/svg+xml"]'  # a figure drawn as an image (/modern's blocks)
FIGURE = f"{CHART}, {DIAGRAM}"
TIMEOUT = 90_000  # ms
TITLE = '[data-testid="stMain"] h1'  # the page's title: the frame draws it first (views/shell/frame.py)
# Until every chart of the page is drawn: the same number of plotly charts and no new one for a few frames.
_CHARTS_STILL = """async () => {
  const count = () => document.querySelectorAll('.js-plotly-plot .main-svg').length;
  let last = -1, still = 0;
  for (let i = 0; i < 400 && still < 4; i++) {
    await new Promise(done => setTimeout(done, 60));
    const now = count();
    still = now === last ? still + 1 : 0;
    last = now;
  }
  return last;
}"""


@dataclass(frozen=True)
class View:
    path: str  # registry path (the default page is opened at /)
    lang: str
    lecture: str
    params: tuple[tuple[str, str], ...] = ()  # the link's other parameters: a tour stop's, a part's

    @property
    def name(self) -> str:
        state = [f"stop {v}" if k == "tour" else v for k, v in self.params if k in ("tour", "part")]
        return " ".join([self.path, *state, self.lang, *(["lecture"] if self.lecture == "1" else [])])

    def url(self, base: str) -> str:
        spec = registry.by_path(self.path)
        at = "" if spec.default else spec.path
        query = urlencode({**dict(self.params), "lang": self.lang, "lecture": self.lecture})
        return f"{base.rstrip('/')}/{at}?{query}"


def views() -> list[View]:
    """Every page of the registry x both languages x normal and lecture mode, each in its default state."""
    return [View(spec.path, lang, mode) for spec in registry.PAGES for mode in MODES for lang in LANGS]


# The parts of the Translate and Language model pages (?part=), each a page of its own to a student
PARTS = (("translate", ("steps", "alignment", "heads", "forcing", "lens", "learning", "live")),
         ("language-model", ("next", "induction", "heads", "lens", "learning", "live")))


CHARTLESS_PARTS = ("heads", "live")  # tables of heads switched off; a live training's start button


def states() -> list[View]:
    """Other states students open, in both languages: each page as each tour stop opens it, and every part of the
    pages with parts."""
    stops = [(stop.path, {**stop.params, "tour": k}) for k, stop in enumerate(tour_stops.STOPS, start=1)]
    parts = [(path, {"part": part, **({"model": "gpt"} if path == "language-model" else {})})
             for path, names in PARTS for part in names]
    return [View(path, lang, "0", tuple((k, str(v)) for k, v in params.items()))
            for path, params in stops + parts for lang in LANGS]


@dataclass
class Found:
    """One page view's violations: per rule, its impact and how many elements break it."""
    view: View
    rules: dict[str, tuple[str, int]] = field(default_factory=dict)  # rule id -> (impact, elements)
    samples: dict[str, list[str]] = field(default_factory=dict)  # rule id -> a few offending elements' HTML
    chart_text: float | None = None  # the lowest contrast of the charts' text on its background (chart_text())

    def elements(self, impact: str) -> int:
        return sum(n for imp, n in self.rules.values() if imp == impact)

    def blocking(self) -> dict[str, tuple[str, int]]:
        return {rule: found for rule, found in self.rules.items() if found[0] in BLOCKING}


def opened(page, view: View, base: str) -> None:
    """Open a page view and wait until its script run is over and its charts are drawn."""
    page.goto(view.url(base))
    page.wait_for_selector(TITLE, timeout=TIMEOUT)  # this page's run has begun (before it, the app is idle too)
    page.wait_for_selector(IDLE, state="attached", timeout=TIMEOUT)
    if view.path != "tour" and dict(view.params).get("part") not in CHARTLESS_PARTS:  # the others draw a chart
        page.wait_for_selector(FIGURE, timeout=TIMEOUT)
    page.evaluate(_CHARTS_STILL)
    page.wait_for_selector(IDLE, state="attached", timeout=TIMEOUT)


# Each plotly chart's accessible name: the aria-label of the figure it is in (st.plotly_chart's alt on its element,
# the mounted chart's on its graph div), or null; then each diagram image's alt text, or null.
CHART_NAMES = """() => [...[...document.querySelectorAll('.js-plotly-plot')].map(gd => {
  const figure = gd.closest('[role="figure"]');
  return figure ? figure.getAttribute('aria-label') : null;
}), ...[...document.querySelectorAll('img[src^="data:image/svg+xml"]')].map(img => img.getAttribute('alt') || null)]"""


def chart_names(page) -> list[str | None]:
    """The accessible name of every chart and diagram on the page (None: one without a name)."""
    return page.evaluate(CHART_NAMES)


# The charts' text as drawn, each its colour and its background's (axis ticks and titles, colour bars, legends, notes
# on the white paper; a bar's number on the bar when it is drawn inside it): not the numbers written in a map's cells
# (plotly writes each in black or white for its cell's colour) nor the hover box. axe-core does not check text inside
# an SVG.
CHART_TEXT = """() => {
  const white = 'rgb(255, 255, 255)', pairs = new Set();
  for (const t of document.querySelectorAll('.js-plotly-plot .main-svg text')) {
    if (t.closest('.textpoint, .heatmaplayer, .hoverlayer') || !t.textContent.trim()) continue;
    let background = white;
    const bar = t.classList.contains('bartext') && t.closest('.point')?.querySelector('path');
    if (bar) {
      const b = bar.getBoundingClientRect(), r = t.getBoundingClientRect();
      if (r.left >= b.left - 1 && r.right <= b.right + 1 && r.top >= b.top - 1 && r.bottom <= b.bottom + 1) {
        background = getComputedStyle(bar).fill;
      }
    }
    pairs.add(getComputedStyle(t).fill + '|' + background);
  }
  return [...pairs].map(p => p.split('|'));
}"""


def _luminance(colour: str) -> float:
    if colour.startswith("#"):  # "#rrggbb"
        channels = [int(colour[i:i + 2], 16) / 255 for i in (1, 3, 5)]
    else:  # "rgb(r, g, b)", as the browser computes it
        channels = [int(c) / 255 for c in colour[colour.index("(") + 1:colour.index(")")].split(",")[:3]]
    r, g, b = [c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4 for c in channels]
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def contrast(colour: str, background: str = "rgb(255, 255, 255)") -> float:
    """WCAG's contrast ratio of two CSS colours, "rgb(r, g, b)" or "#rrggbb"."""
    lighter, darker = sorted((_luminance(colour), _luminance(background)), reverse=True)
    return (lighter + 0.05) / (darker + 0.05)


def chart_text(page) -> float | None:
    """The lowest contrast of the charts' text on its background on the page (None: no chart text)."""
    pairs = [(fg, bg) for fg, bg in page.evaluate(CHART_TEXT) if fg.startswith("rgb") and bg.startswith("rgb")]
    return min((contrast(fg, bg) for fg, bg in pairs), default=None)


def check(page, view: View) -> Found:
    """axe-core on the page as it is now."""
    from axe_playwright_python.sync_playwright import Axe  # noqa: PLC0415 - optional: only the browser tools need it

    results = Axe().run(page, options={"resultTypes": ["violations"]})
    found = Found(view, chart_text=chart_text(page))
    for rule in results.response["violations"]:
        found.rules[rule["id"]] = (rule["impact"] or "minor", len(rule["nodes"]))
        found.samples[rule["id"]] = [node["html"][:160] for node in rule["nodes"][:3]]
    return found


def measure(page, base: str, only: list[View] | None = None) -> list[Found]:
    """Every page view (or `only` those), one after the other in one browser page."""
    out = []
    for view in only or views():
        opened(page, view, base)
        out.append(check(page, view))
    return out
