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
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

ROOT = Path(__file__).resolve().parents[1]

CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
# Debian's Chromium driven by Playwright here: no sandbox (root), nothing fetched from the network.
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--disable-quic", "--no-first-run"]


def stop_process(proc: subprocess.Popen, sig: int = signal.SIGTERM) -> None:
    """Send `sig` to a running process and wait for it; killed if it outlives 10 s."""
    if proc.poll() is None:
        proc.send_signal(sig)
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class Server:
    """A `streamlit run` process on 127.0.0.1 and its log (stdout and stderr)."""
    url: str
    pid: int
    proc: subprocess.Popen
    log: Path

    @property
    def addr(self) -> str:
        """host:port, as a proxy's upstream names it."""
        return urlsplit(self.url).netloc

    @property
    def alive(self) -> bool:
        return self.proc.poll() is None

    def tail(self, chars: int = 3000) -> str:
        return self.log.read_text(errors="replace")[-chars:]

    def wait_healthy(self, wait: float = 120) -> None:
        """Until /_stcore/health answers ok; RuntimeError with the log's tail if the process exits or `wait` s pass."""
        deadline = time.time() + wait
        while True:
            if not self.alive:
                raise RuntimeError(f"streamlit exited with {self.proc.returncode}:\n{self.tail()}")
            try:
                with urllib.request.urlopen(self.url + "_stcore/health", timeout=2) as response:
                    if response.status == 200 and response.read().endswith(b"ok"):
                        return
            except OSError:
                pass
            if time.time() > deadline:
                raise RuntimeError(f"streamlit did not answer /_stcore/health in {wait:g} s:\n{self.tail()}")
            time.sleep(0.2)

    def wait_ready(self, wait: float = 120) -> None:
        """Until `serve.py --check` passes (a server started with serve=True: answering, and its warm-up done)."""
        port = urlsplit(self.url).port
        check = [sys.executable, str(ROOT / "serve.py"), "--check", f"--server.port={port}"]
        deadline = time.time() + wait
        while subprocess.run(check, capture_output=True).returncode != 0:
            if not self.alive or time.time() > deadline:
                raise RuntimeError(f"serve.py did not report ready in {wait:g} s:\n{self.tail()}")
            time.sleep(0.3)

    def stop(self, sig: int = signal.SIGTERM) -> None:
        """Send `sig` (SIGKILL: a crash) and wait for the process; killed if it outlives 10 s."""
        stop_process(self.proc, sig)


def start(app_path: str | Path, env: dict[str, str] | None = None, session_ttl: int | None = 2,
          serve: bool = False, cwd: Path = ROOT) -> Server:
    """`streamlit run app_path` on a free port of 127.0.0.1, cwd = the repository (or `cwd`: another checkout's), so
    that its .streamlit/config.toml applies; not waited for. Disconnected sessions live `session_ttl` s (None:
    Streamlit's default). serve: the app as a class's server runs it, `python serve.py` (app_path must be the app).
    The caller stops it and removes its log."""
    port = free_port()
    log = Path(tempfile.mkstemp(prefix="attnviz-server-", suffix=".log")[1])
    if serve and Path(app_path).resolve() != ROOT / "app.py":
        raise ValueError("serve.py runs the app, not " + str(app_path))
    launch = [str(ROOT / "serve.py")] if serve else ["-m", "streamlit", "run", str(app_path)]
    cmd = [sys.executable, *launch, "--server.port", str(port), "--server.address", "127.0.0.1",
           "--server.headless", "true"]
    if session_ttl is not None:
        cmd += ["--server.disconnectedSessionTTL", str(session_ttl)]
    with log.open("wb") as out:
        proc = subprocess.Popen(cmd, cwd=cwd, stdout=out, stderr=subprocess.STDOUT,
                                env={**os.environ, "HF_HUB_OFFLINE": "1", **(env or {})})
    return Server(f"http://127.0.0.1:{port}/", proc.pid, proc, log)


@contextlib.contextmanager
def spawn(app_path: str | Path, env: dict[str, str] | None = None, session_ttl: int | None = 2,
          serve: bool = False, cwd: Path = ROOT) -> Iterator[Server]:
    """A started server (see `start`) once /_stcore/health answers; stopped and its log removed on exit."""
    server = start(app_path, env, session_ttl, serve, cwd)
    try:
        server.wait_healthy()
        yield server
    finally:
        server.stop()
        with contextlib.suppress(OSError):
            server.log.unlink()


@contextlib.contextmanager
def chromium():
    """Debian's Chromium through Playwright's sync API; FileNotFoundError (saying how to install it) if absent."""
    from playwright.sync_api import sync_playwright  # noqa: PLC0415 - optional: only the browser needs it

    if not Path(CHROMIUM).exists():
        raise FileNotFoundError(f"{CHROMIUM} not found: install Debian's chromium (bash scripts/setup.sh --dev does, "
                                "as root)")
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
        try:
            yield browser
        finally:
            browser.close()
