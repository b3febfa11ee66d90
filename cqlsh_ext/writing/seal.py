"""Journals are sealed, so that a journal changed by anyone but the user who wrote it is refused
(docs/edit.md, "The journal's seal": each rule and the threat it answers).

One key per user, at one fixed place: `~/.cassandra/cqlsh-ext-journal.key` (cqlsh's own directory
of the user's, whatever the journal directory is), 32 random bytes, made readable and writable by
the user only (0600) by the first journal written (a key gone missing once journals were sealed
with it is never made again by a write: writing.journal.writing_key; `cqlsh-ext journal new-key`
makes one on purpose); never looked up beside a journal, so a journal copied with its folder brings
no key that counts. It is read only through a regular file of the user's own
that nobody else can read or write, and never printed, logged or journaled.

Each line of a journal ends with its MAC: HMAC-SHA256 under the key over the journal's chain id
(its run's random id, the head's "run"; a Spark part's adds its number), the line's number, the
previous line's MAC and the line's own bytes. So a line changed, moved, dropped (but the last ones)
or taken from another journal breaks the chain where it happens; the head line, which names the
table, the column and the request, is sealed the same way. A journal that ends without its closing
line (`{"closed": true}`) was killed, or lost lines at its end: its rows without an outcome are
then written back only where the cell shows they were written (writing.undo).

Spark's executors never see the key: the driver seals each task's head line and gives the task a
key of that run's own, HMAC of the user's key and the run's id, which seals the part's other lines
(`run_key`); a reader derives it again from the head it verified.

The line as written: the entry's JSON with `, "mac": "<64 hex digits>"` before its closing brace,
so each line stays one JSON object and the bytes the MAC covers are the line's own.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import re
from typing import Any

from cqlsh_ext.common import private_key
from cqlsh_ext.writing.refused import WriteRefused

#: The key's file, in cqlsh's directory of the user's (~/.cassandra).
KEY_DIRECTORY = os.path.join("~", ".cassandra")
KEY_FILE = "cqlsh-ext-journal.key"
KEY_BYTES = private_key.KEY_BYTES
#: What the MAC of a line is taken over, before the chain id: the format and its version.
_DOMAIN = b"cqlsh-ext write journal 3\x00"
_RUN_DOMAIN = b"cqlsh-ext spark run key\x00"
#: The MAC before a journal's first line.
NO_MAC = bytes(32)
_SEALED = re.compile(rb', "mac": "([0-9a-f]{64})"\}$')


def key_path() -> str:
    return os.path.join(os.path.expanduser(KEY_DIRECTORY), KEY_FILE)


class KeyMissing(WriteRefused):
    """There is no journal key at its place (str(): the one line a read says)."""


def user_key(create: bool) -> bytes:
    """The user's journal key (made first when `create`: the first journal ever written; the
    writer checks first that no journal was sealed with a key now missing, writing.journal);
    WriteRefused, naming the file and why, when it is missing (KeyMissing: a read), not the user's
    own regular file, open to others or not a key (common.private_key's checks)."""
    path = key_path()
    try:
        return (private_key.user_key if create else private_key.read_key)(path, "the journal key")
    except FileNotFoundError:
        raise KeyMissing(f"there is no journal key at {path}, which sealed the journals this user "
                         "wrote: this journal cannot be verified") from None
    except private_key.KeyRefused as err:
        raise WriteRefused(str(err)) from None


def make_key() -> bool:
    """A new key at its place (common.private_key.make_key: another process making one at the same
    moment keeps its own); False when there was one already. WriteRefused when it cannot be made."""
    try:
        return private_key.make_key(key_path(), "the journal key")
    except private_key.KeyRefused as err:
        raise WriteRefused(str(err)) from None


def run_key(key: bytes, run: str) -> bytes:
    """The key of one Spark run's parts: HMAC of the user's key and the run's id (an executor that
    holds it seals that run's lines and no other journal's)."""
    return hmac.new(key, _RUN_DOMAIN + run.encode("ascii"), hashlib.sha256).digest()


def new_run() -> str:
    """A run's id: 128 random bits, in hex."""
    return os.urandom(16).hex()


def _mac(key: bytes, chain: str, number: int, previous: bytes, body: bytes) -> bytes:
    message = b"".join((_DOMAIN, chain.encode("ascii"), b"\x00", str(number).encode("ascii"), b"\x00",
                        previous, body))
    return hmac.digest(key, message, hashlib.sha256)  # the one-shot form: no HMAC object a line


class Sealer:
    """Seals the lines of one journal in order: `line(entry)` gives the line's bytes. `number` and
    `previous` go on from a journal read back (RESUME appends)."""

    def __init__(self, key: bytes, chain: str, number: int = 0, previous: bytes = NO_MAC) -> None:
        self._key = key
        self.chain = chain
        self.number = number
        self.previous = previous

    def line(self, entry: dict[str, Any]) -> bytes:
        """`entry` as its sealed line."""
        body = json.dumps(entry).encode("utf-8")
        self.number += 1
        mac = _mac(self._key, self.chain, self.number, self.previous, body)
        self.previous = mac
        return body[:-1] + b', "mac": "' + mac.hex().encode("ascii") + b'"}\n'


def body_of(line: bytes) -> tuple[bytes, bytes] | None:
    """A sealed line's bytes without its MAC (the entry's JSON as sealed) and its MAC; None when the
    line ends in no MAC."""
    line = line.rstrip(b"\n")
    found = _SEALED.search(line)
    if found is None:
        return None
    return line[:found.start()] + b"}", bytes.fromhex(found.group(1).decode("ascii"))


class Verifier:
    """Checks the lines of one journal in order, as Sealer sealed them."""

    def __init__(self, key: bytes, chain: str) -> None:
        self._key = key
        self.chain = chain
        self.number = 0
        self.previous = NO_MAC

    def check(self, body: bytes, mac: bytes, key: bytes | None = None) -> bool:
        """Whether the next line's MAC is `mac` (under `key` when given); the chain moves on only
        when it is."""
        expected = _mac(key or self._key, self.chain, self.number + 1, self.previous, body)
        if not hmac.compare_digest(expected, mac):
            return False
        self.number += 1
        self.previous = mac
        return True
