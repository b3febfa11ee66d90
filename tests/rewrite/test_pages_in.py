"""COMPRESSION REWRITE with pages in (the server's pages whole, the rows left as they are decided by
the native core from the stored bytes and never made) against the driver's rows
(CQLSH_EXT_PAGES_IN=0): the real binary on two copies of one table of nulls, empty values, values
already in the target (with and without a dictionary), values to rewrite, undecodable values,
text and binary payloads; the previews, the journals' rows and the closing figures the same, the
tables the same after every run."""

from __future__ import annotations

import gzip
import json
import subprocess
from pathlib import Path
from typing import Any

import msgpack
import pytest
import zstandard
from dictionary_values import make as make_dictionaries
from shell_runner import CQLSH_EXT, isolated_env, journal_of

from cqlsh_ext.encode.chain import encode
from cqlsh_ext.payload import native

pytestmark = pytest.mark.skipif(not native.available(), reason="the native core is not built")

ROWS = 156
COPIES = ("driver_rows", "pages_in")
WRITTEN_AT = 1_700_000_000_000_000


def _kinds(dictionaries: Any) -> list[bytes | None]:
    doc = json.dumps({"status": "NEW", "items": [1, 2, 3], "note": "leave at the door" * 3}).encode()
    zstd = zstandard.ZstdCompressor(level=3)
    return [
        None,
        b"",
        zstd.compress(doc),                                   # already in the target
        gzip.compress(doc, mtime=0),                          # rewritten
        encode("snappy/framed", doc.decode(), 1 << 20).value,  # rewritten
        dictionaries.zstd_values[0],                          # zstd with a dictionary
        dictionaries.zlib_values[0],                          # zlib with a preset dictionary
        b"\x28\xb5\x2f\xfd" + b"\x01not a frame" * 3,         # undecodable
        b"\x00\x01\x02 bytes of no format",                   # no known format
        doc,                                                  # JSON stored as it is
        zstd.compress(msgpack.packb({"a": [1, 2]})),          # zstd, binary under it
        zstd.compress(gzip.compress(doc, mtime=0)),           # zstd over gzip
        zstd.compress(doc) + b"trailing",                     # bytes after the frame
    ]


@pytest.fixture(scope="module")
def copies(cassandra, tmp_path_factory) -> Any:
    """Two copies of one table (the same keys, values, TTLs and write times), and the
    dictionaries' files."""
    ks = cassandra.create_keyspace("rewrite_pages_in")
    made = make_dictionaries(tmp_path_factory.mktemp("dictionaries"))
    kinds = _kinds(made)
    s = cassandra.session(ks)
    try:
        for name in COPIES:
            s.execute(f"CREATE TABLE {name} (id int, ck text, data blob, other text, PRIMARY KEY (id, ck))")
            for i in range(ROWS):
                ttl = " AND TTL 86400" if i % 5 == 0 else ""
                s.execute(f"INSERT INTO {name} (id, ck, data, other) VALUES (%s, %s, %s, 'kept') "
                          f"USING TIMESTAMP {WRITTEN_AT + i}{ttl}",
                          (i // 3, "" if i % 3 == 0 else f"c{i}", kinds[i % len(kinds)]))
    finally:
        s.shutdown()
    return ks, made


def _run(cassandra: Any, ks: str, home: Path, dictionaries: Any, statement: str, pages_in: bool) -> str:
    env = isolated_env(home)
    if not pages_in:
        env["CQLSH_EXT_PAGES_IN"] = "0"
    files = ["--dictionary", str(dictionaries.zstd_file), "--dictionary", str(dictionaries.zlib_file)]
    done = subprocess.run([CQLSH_EXT, *cassandra.cqlsh_args, "-k", ks, *files, "-e", statement],
                          capture_output=True, text=True, env=env, timeout=600)
    assert done.returncode == 0 and "rror" not in done.stderr, done.stdout + done.stderr
    return done.stdout


def _figures(out: str, name: str) -> list[str]:
    """The output's lines but for the journal's path and the run's time."""
    return [line.replace(f".{name}.", ".T.") for line in out.splitlines()
            if not line.startswith(("Journal: ", "Undo: ")) and " a second " not in line]


def _journal(out: str) -> dict[tuple[str, ...], tuple[Any, ...]]:
    """Per row's key, what the journal says of it: the bytes read and written, the write time read
    and the timestamp written, whether it had a TTL, and whether the write applied; and the token
    ranges finished."""
    entries = [json.loads(line) for line in journal_of(out).read_text().splitlines()[1:]]
    applied = {e["row"]: e["applied"] for e in entries if "applied" in e}
    rows = {tuple(sorted(e["key"].items())): (e["old"], e["new"], e["writetime"], e["at"], e["ttl"] is None,
                                              applied.get(e["row"]))
            for e in entries if "key" in e}
    rows[("ranges",)] = tuple(sorted(e["range"] for e in entries if "range" in e))
    return rows


def _table(cassandra: Any, ks: str, name: str) -> dict[tuple[int, str], tuple[Any, ...]]:
    s = cassandra.session(ks)
    try:
        return {(r.id, r.ck): (r.data, r.other, r.w) for r in
                s.execute(f"SELECT id, ck, data, other, WRITETIME(data) AS w FROM {name}")}
    finally:
        s.shutdown()


def test_rewrites_with_and_without_pages_in_read_write_and_journal_the_same_rows(cassandra, copies,
                                                                                   tmp_path) -> None:
    ks, made = copies
    runs: dict[str, list[str]] = {name: [] for name in COPIES}
    journals: dict[str, list[Any]] = {name: [] for name in COPIES}
    # The preview of every row, then the target with the dictionary (the values written with it
    # are in it already; the others are rewritten with it), then without (every one rewritten).
    statements = ("COMPRESSION REWRITE {t}.data AS 'zstd' ALL",
                  f"COMPRESSION REWRITE {{t}}.data AS 'zstd:dict={made.zstd_id}' CONFIRM",
                  "COMPRESSION REWRITE {t}.data AS 'zstd' CONFIRM")
    for statement in statements:
        for name in COPIES:
            out = _run(cassandra, ks, tmp_path / name, made, statement.format(t=name), name == "pages_in")
            runs[name].append("\n".join(_figures(out, name)))
            if "CONFIRM" in statement:
                journals[name].append(_journal(out))
        assert runs["pages_in"][-1] == runs["driver_rows"][-1]
        assert _table(cassandra, ks, "pages_in") == _table(cassandra, ks, "driver_rows")
    assert journals["pages_in"] == journals["driver_rows"]
    preview, with_dictionary, without = runs["pages_in"]
    # What a user reads: every kind of value counted, each row rewritten at most once per run.
    assert "read 156 rows" in preview and "already zstd" in preview, preview
    assert "null: nothing to rewrite" in preview, preview
    assert "it does not decode" in with_dictionary and "no known format" in with_dictionary, with_dictionary
    assert "already zstd with dictionary" in with_dictionary and "already zstd" in without, without
    first, second = journals["pages_in"]
    assert sum(1 for key, row in first.items() if key != ("ranges",) and row[-1]) > 0
    assert sum(1 for key, row in second.items() if key != ("ranges",) and row[-1]) > 0
    assert first[("ranges",)] == second[("ranges",)] == tuple(range(16))
