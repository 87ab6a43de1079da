"""The fixtures of tests/deploy: compose.yaml parsed; and for test_proxy.py three `streamlit run app.py` replicas
on loopback, Debian's nginx in front of them with deploy/nginx.conf (harness/proxy.py), and Chromium. Module scope:
each module that asks gets its own, since test_proxy.py kills a replica on purpose."""
import contextlib
from pathlib import Path

import pytest
import yaml

from harness.proxy import Proxy
from harness.servers import chromium, start

ROOT = Path(__file__).resolve().parents[2]
REPLICAS = 3


@pytest.fixture(scope="module")
def compose():
    return yaml.safe_load((ROOT / "compose.yaml").read_text())


@pytest.fixture(scope="module")
def replicas():
    """Started together, then each waited for; a replica that does not come up fails with its log's tail."""
    reps = [start(ROOT / "app.py", session_ttl=None) for _ in range(REPLICAS)]
    try:
        for r in reps:
            r.wait_healthy()
        yield reps
    finally:
        for r in reps:
            r.stop()
            with contextlib.suppress(OSError):
                r.log.unlink()


@pytest.fixture(scope="module")
def proxy(replicas):
    px = Proxy([r.addr for r in replicas])
    try:
        px.wait()
        yield px
    finally:
        px.stop()


@pytest.fixture(scope="module")
def browser():
    """Module scope (not the e2e session's): Playwright's sync API allows one instance at a time."""
    with chromium() as b:
        yield b
