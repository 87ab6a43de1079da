"""A rerun's burst of websocket messages as Streamlit's server sends it: with Nagle's algorithm (Streamlit alone),
with TCP_NODELAY (serve.no_delay), and with TCP_NODELAY and serve.py's CoalescedWrites.

Streamlit's runtime hands the socket a rerun's messages one per turn of its event loop, and uvicorn writes each as it
comes. Here a uvicorn server of the same kind (websockets-sansio, as Streamlit 1.67 serves) sends the burst of a
switch to the all-heads page (its 33 messages, sizes as the app sent them: 69 KB in all) one per turn, each time a
client in a process of its own asks; the client waits for the whole burst. Per burst: the server process's CPU, its
writes to the socket, and the time from the client's request to the burst's last message (p50 / p95).

    nagle      the listening socket bound as Streamlit binds it: its connections keep Nagle's algorithm
    nodelay    bound as serve.no_delay gives it back: every write goes at once, a packet of its own
    coalesced  nodelay, and serve.coalesced_websockets: a burst held until a turn passes without a write, then one write

    .venv/bin/python bench/websocket_writes.py [--bursts 400] [--rounds 3]
"""
import argparse
import asyncio
import json
import socket
import statistics
import subprocess
import sys
import time
from asyncio import selector_events
from collections.abc import Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import serve  # noqa: E402
from harness.record import run  # noqa: E402

# A switch to the all-heads page (30-token sentence, the default model): each message's size in bytes, in order.
BURST = (2, 1838, 4, 121, 177, 285, 1110, 1498, 108, 251, 649, 256, 132, 352, 135, 330, 214, 281, 436, 133, 288, 134,
         131, 131, 229, 227, 468, 53849, 5927, 238, 254, 325, 44)
MODES = ("nagle", "nodelay", "coalesced")


async def burst_app(scope, receive, send):
    """Each message the client sends asks for one burst, sent as Streamlit's runtime sends a rerun's messages."""
    await receive()  # websocket.connect
    await send({"type": "websocket.accept"})
    payloads = [bytes(size) for size in BURST]
    while (await receive())["type"] == "websocket.receive":
        for payload in payloads:
            await send({"type": "websocket.send", "bytes": payload})
            await asyncio.sleep(0)


def listening(nodelay: bool) -> socket.socket:
    """A listening socket as Streamlit binds it (protocol 0: asyncio leaves Nagle's algorithm on for what it accepts),
    or with its protocol named, as serve.no_delay hands it back (asyncio sets TCP_NODELAY)."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP if nodelay else 0)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    sock.listen(16)
    sock.setblocking(False)
    return sock


async def serve_bursts(mode: str, bursts: int) -> dict:
    import uvicorn  # noqa: PLC0415

    writes = {"n": 0}
    write = selector_events._SelectorSocketTransport.write

    def counted(self, data):
        writes["n"] += 1
        return write(self, data)

    selector_events._SelectorSocketTransport.write = counted
    sock = listening(mode != "nagle")
    server = uvicorn.Server(uvicorn.Config(burst_app, ws="websockets-sansio", log_level="warning", lifespan="off"))
    task = asyncio.create_task(server.serve(sockets=[sock]))
    try:
        while not server.started:
            await asyncio.sleep(0.01)
        client = await asyncio.create_subprocess_exec(
            sys.executable, __file__, "--client", str(sock.getsockname()[1]), str(bursts), stdout=subprocess.PIPE)
        line = await client.stdout.readline()  # the client is connected and warmed up
        start_writes, start_cpu = writes["n"], time.process_time()
        out, _ = await client.communicate()
        cpu, written = time.process_time() - start_cpu, writes["n"] - start_writes
    finally:
        selector_events._SelectorSocketTransport.write = write
        server.should_exit = True
        await task
    assert line.strip() == b"ready", line
    ms = json.loads(out)
    return {"cpu_ms": 1000 * cpu / bursts, "writes": written / bursts, "ms": ms}


async def client(port: int, bursts: int) -> None:
    from websockets.asyncio.client import connect  # noqa: PLC0415

    async with connect(f"ws://127.0.0.1:{port}/", max_size=None) as ws:
        for _ in range(20):  # warm-up
            await ws.send(b"go")
            for _ in BURST:
                await ws.recv()
        print("ready", flush=True)
        await asyncio.sleep(0.2)
        times = []
        for _ in range(bursts):
            start = time.perf_counter()
            await ws.send(b"go")
            for _ in BURST:
                await ws.recv()
            times.append(1000 * (time.perf_counter() - start))
    print(json.dumps(times), flush=True)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bursts", type=int, default=400)
    parser.add_argument("--rounds", type=int, default=3, help="each mode this many times, alternated")
    parser.add_argument("--client", nargs=2, type=int, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.client:
        asyncio.run(client(*args.client))
        return 0
    from uvicorn.protocols.websockets.websockets_sansio_impl import WebSocketsSansIOProtocol  # noqa: PLC0415

    plain = WebSocketsSansIOProtocol.connection_made
    found: dict[str, list[dict]] = {mode: [] for mode in MODES}
    for _ in range(args.rounds):
        for mode in MODES:
            WebSocketsSansIOProtocol.connection_made = plain
            if mode == "coalesced" and not serve.coalesced_websockets():
                raise SystemExit("this uvicorn has no sans-I/O websockets to coalesce")
            found[mode].append(asyncio.run(serve_bursts(mode, args.bursts)))
    WebSocketsSansIOProtocol.connection_made = plain
    print(f"a burst of {len(BURST)} messages ({sum(BURST) / 1024:.0f} KB), {args.bursts} bursts a run, "
          f"{args.rounds} run(s) of each, alternated")
    print(f"{'mode':<10} {'server CPU ms':>14} {'socket writes':>14} {'p50 ms':>8} {'p95 ms':>8}   (per burst)")
    base = None
    for mode, runs in found.items():
        ms = sorted(t for r in runs for t in r["ms"])
        cpu = statistics.mean(r["cpu_ms"] for r in runs)
        base = base or cpu
        print(f"{mode:<10} {cpu:>14.2f} {statistics.mean(r['writes'] for r in runs):>14.1f} "
              f"{ms[len(ms) // 2]:>8.2f} {ms[int(len(ms) * 0.95)]:>8.2f}   CPU {cpu / base:.2f} x nagle's")
    return 0


if __name__ == "__main__":
    sys.exit(run(__file__, main) if "--client" not in sys.argv else main())
