"""A real server and a real browser: `streamlit run app.py` on a free port, Debian's Chromium via Playwright."""
from pathlib import Path

import pytest

from harness.servers import chromium, spawn

ROOT = Path(__file__).resolve().parents[2]
SHOTS = ROOT / "artifacts" / "screenshots"


@pytest.fixture(scope="session")
def server():
    try:
        with spawn(ROOT / "app.py", session_ttl=None) as running:
            yield running.url.rstrip("/")
    except RuntimeError as e:  # it did not start: its log says why
        pytest.fail(str(e))


@pytest.fixture(scope="session")
def browser():
    with chromium() as b:  # FileNotFoundError, saying how to install it, without Debian's Chromium
        yield b


@pytest.fixture
def page(browser):
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    pg = context.new_page()
    errors = []
    pg.on("pageerror", lambda e: errors.append(str(e)))
    pg.errors = errors
    yield pg
    context.close()


@pytest.fixture
def shoot():
    """shoot(page, name): a full-page screenshot in artifacts/screenshots/."""
    def take(page, name: str) -> None:
        SHOTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(SHOTS / f"{name}.png"), full_page=True)

    return take
