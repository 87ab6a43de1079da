"""serve.py, the server a class runs: the warm-up fills the caches a first visitor reads, and its health check passes
only when the server answers and the warm-up has ended."""
import asyncio
import http.server
import os
import socket
import subprocess
import threading

import pytest
from streamlit.testing.v1 import AppTest
from streamlit.web.server.starlette import starlette_server

import serve
from harness.apptest import APP
from harness.servers import free_port
from model.kinds import SourceKey
from model.loading.sources import DEFAULT_KEY
from model.translator.source import TRANSLATOR_KEY
from runtime import memory
from runtime.memory import budget
from runtime.models import Choice, compiling, model_key
from runtime.runs import Mask
from views import warm
from views.widgets.pickers import DEFAULT_TEXT


@pytest.mark.parametrize("args, port", [([], 8501), (["--server.port=8600"], 8600), (["--server.port", "8601"], 8601),
                                        (["--server.address=0.0.0.0", "--server.port=8602"], 8602)])
def test_the_port_is_streamlits(args, port):
    assert serve.port_of(args, environ={}) == port


def test_the_port_from_streamlits_variable():
    assert serve.port_of([], environ={"STREAMLIT_SERVER_PORT": "8700"}) == 8700


@pytest.fixture
def health(monkeypatch, tmp_path):
    """A port answering /_stcore/health with `answer[0]`, and the ready file serve.py would write for it."""
    answer = [b"ok"]

    class Health(http.server.BaseHTTPRequestHandler):
        def do_GET(self):  # noqa: N802 - http.server's name
            self.send_response(200 if self.path == "/_stcore/health" else 404)
            self.end_headers()
            self.wfile.write(answer[0])

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Health)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    marker = tmp_path / "ready"
    monkeypatch.setenv("ATTNVIZ_READY_FILE", str(marker))
    yield server.server_address[1], marker, answer
    server.shutdown()


def test_not_ready_before_the_warm_up_ends(health):
    port, marker, _ = health
    assert serve.check([f"--server.port={port}"]) == 1  # the server answers, no ready file yet
    marker.write_text(f"{os.getpid()}\n")
    assert serve.check([f"--server.port={port}"]) == 0


def test_not_ready_when_the_ready_file_is_a_dead_servers(health):
    port, marker, _ = health
    dead = subprocess.Popen(["true"])
    dead.wait()
    marker.write_text(f"{dead.pid}\n")
    assert serve.check([f"--server.port={port}"]) == 1


def test_not_ready_when_the_server_does_not_answer_ok(health):
    port, marker, answer = health
    marker.write_text(f"{os.getpid()}\n")
    answer[0] = b"starting"
    assert serve.check([f"--server.port={port}"]) == 1
    assert serve.check([f"--server.port={free_port()}"]) == 1  # nothing listens there


def test_after_the_warm_up_the_default_page_computes_nothing():
    budget().clear()  # a fresh server's
    took = warm.warm_up()
    assert list(took) == [what for what, _ in warm.steps()]
    for choice in (Choice(DEFAULT_KEY), Choice(TRANSLATOR_KEY), Choice(SourceKey.GPT), Choice(SourceKey.SMOLLM2)):
        assert model_key(choice) in budget()
    assert compiling(Choice(SourceKey.SMOLLM2)).ready_batch() is not None  # a class's first question finds them made
    assert (Choice(DEFAULT_KEY), DEFAULT_TEXT, Mask()) in budget()
    before = dict(memory.COMPUTED)
    at = AppTest.from_file(APP, default_timeout=60)
    at.run()
    assert not at.exception
    assert memory.COMPUTED == before  # the first visitor's pass was the warm-up's


def accepted_no_delay() -> int:
    """TCP_NODELAY of a connection accepted as Streamlit's server accepts it: its listening socket bound by its own
    _bind_socket, served by asyncio (uvicorn's loop.create_server(sock=...))."""
    listening = starlette_server._bind_socket("127.0.0.1", 0, 8)

    async def accept() -> int:
        loop = asyncio.get_running_loop()
        accepted = loop.create_future()

        class Accepted(asyncio.Protocol):
            def connection_made(self, transport):
                accepted.set_result(transport.get_extra_info("socket").getsockopt(socket.IPPROTO_TCP,
                                                                                  socket.TCP_NODELAY))

        server = await loop.create_server(Accepted, sock=listening)
        _, writer = await asyncio.open_connection(*server.sockets[0].getsockname())
        try:
            return await asyncio.wait_for(accepted, 10)
        finally:
            writer.close()
            server.close()

    return asyncio.run(accept())


def test_the_server_sends_without_waiting_for_acks(monkeypatch):
    """Streamlit alone accepts connections with Nagle's algorithm on (a rerun's small messages wait for delayed ACKs);
    serve.py's server sends at once."""
    monkeypatch.setattr(starlette_server, "_bind_socket", starlette_server._bind_socket)  # put back afterwards
    assert accepted_no_delay() == 0
    assert serve.no_delay()
    assert accepted_no_delay() != 0
    assert serve.no_delay()  # a second call keeps the one wrapper
    assert not hasattr(starlette_server._bind_socket.__wrapped__, "no_delay")
