"""Accessibility measured in the browser: axe-core (the axe-playwright-python package's copy) on every page view of
the registry, in both languages, normal and in lecture mode (bench/accessibility.py prints the table,
tests/e2e/test_accessibility.py asserts that no view has a serious or critical violation).

A page view is (path, lang, lecture). It is opened with page.goto and measured once Streamlit's script run has
finished and its charts are drawn: axe sees what a student sees.
"""
from dataclasses import dataclass, field
from urllib.parse import urlencode

from views.shell import registry

IMPACTS = ("critical", "serious", "moderate", "minor")
BLOCKING = ("critical", "serious")  # what no page view may have
LANGS = ("en", "zh")
MODES = ("0", "1")  # ?lecture=
IDLE = '[data-testid="stApp"][data-test-script-state="notRunning"]'  # Streamlit's own: no script run going on
CHART = '[data-testid="stMain"] .js-plotly-plot .main-svg'
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
    path: str  # registry path ("" would be the default page's /; it is opened by its own path)
    lang: str
    lecture: str

    @property
    def name(self) -> str:
        return f"{self.path} {self.lang}{' lecture' if self.lecture == '1' else ''}"

    def url(self, base: str) -> str:
        spec = registry.by_path(self.path)
        at = "" if spec.default else spec.path
        return f"{base.rstrip('/')}/{at}?{urlencode({'lang': self.lang, 'lecture': self.lecture})}"


def views() -> list[View]:
    """Every page of the registry x both languages x normal and lecture mode."""
    return [View(spec.path, lang, mode) for spec in registry.PAGES for mode in MODES for lang in LANGS]


@dataclass
class Found:
    """One page view's violations: per rule, its impact and how many elements break it."""
    view: View
    rules: dict[str, tuple[str, int]] = field(default_factory=dict)  # rule id -> (impact, elements)
    samples: dict[str, list[str]] = field(default_factory=dict)  # rule id -> a few offending elements' HTML

    def elements(self, impact: str) -> int:
        return sum(n for imp, n in self.rules.values() if imp == impact)

    def blocking(self) -> dict[str, tuple[str, int]]:
        return {rule: found for rule, found in self.rules.items() if found[0] in BLOCKING}


def opened(page, view: View, base: str) -> None:
    """Open a page view and wait until its script run is over and its charts are drawn."""
    page.goto(view.url(base))
    page.wait_for_selector(TITLE, timeout=TIMEOUT)  # this page's run has begun (before it, the app is idle too)
    page.wait_for_selector(IDLE, state="attached", timeout=TIMEOUT)
    if view.path != "tour":  # every other page draws at least one chart
        page.wait_for_selector(CHART, timeout=TIMEOUT)
    page.evaluate(_CHARTS_STILL)
    page.wait_for_selector(IDLE, state="attached", timeout=TIMEOUT)


# Each plotly chart's accessible name: the aria-label of the figure it is in (st.plotly_chart's alt on its element,
# the mounted chart's on its graph div), or null.
CHART_NAMES = """() => [...document.querySelectorAll('.js-plotly-plot')].map(gd => {
  const figure = gd.closest('[role="figure"]');
  return figure ? figure.getAttribute('aria-label') : null;
})"""


def chart_names(page) -> list[str | None]:
    """The accessible name of every chart on the page (None: a chart without one)."""
    return page.evaluate(CHART_NAMES)


def check(page, view: View) -> Found:
    """axe-core on the page as it is now."""
    from axe_playwright_python.sync_playwright import Axe  # noqa: PLC0415 - optional: only the browser tools need it

    results = Axe().run(page, options={"resultTypes": ["violations"]})
    found = Found(view)
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
