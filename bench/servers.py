"""What the benchmarks and the tests that start real servers share: a free port, Debian's Chromium."""
import os
import socket

CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
# Debian's Chromium driven by Playwright here: no sandbox (root), nothing fetched from the network.
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--disable-quic", "--no-first-run"]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]
