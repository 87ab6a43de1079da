"""deploy/nginx.conf for real on loopback: Debian's nginx in front of replicas, as in compose.yaml.

nginx runs with deploy/nginx.conf itself (copied byte for byte into a temporary prefix, because nginx
resolves `include` next to the config file); only the three files it includes differ from compose:
upstreams.conf (127.0.0.1:<port> per replica), listen.conf (127.0.0.1:<free port>) and server_names.conf
(SERVER_NAMES: every other Host header is refused). Used by
tests/deploy/test_proxy.py and by `bench/load.py --replicas N`.
"""
import http.client
import os
import re
import shutil
import signal
import subprocess
import tempfile
import time
import urllib.request
from pathlib import Path

from harness.servers import free_port, stop_process

ROOT = Path(__file__).resolve().parents[1]
NGINX_CONF = ROOT / "deploy" / "nginx.conf"
NGINX = os.environ.get("NGINX") or shutil.which("nginx") or "/usr/sbin/nginx"
SERVER_NAMES = ("127.0.0.1", "localhost")  # the names served on loopback; nginx refuses any other Host
# the config's own `routed` log format: upstream=$upstream_addr route=$route_key
LINE = re.compile(r'"(?P<method>\S+) (?P<path>\S+) [^"]*" (?P<status>\d{3}) upstream=(?P<upstream>.*?) '
                  r'route=(?P<route>\S+) rt=')


class Proxy:
    """Debian's nginx with deploy/nginx.conf in a temporary prefix, in front of `addrs` ("127.0.0.1:port")."""

    def __init__(self, addrs):
        if not Path(NGINX).exists():
            raise FileNotFoundError(f"{NGINX} not found: install Debian's nginx (bash scripts/setup.sh --dev does, "
                                    "as root; or: sudo apt-get install -y nginx)")
        self.dir = Path(tempfile.mkdtemp(prefix="attnviz-nginx-"))
        self.dir.chmod(0o755)  # as root, the workers run as nobody and need their temp dirs
        shutil.copyfile(NGINX_CONF, self.dir / "nginx.conf")
        (self.dir / "upstreams.conf").write_text(
            "".join(f"server {addr} max_fails=1 fail_timeout=10s;\n" for addr in addrs))
        self.port = free_port()
        (self.dir / "listen.conf").write_text(f"listen 127.0.0.1:{self.port};\n")
        (self.dir / "server_names.conf").write_text(f"server_name {' '.join(SERVER_NAMES)};\n")
        self.url = f"http://127.0.0.1:{self.port}"
        self.access_log, self.error_log = self.dir / "access.log", self.dir / "error.log"
        self.proc = subprocess.Popen(
            [NGINX, "-e", "stderr", "-p", f"{self.dir}/", "-c", str(self.dir / "nginx.conf"), "-g", "daemon off;"],
            stdin=subprocess.DEVNULL, stdout=self.access_log.open("wb"), stderr=self.error_log.open("wb"))

    def wait(self, seconds: float = 30) -> None:
        """Until nginx answers /_stcore/health (through to a replica); RuntimeError with its log if not."""
        deadline = time.time() + seconds
        while time.time() < deadline:
            if self.proc.poll() is not None:
                break
            try:
                urllib.request.urlopen(self.url + "/_stcore/health", timeout=2).read()
                return
            except OSError:
                time.sleep(0.3)
        raise RuntimeError(f"nginx did not answer {self.url}/_stcore/health: "
                           + self.error_log.read_text(errors="replace")[-2000:])

    def raw_get(self, path: str, host: str | None = None, **headers) -> tuple:
        """(status, headers, body as received) of one GET through nginx with exactly this Host header (default: its
        own address) and these headers (a keyword's "_" is a "-"), and no Accept-Encoding unless given."""
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
        try:
            conn.putrequest("GET", path, skip_host=True, skip_accept_encoding=True)
            conn.putheader("Host", host or f"127.0.0.1:{self.port}")
            for name, value in headers.items():
                conn.putheader(name.replace("_", "-"), value)
            conn.endheaders()
            resp = conn.getresponse()
            return resp.status, resp.headers, resp.read()
        finally:
            conn.close()

    def entries(self):
        out = []
        for line in self.access_log.read_text(errors="replace").splitlines():
            m = LINE.search(line)
            if m:
                e = m.groupdict()
                e["tried"] = [a.strip() for a in e["upstream"].split(",")]
                e["served_by"] = e["tried"][-1]
                out.append(e)
        return out

    def of_route(self, route: str):
        return [e for e in self.entries() if e["route"] == route]

    def stop(self) -> None:
        stop_process(self.proc, signal.SIGQUIT)  # graceful: lets workers write their last lines
        shutil.rmtree(self.dir, ignore_errors=True)
