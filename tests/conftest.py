"""The test tiers. `pytest` alone is the fast tier a developer runs while working: model parity, every page in
AppTest, the figures, the catalogs, the text cleaning. `pytest --full` (CI, .ci/run) adds the tiers below, each a
marker given here by folder (or by `@pytest.mark.slow` on a test):

- e2e: the real app in Chromium (tests/e2e)
- load: a class of scripted students on a real server (tests/load)
- deploy: the Dockerfile, the manifests and nginx in front of replicas (tests/deploy)
- slow: a test that takes long for what it adds to a working session (a training run, a long table)

`-m` chooses tiers itself (`pytest -m e2e` runs the browser tests alone), and so does naming a test file or a tier's
folder (`pytest tests/e2e/test_pages.py`, `pytest tests/e2e`); `pytest tests/views` stays fast.
"""
import os
from pathlib import Path

import pytest

TIERS = {"e2e": "the real app in Chromium", "load": "a class of scripted students on a real server",
         "deploy": "the image, the manifests and the proxy", "slow": "long for what it adds while working"}
_BY_FOLDER = {"e2e", "load", "deploy"}


def pytest_addoption(parser):
    parser.addoption("--full", action="store_true", help="every tier (e2e, load, deploy, slow): what CI runs")


def pytest_configure(config):
    for name, what in TIERS.items():
        config.addinivalue_line("markers", f"{name}: {what}")
    if os.environ.get("PYTEST_XDIST_WORKER"):
        # one torch thread a worker: `-n 2` on two cores is then two threads, not four waiting on each other
        # (a training step took thirty times longer). Servers a test starts choose their own.
        import torch  # noqa: PLC0415 - only in an xdist worker

        torch.set_num_threads(1)


def _names_a_tier(config, here: Path) -> bool:
    """A test file (or node id) named on the command line, or a folder of a tier (tests/e2e): run what was named.
    `pytest tests` or `pytest tests/views` stays the fast tier."""
    for arg in map(str, config.invocation_params.args):
        path = Path(arg.split("::")[0]).resolve()
        if arg.startswith("-") or not path.exists():
            continue
        inside = path.relative_to(here).parts if path.is_relative_to(here) else ()
        if path.is_file() or (inside and inside[0] in _BY_FOLDER):
            return True
    return False


def pytest_collection_modifyitems(config, items):
    here = Path(__file__).parent
    for item in items:
        folder = Path(item.fspath).relative_to(here).parts[0]
        if folder in _BY_FOLDER:
            item.add_marker(getattr(pytest.mark, folder))
    if config.getoption("--full") or config.getoption("-m") or _names_a_tier(config, here):
        return
    fast, later = [], []
    for item in items:
        (later if any(item.get_closest_marker(t) for t in TIERS) else fast).append(item)
    if later:
        config.hook.pytest_deselected(items=later)
        items[:] = fast
