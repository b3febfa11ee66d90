"""How long and how many: the bounds on the HTTP server's connections (`--http`), besides the SDK's
on a request's body (transport.py). uvicorn keeps a connection whose request head never ends open
for as long as its client likes: 19,985 connections each sending half a header took the server to
19,998 of its 20,000 file handles; and 64 idle connections from each of 8 addresses held all 512
slots, a client with a valid token (and /healthz) answered 503 for as long as they reconnected. So
on uvicorn's h11 protocol (the one it runs without httptools; named here rather than left for
uvicorn to choose, and held to a range in pyproject.toml's mcp extra, tested at both ends, for the
parts of it this relies on: its client address, loop, transport, flow control, h11 connection and
request cycle, and when a response completes):

- HEAD_SECONDS: a request's head (its request line and headers) arrives whole within this long of
  the connection's start, or of the previous answer's end, else the connection is closed after
  `408 Request Timeout` (an idle connection between requests goes sooner, at uvicorn's keep-alive
  bound of 5 s);
- BODY_SECONDS (`--http-body-timeout`): a request's body makes progress (some bytes arrive) at
  least this often, else the connection is closed after `408 Request Timeout` (nginx's
  client_body_timeout); and it arrives whole within BODY_WHOLE times that of its start (60 s by
  default), however steadily it trickles (a byte every 2 s held a slot for as long as its client
  liked); time the server itself stops reading (its flow control) is not counted;
- a connection is *authenticated* once a request on it carried the server's token (or an OAuth
  access token it took; on a server without either, once a request reached /mcp): transport.py
  says so through `prove(scope)`. Connections not authenticated yet cannot hold the server: one
  address holds at most UNPROVEN_PER_CLIENT of them (its oldest is closed for a new one), and when
  all TOTAL slots are taken a new connection closes the oldest one not authenticated (one waiting
  for its request's head first), so a token holder's new connection and /healthz are answered
  whatever idle connections were opened before them; only when every slot is an authenticated
  connection is a new one refused;
- PER_CLIENT: one client address holds at most this many connections at once, authenticated or
  not (an assistant holds one or two; a busy gateway a few dozen).

A connection closed for room, or refused, is answered `503 Service Unavailable` saying why. Each
closing is told in the server's log in one line, once a minute at most for each reason, with how
many there were since.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

HEAD_SECONDS = 10.0
BODY_SECONDS = 20.0
#: A request's body arrives whole within this many times BODY_SECONDS (--http-body-timeout).
BODY_WHOLE = 3
PER_CLIENT = 64
UNPROVEN_PER_CLIENT = 16
TOTAL = 512
#: Seconds between two log lines of one reason for closing.
LOG_EVERY = 60.0
#: The ASGI scope's extension (scope["extensions"]) by which a request's connection is told it is
#: authenticated.
PROVE = "cqlsh_ext.prove_connection"

_TIMED_OUT = (b"HTTP/1.1 408 Request Timeout\r\ncontent-type: text/plain\r\nconnection: close\r\n"
              b"content-length: %d\r\n\r\n%s")
_REFUSED = (b"HTTP/1.1 503 Service Unavailable\r\ncontent-type: text/plain\r\nconnection: close\r\n"
            b"content-length: %d\r\n\r\n%s")

#: Why a connection is closed, as said in its answer and the log.
ADDRESS_UNPROVEN = (f"more than {UNPROVEN_PER_CLIENT} connections not authenticated from one address: "
                    "its oldest closed")
FULL_UNPROVEN = f"all {TOTAL} connections taken: the oldest not authenticated closed for a new one"
FULL = f"all {TOTAL} connections taken by authenticated clients: a new one refused"
ADDRESS_FULL = f"more than {PER_CLIENT} connections at once from one address"


def _response(head: bytes, said: str) -> bytes:
    body = said.encode() + b"\n"
    return head % (len(body), body)


def prove(scope: dict[str, Any]) -> None:
    """Tell the connection a request arrived on that the request is authenticated (no-op for a
    request that did not come through `protocol`'s connections)."""
    proven = scope.get("extensions", {}).get(PROVE)
    if proven is not None:
        proven()


async def read_body(receive: Callable[[], Awaitable[Any]],
                    limit: int) -> tuple[list[Any], bytes | None, bool]:
    """A request's messages as received, its body (None past `limit` bytes: reading stops there), and
    whether the body ended (False: the client went, or its connection was closed, before its end)."""
    received: list[Any] = []
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        received.append(message)
        if message.get("type") != "http.request":
            return received, b"".join(chunks), False
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > limit:
            return received, None, True
        chunks.append(chunk)
        if not message.get("more_body", False):
            return received, b"".join(chunks), True


def replay(received: list[Any], receive: Callable[[], Awaitable[Any]]) -> Callable[[], Awaitable[Any]]:
    """`receive` handing out the messages `read_body` read first."""
    pending = list(received)

    async def again() -> Any:
        return pending.pop(0) if pending else await receive()

    return again


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


class _Slots:
    """The connections open (their addresses) and those not authenticated yet (oldest first), shared
    by the server's connections; a connection leaves them as it is closed, not when its closing is
    done (it is told later), so the next one counts what is really left."""

    def __init__(self) -> None:
        self.total = 0
        self.held: Counter[str] = Counter()
        self.unproven: dict[Any, None] = {}
        self.unproven_held: Counter[str] = Counter()

    def enter(self, connection: Any) -> None:
        self.total += 1
        self.held[connection.address] += 1
        self.unproven[connection] = None
        self.unproven_held[connection.address] += 1

    def prove(self, connection: Any) -> None:
        if connection in self.unproven:
            del self.unproven[connection]
            _less(self.unproven_held, connection.address)

    def leave(self, connection: Any) -> None:
        self.prove(connection)
        _less(self.held, connection.address)
        self.total -= 1

    def oldest_unproven(self, address: str | None, besides: Any, waiting: Callable[[Any], bool]) -> Any:
        """The connection not authenticated to close for room (of `address`, or of any address): the
        oldest `waiting` (for its request's head), else the oldest; never `besides` (the new one)."""
        candidates = [c for c in self.unproven
                      if c is not besides and (address is None or c.address == address)]
        return next((c for c in candidates if waiting(c)), None) or next(iter(candidates), None)


def _less(counter: Counter[str], key: str) -> None:
    counter[key] -= 1
    if counter[key] <= 0:
        del counter[key]


if TYPE_CHECKING:
    from uvicorn.protocols.http.h11_impl import H11Protocol as _Protocol
else:  # uvicorn is the mcp extra's, imported when the server starts (`protocol`)
    _Protocol = object


class _BoundedConnection(_Protocol):
    """uvicorn's h11 protocol with the bounds above, `protocol` its class's maker: a mixin before
    H11Protocol (the class `protocol` makes has both), whose server's shared state is the made
    class's: its slots, its log and its body bound."""

    _slots: _Slots
    _told: _Told
    _body_seconds: float
    _body_timed_out: str
    _body_not_whole: str
    #: h11's states (uvicorn's h11, imported when the class is made).
    _idle: Any
    _send_body: Any
    #: The client's address while the connection holds a slot (None once it is closed).
    address: str | None = None
    _head_timer: Any = None
    _body_timer: Any = None
    _body_progress = 0.0
    #: When the body being read started (moved on by the time the server paused reading it).
    _body_started = 0.0

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        app = self.app

        async def with_connection(scope: Any, receive: Any, send: Any) -> None:
            scope.setdefault("extensions", {})[PROVE] = self._proven
            await app(scope, receive, send)

        self.app = with_connection

    def connection_made(self, transport: Any) -> None:
        super().connection_made(transport)
        slots = self._slots
        self.address = self.client[0] if self.client else "?"
        slots.enter(self)
        if slots.unproven_held[self.address] > UNPROVEN_PER_CLIENT:
            slots.oldest_unproven(self.address, self, _waiting)._close(_REFUSED, ADDRESS_UNPROVEN)
        if slots.held[self.address] > PER_CLIENT:
            self._make_room(slots.oldest_unproven(self.address, self, _waiting), ADDRESS_UNPROVEN,
                            ADDRESS_FULL)
        elif slots.total > TOTAL:
            self._make_room(slots.oldest_unproven(None, self, _waiting), FULL_UNPROVEN, FULL)
        if self.address is not None:
            self._await_head()

    def _make_room(self, oldest: Any, why: str, refused: str) -> None:
        """Close `oldest` (not authenticated) for this connection, or this one when there is none."""
        if oldest is not None:
            oldest._close(_REFUSED, why)
        else:
            self._close(_REFUSED, refused)

    def _proven(self) -> None:
        if self.address is not None:
            self._slots.prove(self)

    def _release(self) -> None:
        self._head_arrived()
        self._body_ended()
        if self.address is not None:
            self._slots.leave(self)
            self.address = None

    def connection_lost(self, exc: Exception | None) -> None:
        self._release()
        super().connection_lost(exc)

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        if self.address is None:  # closed (a malformed request's 400)
            return
        state = self.conn.their_state
        if state is not self._idle:  # the head is in: the request is answered
            self._head_arrived()
        if state is self._send_body:
            self._body_progress = self.loop.time()
            if self._body_timer is None:
                self._body_started = self._body_progress
                self._body_timer = self.loop.call_later(self._body_seconds, self._body_late)
        else:
            self._body_ended()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        if self.address is not None and not self.transport.is_closing() \
                and self.conn.their_state is self._idle:
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
        if not self.transport.is_closing() and self.conn.their_state is self._idle:
            self._close(_TIMED_OUT, f"a request's head did not arrive whole within {HEAD_SECONDS:g} s")

    def _body_ended(self) -> None:
        if self._body_timer is not None:
            self._body_timer.cancel()
            self._body_timer = None

    def _body_late(self) -> None:
        self._body_timer = None
        if self.transport.is_closing() or self.conn.their_state is not self._send_body:
            return
        body_seconds, now = self._body_seconds, self.loop.time()
        if self.flow.read_paused:  # the server's pause: counted neither way
            self._body_started += body_seconds
            self._body_timer = self.loop.call_later(body_seconds, self._body_late)
            return
        waited = now - self._body_progress
        left = body_seconds * BODY_WHOLE - (now - self._body_started)
        if left <= 0:
            self._close(_TIMED_OUT, self._body_not_whole)
            return
        if waited < body_seconds:  # progress since
            again = max(min(body_seconds - waited, left), 0.1)
            self._body_timer = self.loop.call_later(again, self._body_late)
            return
        # The request's application sees the connection gone (transport.py reads a body whole
        # before handing it on, and hands on none that did not end).
        self._close(_TIMED_OUT, self._body_timed_out)

    def _close(self, head: bytes, why: str) -> None:
        """Close the connection, answered `head` saying why unless an answer is being sent (cut)."""
        self._told(why)
        self._release()
        cycle = self.cycle
        if cycle is None or not cycle.response_started or cycle.response_complete:
            self.transport.write(_response(head, f"closed: {why}"))
        self.transport.close()


def _waiting(connection: Any) -> bool:
    """Whether a connection waits for its request's head (the first to close for room)."""
    return bool(connection.conn.their_state is connection._idle)


def protocol(log: Callable[[str], None], body_seconds: float = BODY_SECONDS) -> type:
    """The asyncio protocol uvicorn serves each connection with (its `http` setting): its h11
    protocol with the bounds above, its connections sharing the slots and the log of this call's."""
    import h11
    from uvicorn.protocols.http.h11_impl import H11Protocol

    class Bounded(_BoundedConnection, H11Protocol):
        _slots = _Slots()
        _told = _Told(log)
        _body_seconds = body_seconds
        _body_timed_out = f"a request's body made no progress for {body_seconds:g} s"
        _body_not_whole = f"a request's body did not arrive whole within {body_seconds * BODY_WHOLE:g} s"
        _idle = h11.IDLE
        _send_body = h11.SEND_BODY

    return Bounded
