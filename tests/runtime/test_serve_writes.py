"""serve.py's CoalescedWrites: a rerun's burst of websocket messages goes to the socket in one write, at once, bytes
and order unchanged (what a browser receives is what it received before)."""
import asyncio
import contextlib
from asyncio import selector_events

import pytest
import uvicorn
from uvicorn.protocols.websockets import websockets_sansio_impl as sansio
from websockets.asyncio.client import connect

import serve


class Recorded:
    """A transport that records what is written to it."""

    def __init__(self):
        self.writes: list[bytes] = []
        self.events: list[str] = []
        self.closing = False

    def write(self, data):
        self.writes.append(bytes(data))
        self.events.append("write")

    def is_closing(self):
        return self.closing

    def close(self):
        self.closing = True
        self.events.append("close")

    def abort(self):
        self.closing = True
        self.events.append("abort")

    def get_write_buffer_size(self):
        return 0

    def get_extra_info(self, name, default=None):
        return {"peername": ("127.0.0.1", 1)}.get(name, default)


async def turns(n: int) -> None:
    for _ in range(n):
        await asyncio.sleep(0)


def test_a_burst_written_one_message_a_turn_goes_as_one_write():
    """As Streamlit's runtime sends a rerun: a message, a turn of the loop, the next message."""
    async def burst():
        recorded = Recorded()
        writes = serve.CoalescedWrites(recorded, asyncio.get_running_loop())
        messages = [f"message {i};".encode() for i in range(30)]
        for message in messages:
            writes.write(message)
            await turns(1)
        assert recorded.writes == []  # still the burst
        await turns(2)
        return recorded.writes, messages

    written, messages = asyncio.run(burst())
    assert written == [b"".join(messages)]


def test_what_is_written_goes_once_the_loop_has_turned_twice_without_waiting_for_a_timer():
    async def one():
        recorded = Recorded()
        writes = serve.CoalescedWrites(recorded, asyncio.get_running_loop())
        writes.write(b"alone")
        await turns(1)
        before = list(recorded.writes)
        await turns(1)
        return before, recorded.writes

    before, after = asyncio.run(one())
    assert before == [] and after == [b"alone"]


def test_bursts_apart_are_writes_apart():
    async def two():
        recorded = Recorded()
        writes = serve.CoalescedWrites(recorded, asyncio.get_running_loop())
        writes.write(b"a")
        writes.write(b"b")
        await turns(3)
        writes.write(b"c")
        await turns(3)
        return recorded.writes

    assert asyncio.run(two()) == [b"ab", b"c"]


def test_closing_sends_what_is_held_first_and_abort_drops_it():
    async def close(how: str):
        recorded = Recorded()
        writes = serve.CoalescedWrites(recorded, asyncio.get_running_loop())
        writes.write(b"last words")
        getattr(writes, how)()
        await turns(3)  # the scheduled look finds nothing held, and the transport closed
        return recorded

    closed = asyncio.run(close("close"))
    assert closed.writes == [b"last words"] and closed.events == ["write", "close"]
    aborted = asyncio.run(close("abort"))
    assert aborted.writes == [] and aborted.events == ["abort"]


def test_a_large_burst_is_not_held_past_max_held():
    async def large():
        recorded = Recorded()
        writes = serve.CoalescedWrites(recorded, asyncio.get_running_loop())
        chunk = b"x" * (serve.CoalescedWrites.MAX_HELD // 2)
        writes.write(chunk)
        assert recorded.writes == []
        assert writes.get_write_buffer_size() == len(chunk)  # what is held counts as the transport's buffer
        writes.write(chunk)
        return recorded.writes

    assert asyncio.run(large()) == [b"x" * serve.CoalescedWrites.MAX_HELD]


def test_everything_else_is_the_transports():
    recorded = Recorded()
    writes = serve.CoalescedWrites(recorded, None)
    assert writes.get_extra_info("peername") == ("127.0.0.1", 1)
    assert writes.is_closing() is False
    writes.write(b"")  # nothing to send: nothing scheduled (the loop is None here)


async def burst_app(scope, receive, send):
    """An ASGI websocket that sends 40 messages as Streamlit's runtime does (one a turn of the loop)."""
    assert scope["type"] == "websocket"
    await receive()  # websocket.connect
    await send({"type": "websocket.accept"})
    for i in range(40):
        await send({"type": "websocket.send", "bytes": f"message {i} ".encode() * 50})
        await asyncio.sleep(0)
    while (await receive())["type"] != "websocket.disconnect":
        pass


@pytest.fixture
def socket_writes(monkeypatch):
    """The number of times a connection's transport writes to its socket (asyncio's selector transport), counted."""
    counted = {"writes": 0}
    write = selector_events._SelectorSocketTransport.write

    def counting(self, data):
        counted["writes"] += 1
        return write(self, data)

    monkeypatch.setattr(selector_events._SelectorSocketTransport, "write", counting)
    return counted


def served_burst(socket_writes) -> tuple[list[bytes], int]:
    """The messages a websockets client receives from burst_app on uvicorn's sans-I/O websockets (as Streamlit serves
    them), and the socket writes of the connection (its handshake's answer, then the burst)."""
    async def main():
        config = uvicorn.Config(burst_app, host="127.0.0.1", port=0, ws="websockets-sansio", log_level="warning",
                                lifespan="off")
        server = uvicorn.Server(config)
        task = asyncio.create_task(server.serve())
        while not server.started:
            await asyncio.sleep(0.01)
        port = server.servers[0].sockets[0].getsockname()[1]
        start = socket_writes["writes"]
        try:
            async with connect(f"ws://127.0.0.1:{port}/") as ws:
                received = [await asyncio.wait_for(ws.recv(), 10) for _ in range(40)]
                writes = socket_writes["writes"] - start
        finally:
            server.should_exit = True
            with contextlib.suppress(asyncio.CancelledError):
                await task
        return received, writes

    return asyncio.run(main())


def test_a_served_burst_arrives_whole_and_in_order_in_a_few_writes(socket_writes, monkeypatch):
    protocol = sansio.WebSocketsSansIOProtocol
    monkeypatch.setattr(protocol, "connection_made", protocol.connection_made)  # put back afterwards
    expected = [f"message {i} ".encode() * 50 for i in range(40)]
    received, plain = served_burst(socket_writes)
    assert received == expected and plain >= 41  # uvicorn alone: the handshake's answer, then a write per message

    assert serve.coalesced_websockets()
    assert serve.coalesced_websockets()  # a second call keeps the one wrapper
    assert not getattr(protocol.connection_made.__wrapped__, "coalesced", False)
    received, coalesced = served_burst(socket_writes)
    assert received == expected
    assert coalesced <= 3, coalesced  # the handshake's answer, the burst (perhaps its first message apart)
