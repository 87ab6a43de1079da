"""Start the app for a class: `streamlit run app.py`, and beside it, in the background, what every first visitor needs
(views/warm.py), so that the first student of a fresh server waits no longer than the tenth.

    python serve.py [streamlit run's flags]     e.g. --server.port=8501 --server.address=0.0.0.0
    python serve.py --check [--server.port=N]   exit 0 once the server answers and the warm-up is done (health check)

The warm-up writes a ready file when it ends (ATTNVIZ_READY_FILE, else attnviz-ready-<port> in the temp directory),
holding the server's process id; --check reads it, so a container or a pod is ready only when a student's first visit
is as fast as any other. Only the standard library is imported before the server starts: --check stays light."""
from __future__ import annotations

import functools
import gc
import logging
import os
import socket
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import asyncio

ROOT = Path(__file__).resolve().parent
WARM_THREAD = "attnviz-warm-up"


def port_of(args: list[str], environ=os.environ) -> int:
    """The port Streamlit will listen on: --server.port=N or --server.port N, else STREAMLIT_SERVER_PORT, else 8501."""
    for i, arg in enumerate(args):
        if arg.startswith("--server.port="):
            return int(arg.split("=", 1)[1])
        if arg == "--server.port" and i + 1 < len(args):
            return int(args[i + 1])
    return int(environ.get("STREAMLIT_SERVER_PORT", 8501))


def ready_file(port: int, environ=os.environ) -> Path:
    return Path(environ.get("ATTNVIZ_READY_FILE") or Path(tempfile.gettempdir()) / f"attnviz-ready-{port}")


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process: it exists
        return True
    return True


def check(args: list[str]) -> int:
    """0 when the server on the port answers /_stcore/health with "ok" and its warm-up has ended, else 1."""
    port = port_of(args)
    try:
        pid = int(ready_file(port).read_text().split()[0])
    except (OSError, ValueError, IndexError):
        print("warming up", file=sys.stderr)
        return 1
    if not _alive(pid):
        print(f"the ready file names process {pid}, which has ended", file=sys.stderr)
        return 1
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/_stcore/health", timeout=3) as response:
            answer = response.read()
    except OSError as e:
        print(f"no answer on port {port}: {e}", file=sys.stderr)
        return 1
    return 0 if answer == b"ok" else 1


class _NotFromWarmUp(logging.Filter):
    """Streamlit warns "missing ScriptRunContext" whenever code meant for a page runs outside one, as the warm-up does
    on purpose: drop that warning from the warm-up's thread, and only from it."""

    def filter(self, record: logging.LogRecord) -> bool:
        return record.threadName != WARM_THREAD


def _warm(marker: Path, started: float) -> None:
    from views.warm import warm_up  # noqa: PLC0415 - in the warm-up's thread, beside the server's own start

    took = warm_up()
    gc.freeze()  # what start-up made lives as long as the server: never scan it again (a full collection: 230 ms)
    marker.write_text(f"{os.getpid()}\n")
    steps = ", ".join(f"{what} {seconds:.2f} s" for what, seconds in took.items())
    print(f"attnviz: ready {time.monotonic() - started:.2f} s after start ({steps})", file=sys.stderr, flush=True)


def no_delay() -> bool:
    """Have every connection the server accepts send at once (TCP_NODELAY), as Streamlit's Tornado server did.

    Streamlit 1.67 binds its listening socket itself with `socket.socket(family)`, protocol 0; a socket it accepts
    inherits that 0, and asyncio sets TCP_NODELAY only on sockets whose protocol is IPPROTO_TCP. Without it, when a
    rerun writes several small messages, the next one waits for the ACK of the one before, which the browser delays by
    up to 40 ms: a slider move took 47-48 ms at p50 against 8-16 ms for the same work when it did not
    (bench/results/load.md). The listening socket is given again as the same descriptor with its protocol named, so
    what it accepts is TCP to asyncio. False (the server still starts) when this Streamlit binds its socket
    elsewhere."""
    try:
        from streamlit.web.server.starlette import starlette_server  # noqa: PLC0415 - only when a server starts
    except ImportError:
        return False
    bind = getattr(starlette_server, "_bind_socket", None)
    if bind is None or getattr(bind, "no_delay", False):
        return bind is not None

    @functools.wraps(bind)
    def bind_tcp(address: str, port: int, backlog: int) -> socket.socket:
        sock = bind(address, port, backlog)
        tcp = socket.socket(sock.family, sock.type, socket.IPPROTO_TCP, fileno=sock.detach())
        tcp.setblocking(False)
        tcp.set_inheritable(True)
        return tcp

    bind_tcp.no_delay = True
    starlette_server._bind_socket = bind_tcp
    return True


class CoalescedWrites:
    """A websocket connection's transport that sends a burst of writes as one: the writes made in consecutive turns of
    the event loop are held, and go to the socket in one write once a turn passes with none (or MAX_HELD bytes are
    held, or the connection closes). Everything else is the transport's own.

    Streamlit's runtime hands a rerun's messages to the socket one per turn of the loop, and uvicorn writes each as it
    comes. With TCP_NODELAY (no_delay) each is then a send() of its own and a packet on the wire at once. Held for a
    turn or two, a rerun's burst leaves in one send, still at once (no wait for an ACK): the all-heads page's 33
    messages cost the server 0.38 ms of CPU in 1 write instead of 0.53 ms in 33 (bench/websocket_writes.py). The
    bytes and their order are unchanged.
    """

    MAX_HELD = 256 * 1024  # bytes held before they go without waiting for the burst's end

    def __init__(self, transport: asyncio.Transport, loop: asyncio.AbstractEventLoop):
        self._transport, self._loop = transport, loop
        self._held: list[bytes] = []
        self._size = self._writes = self._seen = 0
        self._waiting = False  # a _check is scheduled

    def write(self, data) -> None:
        if not data:
            return
        self._held.append(bytes(data))
        self._size += len(data)
        self._writes += 1
        if self._size >= self.MAX_HELD:
            self._flush()
        elif not self._waiting:
            self._waiting, self._seen = True, self._writes - 1
            self._loop.call_soon(self._check)

    def writelines(self, lines) -> None:
        for data in lines:
            self.write(data)

    def _check(self) -> None:
        """A turn after the last look: send what is held if nothing was written since, else look again next turn."""
        if self._writes != self._seen:
            self._seen = self._writes
            self._loop.call_soon(self._check)
            return
        self._waiting = False
        self._flush()

    def _flush(self) -> None:
        held, self._held, self._size = self._held, [], 0
        if held and not self._transport.is_closing():
            self._transport.write(held[0] if len(held) == 1 else b"".join(held))

    def close(self) -> None:
        self._flush()
        self._transport.close()

    def write_eof(self) -> None:
        self._flush()
        self._transport.write_eof()

    def abort(self) -> None:
        self._held, self._size = [], 0
        self._transport.abort()

    def get_write_buffer_size(self) -> int:
        return self._size + self._transport.get_write_buffer_size()

    def __getattr__(self, name):
        return getattr(self._transport, name)


def coalesced_websockets() -> bool:
    """Every websocket connection of the server writes through CoalescedWrites. False (the server still starts, each
    message sent as it comes) when this Streamlit serves its websockets through another protocol class."""
    try:
        from uvicorn.protocols.websockets import websockets_sansio_impl  # noqa: PLC0415 - only when a server starts
    except ImportError:
        return False
    protocol = getattr(websockets_sansio_impl, "WebSocketsSansIOProtocol", None)
    made = getattr(protocol, "connection_made", None)
    if made is None or getattr(made, "coalesced", False):
        return made is not None

    @functools.wraps(made)
    def connection_made(self, transport) -> None:
        made(self, transport)
        self.transport = CoalescedWrites(self.transport, self.loop)

    connection_made.coalesced = True
    protocol.connection_made = connection_made
    return True


def coalesced_wakeups() -> bool:
    """One wake-up of the event loop for a burst of work handed to it from other threads.

    A script run hands each message it sends to the event loop (call_soon_threadsafe), and asyncio writes a byte to the
    loop's self-pipe for each: a send() system call, which lets go of the GIL, 33 times for a switch to the all-heads
    page. With forty students' runs in one process, each time the GIL is let go another thread may take it, and the
    run waits for it to come back. The loop reads every byte at once and then runs every callback handed to it, so one
    byte not yet read is enough: the writes after it are skipped until the loop has read (uvloop does the same). The
    flag is cleared only after the read, so a callback handed over meanwhile is in the loop's ready queue, which it
    looks at before it sleeps again. False (the server still starts, a byte per callback) when this asyncio wakes its
    loop another way."""
    from asyncio import selector_events  # noqa: PLC0415 - only when a server starts

    loop = getattr(selector_events, "BaseSelectorEventLoop", None)
    write, read = getattr(loop, "_write_to_self", None), getattr(loop, "_read_from_self", None)
    if write is None or read is None:
        return False
    if getattr(write, "coalesced", False):
        return True

    @functools.wraps(write)
    def write_to_self(self) -> None:
        if not self.__dict__.get("_attnviz_woken", False):
            self._attnviz_woken = True
            write(self)

    @functools.wraps(read)
    def read_from_self(self) -> None:
        try:
            read(self)
        finally:
            self._attnviz_woken = False

    write_to_self.coalesced = True
    loop._write_to_self, loop._read_from_self = write_to_self, read_from_self
    return True


def main(args: list[str]) -> int:
    if args[:1] == ["--check"]:
        return check(args[1:])
    started = time.monotonic()
    marker = ready_file(port_of(args))
    marker.unlink(missing_ok=True)  # a previous server's
    sys.path.insert(0, str(ROOT))
    logging.getLogger("streamlit.runtime.scriptrunner_utils.script_run_context").addFilter(_NotFromWarmUp())
    threading.Thread(target=_warm, args=(marker, started), name=WARM_THREAD, daemon=True).start()
    from streamlit.web import cli  # noqa: PLC0415 - after the warm-up has started: its imports run beside these

    if not no_delay():
        print("attnviz: this Streamlit binds its socket elsewhere: replies may wait for delayed ACKs (40 ms)",
              file=sys.stderr, flush=True)
    if not coalesced_websockets():
        print("attnviz: this Streamlit's websockets are not uvicorn's sans-I/O ones: each message is a send of its own",
              file=sys.stderr, flush=True)
    if not coalesced_wakeups():
        print("attnviz: this asyncio wakes its event loop another way: each message wakes it once",
              file=sys.stderr, flush=True)
    sys.argv = ["streamlit", "run", str(ROOT / "app.py"), *args]
    return cli.main()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
