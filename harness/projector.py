"""A page on a projector, measured in the browser: the first chart's share of a 1280x720 viewport, its smallest
tick label, where it starts and ends (bench/lecture.py reports them; tests/e2e/test_lecture_browser.py asserts them)."""
from views.shell import registry, tour_stops

CHART = '[data-testid="stMain"] .js-plotly-plot'
MEASURE = """(sel) => {
  const chart = document.querySelector(sel);
  if (!chart) return null;
  const r = chart.getBoundingClientRect();
  const h = window.innerHeight, w = window.innerWidth;
  const across = Math.max(0, Math.min(r.right, w) - Math.max(r.left, 0));
  const seen = Math.max(0, Math.min(r.bottom, h) - Math.max(r.top, 0)) * across;
  const sizes = [...chart.querySelectorAll('.xtick text, .ytick text, g[class^="xtick"] text, g[class^="ytick"] text, '
                                           + '.scatterlayer .textpoint text')]
    .map(t => parseFloat(getComputedStyle(t).fontSize)).filter(x => x > 0);
  return {visible: seen / (r.width * r.height), tick: sizes.length ? Math.min(...sizes) : null,
          top: r.top, bottom: r.bottom, height: r.height};
}"""


# Parts of a page with a chart of their own that no tour stop opens: (path, the state that shows the part)
PARTS = (("language-model", {"model": "gpt", "part": "lens"}), ("language-model", {"model": "gpt", "part": "learning"}),
         ("modern", {"part": "ffn"}), ("modern", {"part": "costs"}))


def pages() -> list[tuple[str, dict]]:
    """Each page as the guided tour opens it (its stop's state and ?tour=k: the banner is in the sidebar; a page with
    two stops, once per stop), then the parts no stop opens (PARTS)."""
    out = []
    for spec in registry.PAGES:
        if spec.path == "tour":
            continue
        stops = [{**stop.params, "tour": k} for k, stop in enumerate(tour_stops.STOPS, start=1)
                 if stop.path == spec.path]
        out += [(spec.path, stop) for stop in stops] or [(spec.path, {})]
    return out + [(path, dict(params)) for path, params in PARTS]


def case_id(path: str, params: dict) -> str:
    """A page's name among pages(): its path, and its part when it has one."""
    return "-".join([path, *([str(params["part"])] if "part" in params else [])])


