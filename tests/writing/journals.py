"""Journals as an attacker or a careless colleague would change them, for the tests that check they
are refused: lines read and written as bytes, and resealed with the user's key (which a test that
runs as the user may read) as docs/edit.md describes the seal, written here independently of
cqlsh_ext.writing.seal: HMAC-SHA256 over the format, the chain id, the line's number, the previous
MAC and the line without its MAC."""

from __future__ import annotations

import hashlib
import hmac
import json
import re
from pathlib import Path
from typing import Any

KEY_FILE = Path(".cassandra") / "cqlsh-ext-journal.key"
_MAC = re.compile(rb', "mac": "([0-9a-f]{64})"\}$')


def key_of(home: Path) -> bytes:
    return (home / KEY_FILE).read_bytes()


def lines_of(path: Path) -> list[bytes]:
    return path.read_bytes().splitlines(keepends=True)


def entry(line: bytes) -> dict[str, Any]:
    """A line's entry, its MAC left out."""
    found = _MAC.search(line.rstrip(b"\n"))
    body = line.rstrip(b"\n")[:found.start()] + b"}" if found else line
    return json.loads(body)


def line_of(value: dict[str, Any]) -> bytes:
    """An entry as a line without a MAC (reseal gives it one)."""
    return json.dumps(value).encode() + b"\n"


def reseal(lines: list[bytes], key: bytes) -> bytes:
    """`lines` (entries with or without their MACs) sealed again in order with `key`: what only
    someone holding the user's key can make."""
    out, previous = [], bytes(32)
    head = entry(lines[0])
    chain = head["run"] if head.get("part") is None else f"{head['run']}.part-{head['part']:04d}"
    for number, line in enumerate(lines, 1):
        body = json.dumps(entry(line)).encode()
        message = (b"cqlsh-ext write journal 3\x00" + chain.encode() + b"\x00" + str(number).encode()
                   + b"\x00" + previous + body)
        mac = hmac.new(key, message, hashlib.sha256).digest()
        previous = mac
        out.append(body[:-1] + b', "mac": "' + mac.hex().encode() + b'"}\n')
    return b"".join(out)


def until(done: Any, what: str, timeout: float = 300.0) -> None:
    """Wait for `done()` to be true (a state: lines in a journal, a file), at most `timeout`
    seconds, then fail naming `what`."""
    import time

    deadline = time.monotonic() + timeout
    while not done():
        if time.monotonic() > deadline:
            raise AssertionError(f"no {what} within {timeout:.0f} s")
        time.sleep(0.05)
