"""How long and how many: the bounds on the HTTP server's connections (`--http`), besides the SDK's
on a request's body (transport.py). uvicorn keeps a connection whose request head never ends open
for as long as its client likes: 19,985 connections each sending half a header took the server to
19,998 of its 20,000 file handles. So on uvicorn's h11 protocol (the one it runs without
httptools; named here rather than left for uvicorn to choose, and pinned in pyproject.toml's mcp
extra with the parts of it this relies on: its client address, loop, transport and h11 connection,
and when a response completes):

- HEAD_SECONDS: a request's head (its request line and headers) arrives whole within this long of
  the connection's start, or of the previous answer's end, else the connection is closed after
  `408 Request Timeout` (an idle connection between requests goes sooner, at uvicorn's keep-alive
  bound of 5 s);
- PER_CLIENT: one client address holds at most this many connections at once (an assistant holds
  one or two; a busy gateway a few dozen); one more is closed as it opens, after `503 Service
  Unavailable` saying why;
- TOTAL: connections at once from all addresses; one more is closed likewise.

Each closing is told in the server's log, once a minute at most for each reason, with how many
there were since.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable
from typing import Any

HEAD_SECONDS = 10.0
PER_CLIENT = 64
TOTAL = 512
#: Seconds between two log lines of one reason for closing.
LOG_EVERY = 60.0

_TIMED_OUT = (b"HTTP/1.1 408 Request Timeout\r\ncontent-type: text/plain\r\nconnection: close\r\n"
              b"content-length: %d\r\n\r\n%s")
_REFUSED = (b"HTTP/1.1 503 Service Unavailable\r\ncontent-type: text/plain\r\nconnection: close\r\n"
            b"content-length: %d\r\n\r\n%s")


def _response(head: bytes, said: str) -> bytes:
    body = said.encode() + b"\n"
    return head % (len(body), body)


class _Told:
    """The log's lines of closed connections: the first of each reason, then one a LOG_EVERY with the
    count since."""

    def __init__(self, log: Callable[[str], None]) -> None:
        self.log = log
        self.since: Counter[str] = Counter()
        self.last: dict[str, float] = {}

    def __call__(self, reason: str) -> None:
        self.since[reason] += 1
        now = time.monotonic()
        if now - self.last.get(reason, -LOG_EVERY) >= LOG_EVERY:
            count = self.since.pop(reason)
            self.last[reason] = now
            self.log(f"closed {count:,} HTTP connection{'' if count == 1 else 's'}: {reason}")


def protocol(log: Callable[[str], None]) -> type:
    """The asyncio protocol uvicorn serves each connection with (its `http` setting): its h11
    protocol with the bounds above."""
    import h11
    from uvicorn.protocols.http.h11_impl import H11Protocol

    held: Counter[str] = Counter()  # connections open, by client address
    told = _Told(log)

    class Bounded(H11Protocol):
        _head_timer: Any = None
        _address: str | None = None

        def connection_made(self, transport: Any) -> None:
            super().connection_made(transport)
            address = self.client[0] if self.client else "?"
            held[address] += 1
            self._address = address
            if held[address] > PER_CLIENT:
                self._close(_REFUSED, f"more than {PER_CLIENT} connections at once from one address")
            elif len(self.connections) > TOTAL:
                self._close(_REFUSED, f"more than {TOTAL} connections at once")
            else:
                self._await_head()

        def connection_lost(self, exc: Exception | None) -> None:
            self._head_arrived()
            if self._address is not None:
                held[self._address] -= 1
                if held[self._address] <= 0:
                    del held[self._address]
                self._address = None
            super().connection_lost(exc)

        def data_received(self, data: bytes) -> None:
            super().data_received(data)
            if self.conn.their_state is not h11.IDLE:  # the head is in: the request is answered
                self._head_arrived()

        def on_response_complete(self) -> None:
            super().on_response_complete()
            if not self.transport.is_closing() and self.conn.their_state is h11.IDLE:
                self._await_head()  # the next request's

        def _await_head(self) -> None:
            self._head_arrived()
            self._head_timer = self.loop.call_later(HEAD_SECONDS, self._head_late)

        def _head_arrived(self) -> None:
            if self._head_timer is not None:
                self._head_timer.cancel()
                self._head_timer = None

        def _head_late(self) -> None:
            self._head_timer = None
            if not self.transport.is_closing() and self.conn.their_state is h11.IDLE:
                self._close(_TIMED_OUT, f"a request's head did not arrive whole within {HEAD_SECONDS:g} s")

        def _close(self, head: bytes, why: str) -> None:
            told(why)
            self.transport.write(_response(head, f"closed: {why}"))
            self.transport.close()

    return Bounded
