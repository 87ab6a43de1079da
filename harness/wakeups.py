"""The wake-ups of an asyncio event loop, counted (tests/runtime/test_serve_wakeups.py, bench/loop_wakeups.py): asyncio
wakes a selector loop from another thread by writing a byte to its self-pipe socket (serve.coalesced_wakeups writes
fewer)."""


class CountedSends:
    """A loop's self-pipe socket, counting the bytes written to wake the loop; everything else is the socket's own."""

    def __init__(self, sock):
        self.sock, self.sends = sock, 0

    def send(self, data):
        self.sends += 1
        return self.sock.send(data)

    def __getattr__(self, name):
        return getattr(self.sock, name)


def counted_wakeups(loop) -> CountedSends:
    """Count the wake-ups of `loop` (a new asyncio selector loop) from now on: its self-pipe socket, wrapped."""
    loop._csock = CountedSends(loop._csock)
    return loop._csock
