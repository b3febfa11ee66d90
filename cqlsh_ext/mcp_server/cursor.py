"""Cursors: how a cut answer is continued (`query`'s `cursor`). A cursor names a place in a
statement's reading: the driver's paging state of the page its next row is on (reading.typed's
Position), bound to the statement and to the client it was given to, sealed by this server:

    base64url( version | issued (seconds, 4 bytes) | statement hash (16 bytes) | state id (16) |
               HMAC-SHA256 tag (16 bytes) )

What it continues stays in this server, under its random id: the paging state (it holds the key of
the last row read, a value a policy may redact), `extra` and the client it was given to. At most
MAX_STATES are kept, the oldest forgotten first (its cursor then says so).

The statement's hash is of its tokens (the shell's lexer: spacing, comments and the case of
unquoted words do not count; every literal does), so a cursor opened with another statement is
refused; the tag is keyed by a secret the server draws at start (`Cursors()`), so a cursor that was
altered, made up, or issued by another server (or before a restart) is refused too; one older than
`max_age` is refused as expired. `extra` is what the continuation needs besides the paging state:
the row's index on its page (`skip`), the rows answered before it (`answered`); kept here, so a
cursor tells nothing of the rows an answer left out (a policy's hidden tables). `owner` is the
client it was given to (server.py's _owner: the MCP session that called; without a session, the
OAuth token's issuer, subject and client): a cursor another client gives is refused, whoever it
leaked to.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets
import struct
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from cqlsh_ext.cql.lexer import Lexed

VERSION = 3
TAG_BYTES = 16
HASH_BYTES = 16
#: A cursor's text at most (one is about 100 characters).
MAX_CURSOR_CHARS = 4096
#: A cursor's life by default: paging states stay valid, but the table moves on.
MAX_AGE_SECONDS = 3600
#: Paging states kept at most (a few hundred bytes each), and one state's bytes at most.
MAX_STATES = 10_000
MAX_STATE_BYTES = 16 << 10
ID_BYTES = 16
_HEAD = struct.Struct(">BI16s16s")
#: What a cursor's id stands for here: the paging state, `extra`, the client it was given to.
_Kept = tuple[bytes | None, dict[str, Any], bytes]


class CursorError(Exception):
    """A cursor that cannot continue this statement; str() is the one line."""


@dataclass(frozen=True)
class CursorState:
    #: The paging state of the page the next row is on (None: the statement's first page).
    paging_state: bytes | None
    extra: dict[str, Any] = field(default_factory=dict)
    issued: int = 0


def statement_hash(statement: Lexed | str) -> bytes:
    """The statement's identity for a cursor: a hash of its tokens (kinds and values; unquoted words
    in lower case), so that spacing and comments do not count and every literal does. A Lexed's
    tokens are taken as they are (the call's one lexing)."""
    from cqlsh_ext.cql.errors import QueryError
    from cqlsh_ext.cql.lexer import lexed

    digest = hashlib.sha256()
    read = lexed(statement)
    try:
        tokens = read.tokens
    except QueryError:
        digest.update(b"\x00raw\x00" + read.text.encode("utf-8", "surrogatepass"))
        return digest.digest()[:HASH_BYTES]
    for tok in tokens:
        value = tok.value.lower() if tok.kind == "word" else tok.value
        digest.update(f"{tok.kind}\x1f{value}\x1e".encode("utf-8", "surrogatepass"))
    return digest.digest()[:HASH_BYTES]


class Cursors:
    """Issues and opens the cursors of one server (its secret drawn here, its paging states kept)."""

    def __init__(self, secret: bytes | None = None, max_age: float = MAX_AGE_SECONDS,
                 max_states: int = MAX_STATES) -> None:
        self._key = secret if secret is not None else secrets.token_bytes(32)
        self.max_age = max_age
        self.max_states = max_states
        self._states: OrderedDict[bytes, _Kept] = OrderedDict()
        self._lock = threading.Lock()

    def issue(self, statement: Lexed | str, paging_state: bytes | None, extra: dict[str, Any] | None = None,
              now: float | None = None, owner: bytes = b"") -> str:
        """A cursor of `statement` at `paging_state` (with `extra`), for the client `owner` alone."""
        if paging_state is not None and len(paging_state) > MAX_STATE_BYTES:
            raise CursorError("the paging state is too large for a cursor")
        state_id = secrets.token_bytes(ID_BYTES)
        with self._lock:
            self._states[state_id] = (paging_state, dict(extra or {}), owner)
            while len(self._states) > self.max_states:
                self._states.popitem(last=False)
        issued = int(time.time() if now is None else now)
        body = _HEAD.pack(VERSION, issued, statement_hash(statement), state_id)
        return base64.urlsafe_b64encode(body + self._tag(body)).decode().rstrip("=")

    def open(self, cursor: Any, statement: Lexed | str, now: float | None = None,
             owner: bytes = b"") -> CursorState:
        """The state `cursor` carries, when it was issued by this server for `statement` and given to
        the client `owner`; raises CursorError (one line) otherwise."""
        if not isinstance(cursor, str) or not cursor or len(cursor) > MAX_CURSOR_CHARS:
            raise CursorError("cursor must be the text a cut answer gave")
        try:
            raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4))
        except ValueError:
            raise CursorError("not a cursor of this server (it does not decode)") from None
        if len(raw) != _HEAD.size + TAG_BYTES:
            raise CursorError("not a cursor of this server (not its length)")
        body, tag = raw[:-TAG_BYTES], raw[-TAG_BYTES:]
        if not hmac.compare_digest(tag, self._tag(body)):
            raise CursorError("not a cursor of this server: altered, made up, or issued before it restarted")
        version, issued, hashed, state_id = _HEAD.unpack_from(body)
        if version != VERSION:
            raise CursorError(f"a cursor of version {version}, not {VERSION}")
        if not hmac.compare_digest(hashed, statement_hash(statement)):
            raise CursorError("this cursor continues another statement: give the statement it came with")
        age = (time.time() if now is None else now) - issued
        if age > self.max_age:
            raise CursorError(f"the cursor expired ({age / 60:.0f} minutes old; at most "
                              f"{self.max_age / 60:.0f}): run the statement again")
        with self._lock:
            if state_id not in self._states:
                raise CursorError(f"the cursor expired (the server keeps the last {self.max_states:,}): "
                                  "run the statement again")
            state, extra, given_to = self._states[state_id]
            if not hmac.compare_digest(given_to, owner):
                raise CursorError("this cursor was given to another client (another MCP session, or "
                                  "another OAuth identity): run the statement again")
            self._states.move_to_end(state_id)
        return CursorState(state, dict(extra), issued)

    def _tag(self, body: bytes) -> bytes:
        return hmac.new(self._key, body, hashlib.sha256).digest()[:TAG_BYTES]
