"""`query`'s rows as the client receives them, against an oracle made here apart from cqlsh-ext: the
stored bytes read with the driver, decompressed by the producers' own libraries (zstandard, snappy,
gzip) and read by json; the answer's cut (a string past 2,000 characters, a list or object past
1,000 entries: sizing's documented first cut) and the policy's redaction applied here to that JSON.
A page holds what the core lays out (JSON documents whose numbers and escapes json spells otherwise
than they are written, a plain text, a value in no known format, a null) beside values the answer
cuts and columns the policy redacts whole or inside; whole documents and paths, with and without
the policy. Each answer's JSON is also the compact json.dumps of what it holds, byte for byte."""

from __future__ import annotations

import gzip
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import snappy
import zstandard

from .conftest import Demo

pytestmark = pytest.mark.server

CHARS, ITEMS = 2000, 1000
REDACTED = "[redacted]"

#: Documents as their producer wrote them: numbers and escapes json.dumps spells otherwise (1.50,
#: 1E5, -0, \u00e9, \/), a key twice, whitespace between tokens.
WRITTEN = [
    '{"orderId": "A-0", "price": 1.50, "big": 1E5, "neg": -0, "name": "caf\\u00e9 \\/ \\"x\\"",\n'
    ' "customer": {"email": "ana@example.com", "name": "Ana", "name": "Ana B."},'
    ' "huge": 123456789012345678901234567890,'
    ' "tags": ["a", "\\u2028", "\\t"], "nothing": null, "yes": true}',
    json.dumps({"orderId": "B-1", "notes": "é" * 2500, "items": list(range(1200)),
                "customer": {"email": "bo@example.com", "name": "Bo"}}),
    "just some words, no JSON",
    json.dumps({"orderId": "C-3", "lines": [{"sku": f"S{i}", "qty": i} for i in range(1001)],
                "customer": {"email": "cy@example.com", "name": "Cy"}, "price": 0.1}),
]
NO_FORMAT = bytes(range(256)) * 5
#: An integer of more digits than Python reads by default: answered as the string of its digits.
HUGE = "9" * 4400
LONG_NOTE = "n" * 2100


def _stored(i: int) -> bytes | None:
    if i == 4:
        return None
    if i == 5:
        return NO_FORMAT
    text = (f'{{"orderId": "D-6", "huge": {HUGE}}}' if i == 6 else WRITTEN[i % len(WRITTEN)]).encode()
    return (zstandard.ZstdCompressor().compress(text) if i % 3 == 0 else snappy.compress(text)
            if i % 3 == 1 else gzip.compress(text))


def _decoded(stored: bytes) -> Any:
    """The stored value read with the producers' libraries: a JSON text's value, else its text."""
    for read in (lambda b: zstandard.ZstdDecompressor().decompress(b, max_output_size=1 << 20),
                 snappy.decompress, gzip.decompress):
        try:
            text = read(stored).decode()
            break
        except Exception:  # noqa: BLE001 - not this producer's
            continue
    else:
        return None
    try:
        return json.loads(text, parse_int=lambda n: Digits(n) if len(n) > 4300 else int(n))
    except ValueError:
        return text


class Digits(str):
    """An integer past Python's 4,300 digits, as the answer spells it: its digits, a string (no
    string the answer cuts: the cut is the integer's)."""


def _cut(value: Any) -> Any:
    if isinstance(value, str) and not isinstance(value, Digits):
        return value if len(value) <= CHARS else value[:CHARS] + "…"
    if isinstance(value, list):
        return [_cut(v) for v in value[:ITEMS]]
    if isinstance(value, dict):
        return {k: _cut(v) for k, v in list(value.items())[:ITEMS]}
    return value


def _redacted(doc: Any) -> Any:
    """The policy's redaction of data.customer.email: a text that is no JSON could hold it
    anywhere, and goes whole."""
    if isinstance(doc, str):
        return REDACTED
    if isinstance(doc, dict) and isinstance(doc.get("customer"), dict):
        return {**doc, "customer": {**doc["customer"], "email": REDACTED}}
    return doc


@pytest.fixture(scope="module")
def table(cassandra, demo: Demo) -> Iterator[str]:  # type: ignore[no-untyped-def]
    """The demo keyspace's `laid_out` table for this module only (dropped after it: other modules
    count the demo's tables, on a server reused between runs too)."""
    name = f"{demo.keyspace}.laid_out"
    session = cassandra.session()
    session.execute(f"CREATE TABLE IF NOT EXISTS {name} "
                    "(id int PRIMARY KEY, note text, secret text, data blob)")
    insert = session.prepare(f"INSERT INTO {name} (id, note, secret, data) VALUES (?, ?, ?, ?)")
    for i in range(12):
        session.execute(insert, (i, LONG_NOTE if i == 7 else f"note {i}", f"s3cret-{i}", _stored(i)))
    yield name
    session.execute(f"DROP TABLE IF EXISTS {name}")
    session.shutdown()


def _oracle(cassandra, table: str, redacting: bool) -> dict[int, dict[str, Any]]:  # type: ignore[no-untyped-def]
    """Each row's expected `data` payload (None: a null or no known format), note and secret."""
    session = cassandra.session()
    rows = {}
    for row in session.execute(f"SELECT id, note, secret, data FROM {table}"):
        doc = _decoded(row.data) if row.data is not None else None
        rows[row.id] = {"payload": _cut(_redacted(doc) if redacting else doc), "note": _cut(row.note),
                        "secret": REDACTED if redacting else row.secret, "stored": row.data}
    session.shutdown()
    return rows


def _answer(server: Any, statement: str) -> list[dict[str, Any]]:
    result = server.call("query", statement=statement, max_bytes=1 << 20)
    line = result.texts[0].split("\n")[1]
    data = result.data
    # the answer's JSON is json.dumps' compact spelling of the values it holds, byte for byte
    assert line == json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    assert data["count"] == 12 and data["cut"] is None
    rows: list[dict[str, Any]] = data["rows"]
    return rows


def _blob_checked(found: Any, expected: dict[str, Any], redacting: bool) -> None:
    stored = expected["stored"]
    if stored is None:  # (the redaction's rule: a value it cannot walk into goes, a null too)
        assert found == (REDACTED if redacting else None)
    elif stored == NO_FORMAT:  # the hex, one string, cut; redacted whole (no JSON to walk into)
        assert found == (REDACTED if redacting else "0x" + stored.hex()[:CHARS - 2] + "…")
    else:
        assert found["kind"] == "text" and found["payload"] == expected["payload"], found
        assert any(name in found["label"].lower() for name in ("zstd", "snappy", "gzip")), found["label"]


@pytest.mark.parametrize("redacting", [False, True], ids=["plain", "policy"])
def test_query_rows_are_the_producers_values_cut_and_redacted(cassandra, serve, demo: Demo, table: str,
                                                             tmp_path: Path, redacting: bool) -> None:
    args: list[str] = []
    if redacting:
        policy = tmp_path / "policy.toml"
        policy.write_text(f'[redact]\ncolumns = ["{table}.secret", "{table}.data.customer.email"]\n')
        args = ["--policy", str(policy)]
    server = serve(*args)
    oracle = _oracle(cassandra, table, redacting)
    whole = _answer(server, f"SELECT id, note, secret, data FROM {table}")
    for row in whole:
        expected = oracle[row["id"]]
        assert list(row) == ["id", "note", "secret", "data"]
        assert row["note"] == expected["note"] and row["secret"] == expected["secret"]
        _blob_checked(row["data"], expected, redacting)
    paths = _answer(server, f"SELECT id, data.customer, data.notes, data.items, data.price FROM {table}")
    for row in paths:
        payload = oracle[row["id"]]["payload"]
        doc = payload if isinstance(payload, dict) else {}
        customer = doc.get("customer")  # (a path holding the redacted place, no object: it goes whole)
        customer = REDACTED if redacting and not isinstance(customer, dict) else customer
        assert row == {"id": row["id"], "data.customer": customer, "data.notes": doc.get("notes"),
                       "data.items": doc.get("items"), "data.price": doc.get("price")}, row
    assert any(isinstance(r["data.notes"], str) and r["data.notes"].endswith("…") for r in paths)
