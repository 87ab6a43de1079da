"""What the benchmarks and the tests that start real servers share: a free port, `streamlit run` on it,
Debian's Chromium."""
import contextlib
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
# Debian's Chromium driven by Playwright here: no sandbox (root), nothing fetched from the network.
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--disable-quic", "--no-first-run"]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class Server:
    url: str
    pid: int
    proc: subprocess.Popen
    log: Path

    def tail(self, chars: int = 3000) -> str:
        return self.log.read_text(errors="replace")[-chars:]


@contextlib.contextmanager
def spawn(app_path: str | Path, port: int | None = None, extra_args: Sequence[str] = (),
          env: dict[str, str] | None = None, session_ttl: int | None = 2, wait: float = 120) -> Iterator[Server]:
    """`streamlit run app_path` on 127.0.0.1 (a free port unless given), cwd = the repository, so that
    .streamlit/config.toml applies; waits for /_stcore/health. Disconnected sessions live `session_ttl` s
    (None: Streamlit's default)."""
    port = port or free_port()
    log = Path(tempfile.mkstemp(prefix="attnviz-server-", suffix=".log")[1])
    cmd = [sys.executable, "-m", "streamlit", "run", str(app_path), "--server.port", str(port),
           "--server.address", "127.0.0.1", "--server.headless", "true", *extra_args]
    if session_ttl is not None:
        cmd += ["--server.disconnectedSessionTTL", str(session_ttl)]
    with log.open("wb") as out:
        proc = subprocess.Popen(cmd, cwd=ROOT, stdout=out, stderr=subprocess.STDOUT,
                                env={**os.environ, "HF_HUB_OFFLINE": "1", **(env or {})})
    server = Server(f"http://127.0.0.1:{port}/", proc.pid, proc, log)
    try:
        deadline = time.time() + wait
        while True:
            if proc.poll() is not None:
                raise RuntimeError(f"streamlit exited with {proc.returncode}:\n{server.tail()}")
            try:
                with urllib.request.urlopen(server.url + "_stcore/health", timeout=2) as response:
                    if response.status == 200 and response.read().endswith(b"ok"):
                        break
            except OSError:
                pass
            if time.time() > deadline:
                raise RuntimeError(f"streamlit did not answer /_stcore/health in {wait:g} s:\n{server.tail()}")
            time.sleep(0.2)
        yield server
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        with contextlib.suppress(OSError):
            log.unlink()


@contextlib.contextmanager
def chromium():
    """Debian's Chromium through Playwright's sync API; FileNotFoundError (saying how to install it) if absent."""
    from playwright.sync_api import sync_playwright

    if not Path(CHROMIUM).exists():
        raise FileNotFoundError(f"{CHROMIUM} not found: install Debian's chromium (bash scripts/setup.sh --dev does, "
                                "as root)")
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
        try:
            yield browser
        finally:
            browser.close()
