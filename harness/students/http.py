"""The HTTP requests a browser makes before Streamlit's websocket (the page, health, host-config) and the server's
metrics, over asyncio with no client library: a GET with cookies kept."""
from __future__ import annotations

import asyncio
import contextlib

USER_AGENT = "attnviz-load/1 (Streamlit websocket protocol)"


async def http_get(host: str, port: int, target: str, cookies: dict[str, str],
                   timeout: float = 30) -> tuple[int, bytes]:
    """GET with HTTP/1.1 over asyncio; Set-Cookie goes into `cookies`. Returns (status, body incl. headers)."""
    async with asyncio.timeout(timeout):
        reader, writer = await asyncio.open_connection(host, port)
        try:
            lines = [f"GET {target} HTTP/1.1", f"Host: {host}:{port}", f"User-Agent: {USER_AGENT}", "Accept: */*",
                     "Connection: close"]
            if cookies:
                lines.append("Cookie: " + "; ".join(f"{k}={v}" for k, v in cookies.items()))
            writer.write(("\r\n".join(lines) + "\r\n\r\n").encode("latin-1"))
            await writer.drain()
            raw = await reader.read()
        finally:
            writer.close()
            with contextlib.suppress(Exception):
                await writer.wait_closed()
    head = raw.split(b"\r\n\r\n", 1)[0].decode("latin-1").split("\r\n")
    status = int(head[0].split()[1]) if head and len(head[0].split()) > 1 else 0
    for line in head[1:]:
        name, _, value = line.partition(":")
        if name.strip().lower() == "set-cookie":
            key, _, val = value.strip().split(";", 1)[0].partition("=")
            cookies[key.strip()] = val.strip()
    return status, raw
