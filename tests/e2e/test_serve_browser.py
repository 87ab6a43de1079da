"""serve.py, as a class's server runs the app: it warms up at start-up, says when it is ready, and then serves the
pages as `streamlit run app.py` does (the charts' component files included, though the warm-up imported the pages
before any script ran)."""
from pathlib import Path

import pytest

from harness.servers import spawn
from views import warm

ROOT = Path(__file__).resolve().parents[2]
CHART = ".js-plotly-plot .main-svg"


@pytest.fixture(scope="module")
def served():
    try:
        with spawn(ROOT / "app.py", session_ttl=None, serve=True) as running:
            yield running
    except RuntimeError as e:
        pytest.fail(str(e))


def test_the_server_says_ready_once_every_step_is_done(served):
    served.wait_ready()
    log = served.tail(20_000)
    ready = next(line for line in log.splitlines() if line.startswith("attnviz: ready"))
    assert all(f"{what} " in ready for what, _ in warm.steps()), ready
    assert "warm-up:" not in log  # no step failed
    assert "missing ScriptRunContext" not in log  # the warm-up's own warnings are dropped
    # serve.py's changes to the socket, the websockets and the event loop took effect (each says so when it cannot)
    assert "attnviz: this" not in log


@pytest.mark.parametrize("path", ["", "translate", "language-model"])
def test_pages_draw_their_charts_after_the_warm_up(served, page, path):
    page.goto(served.url + path)
    page.wait_for_selector(CHART, timeout=60_000)
    assert not page.locator("text=Component Error").count()
    assert not page.locator("text=Failed to fetch").count()
    assert not page.errors
