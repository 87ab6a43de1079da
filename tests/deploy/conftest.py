"""The fixtures of tests/deploy/test_proxy.py: three `streamlit run app.py` replicas on loopback, Debian's
nginx in front of them with deploy/nginx.conf (bench/proxy.py), and Chromium. Module scope: each module
that asks gets its own, since test_proxy.py kills a replica on purpose."""
import os
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from bench.proxy import Proxy
from bench.servers import chromium, free_port

ROOT = Path(__file__).resolve().parents[2]
REPLICAS = 3


def _wait_http(url: str, procs, what: str, seconds: float = 90) -> None:
    deadline = time.time() + seconds
    while time.time() < deadline:
        for proc, log in procs:
            if proc.poll() is not None:
                pytest.fail(f"{what} exited with {proc.returncode}: " + Path(log).read_text(errors="replace")[-2000:])
        try:
            urllib.request.urlopen(url, timeout=2).read()
            return
        except OSError:
            time.sleep(0.3)
    pytest.fail(f"{what} did not answer {url} in {seconds} s")


class Replica:
    def __init__(self, port: int, log: Path):
        self.port, self.log = port, log
        self.addr = f"127.0.0.1:{port}"
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "streamlit", "run", "app.py", "--server.port", str(port),
             "--server.address", "127.0.0.1", "--server.headless", "true"],
            cwd=ROOT, stdout=log.open("wb"), stderr=subprocess.STDOUT, env={**os.environ, "HF_HUB_OFFLINE": "1"})

    @property
    def alive(self) -> bool:
        return self.proc.poll() is None

    def stop(self, sig=signal.SIGTERM) -> None:
        if self.alive:
            self.proc.send_signal(sig)
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


@pytest.fixture(scope="module")
def replicas(tmp_path_factory):
    logs = tmp_path_factory.mktemp("replicas")
    reps = [Replica(free_port(), logs / f"app{i + 1}.log") for i in range(REPLICAS)]
    try:
        for r in reps:
            _wait_http(f"http://{r.addr}/_stcore/health", [(r.proc, r.log)], f"streamlit on {r.addr}")
        yield reps
    finally:
        for r in reps:
            r.stop()


@pytest.fixture(scope="module")
def proxy(replicas):
    try:
        px = Proxy([r.addr for r in replicas])
    except FileNotFoundError as e:
        pytest.fail(str(e))
    try:
        _wait_http(px.url + "/_stcore/health", [(px.proc, px.error_log)], "nginx", seconds=30)
        yield px
    finally:
        px.stop()


@pytest.fixture(scope="module")
def browser():
    """Module scope (not the e2e session's): Playwright's sync API allows one instance at a time."""
    try:
        with chromium() as b:
            yield b
    except FileNotFoundError as e:
        pytest.fail(str(e))
