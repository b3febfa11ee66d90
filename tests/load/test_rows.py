"""Every row of a load counted, and its reading bounded (docs/load.md, "What a load reads"), against
the real server and the real binary: a bad row refused and named while the others load; a source that
cannot be read on stops with the exact count written, the Undo line, and UNDO restores them; RESUME
refuses a file whose read part changed; a FIFO, a device, a kernel file refused in one line; a 200 MB
line and a Parquet value past the budget refused in bounded memory (the child's peak RSS); a CSV
holding a blob over 64 KiB loads. Stored values are read back with the producers' own libraries
(zstandard, json), not with ours."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import zstandard
from shell_runner import CQLSH_EXT, ext, killed_part_way, run

#: The closing lines' Undo line.
UNDO = "Undo: UNDO '"


@pytest.fixture(scope="module")
def ks(cassandra) -> str:
    return cassandra.create_keyspace("load_rows")


@pytest.fixture()
def session(cassandra, ks) -> Iterator[Any]:
    s = cassandra.session(ks)
    yield s
    s.shutdown()


def shell(cassandra: Any, home: Path, ks: str, statement: str, timeout: float = 300) -> Any:
    return ext(cassandra, home, "-e", statement, keyspace=ks, timeout=timeout)


def docs_of(session: Any, table: str) -> dict[int, tuple[Any, str | None]]:
    """Each row's document, decompressed by zstandard and parsed by json (the producers' own), and note."""
    out = {}
    for row in session.execute(f"SELECT id, data, note FROM {table}"):
        text = zstandard.ZstdDecompressor().decompressobj().decompress(row.data) if row.data else None
        out[row.id] = (None if text is None else json.loads(text), row.note)
    return out


def line_of(i: int) -> str:
    return json.dumps({"id": i, "data": {"i": i, "status": "NEW"}, "note": f"n{i}"})


def test_bad_rows_are_refused_and_named_while_the_others_load_and_undo_takes_them_back(
        cassandra, ks, session, tmp_path) -> None:
    session.execute("CREATE TABLE bad (id int PRIMARY KEY, data blob, note text)")
    lines = [line_of(i).encode() for i in range(1000)]
    lines[650] = b'{"id": 2147483648, "data": {"i": 650}, "note": "past 2^31"}'       # line 651
    lines[100] = b'{"id": 100, "data": {"n": ' + b"9" * 5000 + b'}, "note": "x"}'       # line 101
    lines[200] = b'{"id": 200, "data": {"s": "\xff\xfe"}, "note": "x"}'                 # line 201
    lines[300] = b'{"id": 300, "data": {"i": 300}, "note": "\\udc00"}'                  # line 301
    lines[999] = lines[999][:30]                                                        # line 1,000, cut
    path = tmp_path / "orders.jsonl"
    path.write_bytes(b"\n".join(lines))  # the last line cut short, without its newline
    statement = f"COPY bad (id, data, note) FROM '{path}' WITH ENCODE data = 'zstd>json' CONFIRM"
    done = shell(cassandra, tmp_path, ks, statement)
    out = done.stdout
    assert done.returncode == 0, done.stderr
    assert "995 rows written (995 new, 0 overwritten), 0 already as loaded, 5 refused." in out, out
    refused = sorted(line.strip() for line in out.splitlines() if line.startswith("  refused: "))
    assert refused == sorted([
        "refused: orders.jsonl line 101: a number of 5,000 digits, more than the 4,300 a number read here "
        "may have",
        "refused: orders.jsonl line 201: not UTF-8 (byte 0xff at byte 28 of the line)",
        "refused: orders.jsonl line 301, id = 300: note: its text holds a lone surrogate (\\udc00 at "
        "character 1), which UTF-8 cannot hold: not written",
        "refused: orders.jsonl line 651, id = 2147483648: id: 2147483648 is out of range for an int "
        "(-2147483648 to 2147483647)",
        "refused: orders.jsonl line 1,000: not a JSON object (a key expected at character 30) (the file's "
        "last line, without its newline: cut short?)"]), out
    good = set(range(999)) - {100, 200, 300, 650}
    stored = docs_of(session, "bad")
    assert stored == {i: ({"i": i, "status": "NEW"}, f"n{i}") for i in good}
    undo = out[out.index(UNDO):].split("\n", 1)[0].removeprefix("Undo: ")
    undone = shell(cassandra, tmp_path, ks, undo)
    assert undone.returncode == 0 and "1,990 cells written back." in undone.stdout, undone.stdout
    assert docs_of(session, "bad") == {}


def test_a_source_that_cannot_be_read_on_stops_with_the_exact_count_and_undo_restores(
        cassandra, ks, session, tmp_path) -> None:
    session.execute("CREATE TABLE cut (id int PRIMARY KEY, data blob, note text)")
    insert = session.prepare("INSERT INTO cut (id, data, note) VALUES (?, ?, ?)")
    for i in range(0, 1000, 10):  # every tenth row there before, overwritten by the load
        old = zstandard.ZstdCompressor().compress(json.dumps({"old": i}).encode())
        session.execute(insert, (i, old, f"old {i}"))
    before = docs_of(session, "cut")
    rows = ["id,data,note"] + [f"{i},[{i}],n{i}" for i in range(1000)]
    rows[651] = '650,"[650],n650'  # line 652: a quote opened and never closed
    path = tmp_path / "orders.csv"
    path.write_text("\n".join(rows) + "\n")
    statement = f"COPY cut (id, data, note) FROM '{path}' WITH ENCODE data = 'zstd>json' CONFIRM"
    done = shell(cassandra, tmp_path, ks, statement)
    said = done.stdout + done.stderr
    assert done.returncode == 2, said
    assert "650 rows written (585 new, 65 overwritten)" in said, said
    assert "orders.csv line 652: a quoted field opened there never ends" in said, said
    assert "nothing was written" not in said and UNDO in said, said
    stored = docs_of(session, "cut")
    assert {i for i, (doc, _) in stored.items() if doc == [i]} == set(range(650))
    undo = said[said.index(UNDO):].split("\n", 1)[0].removeprefix("Undo: ")
    undone = shell(cassandra, tmp_path, ks, undo)
    assert undone.returncode == 0, undone.stderr
    assert docs_of(session, "cut") == before


def test_resume_refuses_a_file_whose_rows_read_changed(cassandra, ks, session, tmp_path) -> None:
    session.execute("CREATE TABLE changed (id int PRIMARY KEY, data blob, note text)")
    path = tmp_path / "orders.jsonl"
    path.write_text("".join(line_of(i) + "\n" for i in range(3000)))
    stat = path.stat()
    statement = f"COPY changed (id, data, note) FROM '{path}' WITH ENCODE data = 'zstd>json' PACE 200 CONFIRM"
    journal = killed_part_way(cassandra, tmp_path, ks, statement, 600, "600 cells written (part-way)")
    written = docs_of(session, "changed")
    # Other rows of the same size, the time set back: only the content tells.
    path.write_text("".join(line_of(i).replace("NEW", "OLD") + "\n" for i in range(3000)))
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert path.stat().st_size == stat.st_size
    resumed = shell(cassandra, tmp_path, ks, f"COPY RESUME '{journal}' CONFIRM")
    said = resumed.stdout + resumed.stderr
    assert "changed since the load read it" in said and "nothing was written" in said, said
    assert docs_of(session, "changed") == written


@pytest.mark.parametrize("change", ["tail replaced", "lines appended"])
def test_resume_refuses_a_file_whose_rows_not_read_yet_changed(cassandra, ks, session, tmp_path,
                                                              change) -> None:
    table = "tail" if change == "tail replaced" else "grown"
    session.execute(f"CREATE TABLE {table} (id int PRIMARY KEY, data blob, note text)")
    path = tmp_path / "orders.jsonl"
    path.write_text("".join(line_of(i) + "\n" for i in range(3000)))
    stat = path.stat()
    statement = f"COPY {table} (id, data, note) FROM '{path}' WITH ENCODE data = 'zstd>json' PACE 200 CONFIRM"
    journal = killed_part_way(cassandra, tmp_path, ks, statement, 600, "600 cells written (part-way)")
    written = docs_of(session, table)
    entries = [json.loads(line) for line in journal.read_text().splitlines()[1:] if line.startswith("{")]
    read = max(e["source_read"][0] for e in entries if "source_read" in e)
    data = path.read_bytes()
    assert 0 < read < len(data)  # the journal holds the file's first rows only
    if change == "tail replaced":  # the rows not read yet: others of the same size, the time set back
        path.write_bytes(data[:read] + data[read:].replace(b"NEW", b"OLD"))
        os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))
        assert path.stat().st_size == stat.st_size
    else:
        path.write_text(data.decode() + "".join(line_of(i) + "\n" for i in range(3000, 3100)))
    resumed = shell(cassandra, tmp_path, ks, f"COPY RESUME '{journal}' CONFIRM")
    said = resumed.stdout + resumed.stderr
    assert "changed since the load read it" in said and "nothing was written" in said, said
    assert docs_of(session, table) == written


@pytest.mark.parametrize("source", ["fifo", "/dev/zero", "/proc/self/environ"])
def test_a_fifo_a_device_and_a_kernel_file_are_refused_in_one_line(cassandra, ks, session, tmp_path,
                                                                    source) -> None:
    session.execute("CREATE TABLE IF NOT EXISTS kinds (id int PRIMARY KEY, data blob, note text)")
    if source == "fifo":
        source = str(tmp_path / "fifo")
        os.mkfifo(source)
    statement = (f"COPY kinds (id, data, note) FROM '{source}' WITH FORMAT = 'jsonl' AND ENCODE data = "
                 "'zstd>json' CONFIRM")
    done = shell(cassandra, tmp_path, ks, statement, timeout=60)
    errors = [line for line in done.stderr.splitlines() if line.startswith("COPY FROM")]
    assert len(errors) == 1 and "a load reads regular files only" in errors[0], done.stderr
    assert errors[0].endswith("nothing was written") and "Journal:" not in done.stdout, done.stdout
    assert not (tmp_path / ".cassandra" / "journal").exists() or \
        not list((tmp_path / ".cassandra" / "journal").glob("load-*"))


def test_a_format_refused_says_the_formats_in_one_line(cassandra, ks, session, tmp_path) -> None:
    """The formats and their suffixes, as the statement's refusals say them (common.file_formats)."""
    session.execute("CREATE TABLE IF NOT EXISTS kinds (id int PRIMARY KEY, data blob, note text)")
    cases = {
        f"COPY kinds FROM '{tmp_path / 'rows.txt'}' CONFIRM":
            f"cannot tell the format from the name '{tmp_path / 'rows.txt'}': end it in .parquet, .jsonl or "
            ".csv, or add WITH FORMAT = 'parquet' (or 'jsonl', 'csv')",
        f"COPY kinds FROM '{tmp_path / 'rows'}' WITH FORMAT = 'jsnol' CONFIRM":
            "unknown format 'jsnol' (did you mean jsonl?); valid: parquet, jsonl, csv",
        f"COPY kinds FROM '{tmp_path / 'rows.jsonl'}' WITH HEADER = false CONFIRM":
            "HEADER is a CSV file's option",
    }
    for statement, says in cases.items():
        done = shell(cassandra, tmp_path, ks, statement, timeout=60)
        errors = [line for line in done.stderr.splitlines() if line.startswith("COPY FROM")]
        assert len(errors) == 1 and says in errors[0], (statement, done.stderr)
        assert errors[0].endswith("nothing was written"), errors


def peak_rss(cassandra: Any, home: Path, ks: str, statement: str) -> tuple[int, str]:
    """The peak resident set (KiB) of cqlsh-ext running `statement`, and what it said."""
    done = run(CQLSH_EXT, [*cassandra.cqlsh_args, "-k", ks, "-e", statement], home, measure_rss=True,
               timeout=300)
    assert done.max_rss_kib is not None
    return done.max_rss_kib, done.stdout + done.stderr


#: A value past the budget adds at most this to the peak (KiB): a window's bytes, never the value.
ROOM_KIB = 64 << 10


def test_a_200_mb_line_is_refused_in_bounded_memory(cassandra, ks, session, tmp_path) -> None:
    session.execute("CREATE TABLE wide (id int PRIMARY KEY, data blob, note text)")
    small, big = tmp_path / "small.jsonl", tmp_path / "big.jsonl"
    small.write_text("".join(line_of(i) + "\n" for i in range(1000)))
    with big.open("w") as f:
        for i in range(1000):
            if i == 500:
                f.write('{"id": 500, "data": {"s": "')
                for _ in range(200):
                    f.write("x" * (1 << 20))
                f.write('"}, "note": "big"}\n')
            else:
                f.write(line_of(i) + "\n")
    base, _ = peak_rss(cassandra, tmp_path, ks, f"COPY wide (id, data, note) FROM '{small}' WITH ENCODE "
                       "data = 'zstd>json'")
    peak, said = peak_rss(cassandra, tmp_path, ks, f"COPY wide (id, data, note) FROM '{big}' WITH ENCODE "
                          "data = 'zstd>json'")
    assert "read 1,000 rows: 999 new" in said, said
    assert "big.jsonl line 501: a line of 209,715,246 bytes" in said, said
    assert peak <= base + ROOM_KIB, (peak, base)


def test_a_parquet_value_past_the_budget_is_refused_unread(cassandra, ks, session, tmp_path) -> None:
    session.execute("CREATE TABLE deep (id int PRIMARY KEY, data blob, note text)")
    made = tmp_path / "make.py"
    # Written in a child: the test's own process never holds the value.
    made.write_text(
        "import sys, pyarrow as pa, pyarrow.parquet as pq\n"
        "ids = list(range(1000))\n"
        "data = ['{\"i\": %d}' % i for i in ids]\n"
        "if sys.argv[2] == 'big':\n"
        "    data[500] = 'x' * (160 << 20)\n"
        "t = pa.table({'id': pa.array(ids, pa.int32()), 'data': data, 'note': ['n%d' % i for i in ids]})\n"
        "pq.write_table(t, sys.argv[1], compression='zstd', row_group_size=250)\n")
    for name in ("small", "big"):
        subprocess.run([sys.executable, str(made), str(tmp_path / f"{name}.parquet"), name], check=True)
    assert (tmp_path / "big.parquet").stat().st_size < 100_000
    load = "COPY deep (id, data, note) FROM '{}' WITH ENCODE data = 'zstd>json'"
    base, _ = peak_rss(cassandra, tmp_path, ks, load.format(tmp_path / "small.parquet"))
    peak, said = peak_rss(cassandra, tmp_path, ks, load.format(tmp_path / "big.parquet"))
    assert "read 1,000 rows: 750 new" in said and "250 refused" in said, said
    assert "big.parquet row 501: row group 3: its column data holds a value of up to 160.0 MiB" in said, said
    assert peak <= base + ROOM_KIB, (peak, base)


def test_a_csv_holding_a_blob_over_64_kib_loads(cassandra, ks, session, tmp_path) -> None:
    session.execute("CREATE TABLE blobs (id int PRIMARY KEY, data blob, note text)")
    stored = {i: zstandard.ZstdCompressor().compress(json.dumps({"i": i, "pad": "y" * 20}).encode() +
                                                      os.urandom(100 << 10)) for i in range(5)}
    path = tmp_path / "blobs.csv"
    path.write_text("id,data,note\n" + "".join(f"{i},0x{data.hex()},n{i}\n" for i, data in stored.items()))
    done = shell(cassandra, tmp_path, ks, f"COPY blobs (id, data, note) FROM '{path}' WITH FORMAT = 'csv' "
                 "CONFIRM")
    assert done.returncode == 0, done.stderr
    assert "5 rows written (5 new, 0 overwritten)" in done.stdout, done.stdout
    assert {r.id: r.data for r in session.execute("SELECT id, data FROM blobs")} == stored
