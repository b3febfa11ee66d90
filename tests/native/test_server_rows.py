"""Pages in (scanning.pages_in, payload.server_rows): a RESULT page kept as the server sent it,
its cells split by the core (and by the Python reader), then made values by the driver's own
`from_binary`, equal the driver's rows, over a table of every CQL type with nulls and empty values,
page after page; a mutated or truncated page is refused in one line by both readers alike."""

from __future__ import annotations

import datetime
import uuid
from collections import namedtuple
from decimal import Decimal
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cqlsh_ext.payload import native
from cqlsh_ext.payload.server_rows import MalformedPage, ServerRows, split_cells
from cqlsh_ext.scanning.scan import execute_tuples

COLUMNS = {
    "k": "int", "ti": "tinyint", "si": "smallint", "bi": "bigint", "vi": "varint", "de": "decimal",
    "fl": "float", "db": "double", "bo": "boolean", "tx": "text", "asci": "ascii", "bl": "blob",
    "ts": "timestamp", "dt": "date", "tm": "time", "du": "duration", "id": "uuid", "tid": "timeuuid",
    "ip": "inet", "li": "list<int>", "st": "set<text>", "mp": "map<text, bigint>",
    "tu": "tuple<int, text, blob>", "ad": "frozen<address>", "ve": "vector<float, 3>",
    "nested": "frozen<list<frozen<map<text, varint>>>>", "lb": "list<blob>", "ct": "counter_free",
}
del COLUMNS["ct"]  # (a counter cannot sit beside other columns)
ROWS = 23


@pytest.fixture(scope="module")
def every_type(cassandra: Any) -> tuple[Any, str]:
    """A table of every CQL type: full rows, rows of nulls, rows of empty values; and a session."""
    from cassandra.util import Duration

    ks = cassandra.create_keyspace("pagesin")
    session = cassandra.session(ks)
    session.execute("CREATE TYPE address (street text, zip int, photo blob)")
    columns = ", ".join(f"{name} {cql}" for name, cql in COLUMNS.items())
    session.execute(f"CREATE TABLE typed ({columns}, PRIMARY KEY (k))")
    address = namedtuple("address", "street zip photo")
    session.cluster.register_user_type(ks, "address", address)
    names = list(COLUMNS)
    insert = session.prepare(f"INSERT INTO typed ({', '.join(names)}) VALUES ({', '.join('?' * len(names))})")
    for k in range(ROWS):
        if k % 3 == 1:  # nulls
            session.execute(insert, [k] + [None] * (len(names) - 1))
            continue
        session.execute(insert, [
            k, -7 + k, 300 * k, -(2**62) + k, 10**20 * (k + 1), Decimal(f"{k}.345"), 1.5 * k, 0.1 * k,
            k % 2 == 0, f"naïve ✓ {k}", "plain", bytes(range(k)) + b"\x00\xff",
            datetime.datetime(2024, 2, 23, 2, 16, 41, 123000), datetime.date(1969, 7, 20),
            datetime.time(13, 45, 7, 250000), Duration(1, 2, 3_000_000_007 + k),
            uuid.UUID(int=k), uuid.UUID("5e1b0a3c-7a1b-11ee-b962-0242ac120002"), f"10.0.0.{k}",
            [3, 1, k], {"b", "a", str(k)}, {"x": 2**40 + k}, (5, "five", b"\x01" * k),
            address("Main St", 12345 + k, b"\x89PNG" * k), [1.0, 2.5, -float(k)], [{"big": 10**30 + k}],
            [b"", b"\x1f\x8b" * k],
        ])
    # Empty values (not null) where CQL allows them: the protocol's length 0.
    session.execute("INSERT INTO typed (k, tx, asci, bl, vi, de, bi, bo, fl, db, ip, id, ts) VALUES "
                    f"({ROWS}, '', '', 0x, blobAsVarint(0x), blobAsDecimal(0x), blobAsBigint(0x), "
                    "blobAsBoolean(0x), blobAsFloat(0x), blobAsDouble(0x), blobAsInet(0x), blobAsUuid(0x), "
                    "blobAsTimestamp(0x))")
    return session, f"{ks}.typed"


def _pages(session: Any, table: str, pages_in: bool) -> list[tuple[list[str], Any]]:
    """Every page of the whole table, 5 rows a page, through scan.execute_tuples."""
    from cassandra.query import SimpleStatement

    statement = SimpleStatement(f"SELECT * FROM {table}", fetch_size=5)
    out = []
    fut = execute_tuples(session, statement, pages_in=pages_in)
    while True:
        result = fut.result()
        out.append((result.column_names, result.current_rows))
        if not fut.has_more_pages:
            return out
        fut.start_fetching_next_page()


def test_the_servers_pages_read_by_from_binary_equal_the_drivers_rows(
        every_type: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """...and by the driver's own Cython row parser fed the core's select_rows (whole rows, a column
    of some rows), as ServerRows makes them where both are there."""
    from cqlsh_ext.payload import server_rows

    session, table = every_type
    driver = _pages(session, table, pages_in=False)
    ours = _pages(session, table, pages_in=True)
    assert len(ours) == len(driver) >= 5  # paged alike (the paging state is the metadata's)
    seen_null = seen_empty = 0
    for (names, rows), (our_names, page) in zip(driver, ours, strict=True):
        assert isinstance(page, ServerRows) and our_names == names
        assert page.start > 0  # the rows read where they are in the message, not copied out
        assert page._rows is None  # nothing made rows of it on its way (the driver's ResultSet iter()s it)
        some = list(range(len(rows)))[::-2]
        for parser in ([None], []):  # from_binary; the driver's parser (where it and the core are)
            monkeypatch.setattr(server_rows, "_PARSER", list(parser))
            fresh = ServerRows(page.body, page.row_count, page.types, page.protocol_version)
            assert (fresh.parsed([0]) is not None) == (not parser and native.available()
                                                       and server_rows._row_parser() is not None)
            for i in range(len(names)):
                assert fresh.column(i, some) == [rows[k][i] for k in some], names[i]
            fresh.make(some)
            assert [fresh[k] for k in some] == [tuple(rows[k]) for k in some]
        assert list(page) == [tuple(row) for row in rows]  # every column, every CQL type
        for i in range(len(names)):
            assert page.column(i) == [row[i] for row in rows], names[i]
            cells = page.cells([i])[0]
            assert split_cells(page.body, page.row_count, page.columns, [i])[0] == cells
            seen_null += cells.count(None)
            seen_empty += cells.count(b"")
    assert seen_null and seen_empty
    # The shell's stock results never see the handler: the session's is as it was.
    from cassandra.protocol import ProtocolHandler

    assert session.client_protocol_handler is ProtocolHandler


def test_kept_rows_made_by_the_drivers_row_parser_equal_its_rows(every_type: Any,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """ServerRows.make (a reader's kept rows): by the driver's own row parser (its Cython) over
    those rows' bytes, and by from_binary where the driver has no Cython, the driver's rows, for
    every CQL type, nulls and empty values; the whole page likewise."""
    from cassandra.cython_deps import HAVE_CYTHON

    from cqlsh_ext.payload import server_rows

    session, table = every_type
    driver = _pages(session, table, pages_in=False)
    ours = _pages(session, table, pages_in=True)
    assert HAVE_CYTHON and server_rows._row_parser() is not None  # (the driver's wheel has it)
    for parser in ("cython", "from_binary"):
        if parser == "from_binary":
            monkeypatch.setattr(server_rows, "_PARSER", [None])
        for (_names, rows), (_our_names, page) in zip(driver, ours, strict=True):
            fresh = ServerRows(page.body, page.row_count, page.types, page.protocol_version)
            kept = list(range(len(rows)))[::-2]  # some rows, asked out of order
            fresh.make(kept)
            assert fresh._rows is None and sorted(fresh._made) == sorted(kept), parser
            assert [fresh[k] for k in kept] == [tuple(rows[k]) for k in kept], parser
            again = ServerRows(page.body, page.row_count, page.types, page.protocol_version)
            assert again.rows() == [tuple(row) for row in rows], parser
    with pytest.raises(MalformedPage, match=r"^a malformed page of rows: row 9 asked of a page of 1 rows"):
        ServerRows(_body([b"x"]), 1, [object()], 5).make([9])


def _body(cells: list[bytes | None]) -> bytes:
    out = bytearray()
    for cell in cells:
        if cell is None:
            out += (-1).to_bytes(4, "big", signed=True)
        else:
            out += len(cell).to_bytes(4, "big") + cell
    return bytes(out)


def _read(how: str, body: bytes, count: int, columns: int, wanted: list[int]) -> Any:
    try:
        if how == "core":
            return native.split_page(body, count, columns, wanted)
        return split_cells(body, count, columns, wanted)
    except ValueError as err:
        text = str(err)
        assert "\n" not in text and text.startswith("a malformed page of rows: "), text
        return "refused"


cell = st.one_of(st.none(), st.binary(max_size=12))


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(columns=st.integers(1, 4), data=st.data())
def test_a_mutated_page_is_read_or_refused_alike_never_a_crash(native_core: None, columns: int,
                                                                data: st.DataObject) -> None:
    rows = data.draw(st.integers(0, 6))
    cells = data.draw(st.lists(cell, min_size=rows * columns, max_size=rows * columns))
    body = bytearray(_body(cells))
    whole = _read("core", bytes(body), rows, columns, list(range(columns)))
    assert whole == [cells[c::columns] for c in range(columns)]
    # Mutations: bytes flipped, the page cut or grown, the row count wrong.
    for _ in range(data.draw(st.integers(0, 3))):
        if body:
            at = data.draw(st.integers(0, len(body) - 1))
            body[at] = data.draw(st.integers(0, 255))
    cut = data.draw(st.integers(0, len(body) + 3))
    mutated = bytes(body[:cut]) + b"\x00" * max(0, cut - len(body))
    count = rows + data.draw(st.integers(-1, 1))
    wanted = data.draw(st.lists(st.integers(0, columns), max_size=3))
    if count < 0:
        return
    core, python = (_read(how, mutated, count, columns, wanted) for how in ("core", "python"))
    assert core == python
    # The same page where the handler leaves it: inside its whole message, from `start` (no copy).
    prefix = data.draw(st.binary(max_size=9))
    try:
        placed: Any = ServerRows(prefix + mutated, count, [object()] * columns, 5, len(prefix)).cells(wanted)
    except MalformedPage as err:
        assert str(err).startswith("a malformed page of rows: "), err
        placed = "refused"
    assert placed == core
    # The rows section select_rows copies the same cells into (what the driver's parser reads):
    # refused alike, or those cells again.
    try:
        section = native.select_rows(mutated, count, columns, wanted)
    except ValueError as err:
        assert core == "refused" and str(err).startswith("a malformed page of rows: "), err
    else:
        assert int.from_bytes(section[:4], "big") == count
        assert split_cells(section[4:], count, len(wanted), list(range(len(wanted)))) == core
    # Whole rows (a reader's kept rows, every column: each row copied as one span): those rows'
    # cells as the server sent them, or refused in one line where the page or a row asked is wrong.
    picked = data.draw(st.lists(st.integers(0, count), max_size=3))
    whole = _read("core", mutated, count, columns, list(range(columns)))
    try:
        got: Any = native.select_rows(mutated, count, columns, list(range(columns)), picked)
    except ValueError as err:
        assert "\n" not in str(err) and str(err).startswith(("a malformed page of rows: ", "row ")), err
        got = "refused"
    if whole == "refused" or any(row >= count for row in picked):
        assert got == "refused"
    else:  # (read back: a null is a length -1 or -2, as the server sent it)
        assert int.from_bytes(got[:4], "big") == len(picked)
        assert split_cells(got[4:], len(picked), columns, list(range(columns))) == \
            [[column[row] for row in picked] for column in whole]


def test_a_refused_page_says_where_in_one_line(native_core: None) -> None:
    body = _body([b"abc", None])
    with pytest.raises(MalformedPage, match=r"^a malformed page of rows: the page ends inside row 0"):
        ServerRows(body[:-1], 1, [object(), object()], 5).cells([0])
    with pytest.raises(MalformedPage, match=r"^a malformed page of rows: 3 bytes after the last of 1 rows"):
        ServerRows(body + b"xyz", 1, [object(), object()], 5).cells([1])


def test_stats_on_a_truncated_page_says_so_in_one_line(native_core: None) -> None:
    """COMPRESSION STATS handed a page cut short: one line (the scan reports it as its error)."""
    from cassandra.cqltypes import BytesType, Int32Type

    from cqlsh_ext.insight.stats import Stats

    stats = Stats("SELECT k, data FROM t")
    stats.set_columns(["k", "data"], [Int32Type, BytesType])
    body = _body([b"\x00\x00\x00\x01", b"\x1f\x8b" + b"x" * 30])
    stats.add_rows(ServerRows(body, 1, [Int32Type, BytesType], 5))
    assert stats.rows == 1 and stats.columns["data"].values == 1
    with pytest.raises(MalformedPage, match=r"^a malformed page of rows: row 0, column 1: 32 bytes asked"):
        stats.add_rows(ServerRows(body[:-4], 1, [Int32Type, BytesType], 5))


def test_stats_of_a_server_page_with_values_handed_back_equal_its_rows(native_core: None) -> None:
    """A page whose values the core reads, hands back (bzip2, xz: the Python engine's), finds
    null or empty, in a blob column and a text column: STATS' figures from the server's page equal
    those from the driver's rows of it."""
    import bz2
    import gzip
    import lzma

    from cassandra.cqltypes import BytesType, Int32Type, UTF8Type

    from cqlsh_ext.insight.stats import Stats

    doc = b'{"order": "ORD-1", "status": "NEW", "items": [1, 2, 3]}' * 4
    blobs = [gzip.compress(doc, mtime=0), bz2.compress(doc), None, b"", lzma.compress(doc), b"plain bytes"]
    texts = ["caf\u00e9", None, "", '{"a": 1}', "x" * 300, "t"]
    cells: list[bytes | None] = []
    for k, (blob, text) in enumerate(zip(blobs, texts, strict=True)):
        cells += [k.to_bytes(4, "big"), blob, None if text is None else text.encode()]
    types = [Int32Type, BytesType, UTF8Type]
    page = ServerRows(_body(cells), len(blobs), types, 5)
    reports = []
    driver_rows = list(ServerRows(page.body, page.row_count, types, 5))  # from_binary, as the driver
    for rows in (page, driver_rows):
        stats = Stats("SELECT k, data, note FROM t")
        stats.set_columns(["k", "data", "note"], types)
        stats.add_rows(rows)
        stats.finish()
        doc_ = stats.to_json()
        reports.append({k: v for k, v in doc_.items() if k not in ("elapsed_s", "rows_per_s")})
    assert reports[0] == reports[1]
    assert page._rows is None  # the core read the page; only the values handed back were made
    chains = {entry["chain"] for column in reports[0]["columns"] for entry in column["by_chain"]}
    assert any(chain.startswith("bzip2") for chain in chains) and any(c.startswith("xz") for c in chains)


#: Payload queries over a server page: a filter, its rows shown with their text and blob (views),
#: GROUP BY with aggregates, and the undecodable rows (the values the core hands back among them).
QUERIES = [
    "SELECT k, note, data.status FROM t WHERE data.status = 'NEW' ALLOW FILTERING",
    "SELECT * FROM t WHERE data.n > 1 ALLOW FILTERING",
    "SELECT data.status, count(*), sum(data.n), min(data.n) FROM t GROUP BY data.status ALLOW FILTERING",
    "SELECT k, note FROM t WHERE data IS UNDECODABLE ALLOW FILTERING",
]


@pytest.mark.parametrize("statement", QUERIES, ids=["filter", "star", "group-by", "undecodable"])
def test_a_query_of_a_server_page_equals_the_query_of_its_rows(native_core: None, statement: str) -> None:
    """A payload query handed the server's page (pages in: the core reads the blob column's cells
    from its bytes) gives the answer and counts the driver's rows of it give, over values the core
    reads, hands back (bzip2, xz), null and empty blobs and texts; only the rows kept or handed
    back are made by the driver."""
    import bz2
    import gzip
    import lzma
    import sys
    from pathlib import Path

    from cassandra.cqltypes import BytesType, Int32Type, UTF8Type

    from cqlsh_ext.payload.places import Decoding
    from cqlsh_ext.query.answer import Answer
    from cqlsh_ext.query.evaluate import Evaluator
    from cqlsh_ext.query.grammar import Schema, parse

    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    from fuzzing.native_diff import same
    from fuzzing.page_diff import shown

    def doc(status: str, n: int) -> bytes:
        return f'{{"status": "{status}", "n": {n}, "items": [1, 2]}}'.encode()

    blobs = [gzip.compress(doc("NEW", 3), mtime=0), bz2.compress(doc("NEW", 5)), None, b"",
             lzma.compress(doc("PAID", 7)), b"plain bytes", gzip.compress(doc("PAID", 2), mtime=0),
             doc("NEW", 11)]
    notes = ["caf\u00e9", None, "", "n", None, "t", "", "z"]
    cells: list[bytes | None] = []
    for k, (blob, note) in enumerate(zip(blobs, notes, strict=True)):
        cells += [k.to_bytes(4, "big"), None if note is None else note.encode(), blob]
    types = [Int32Type, UTF8Type, BytesType]
    names = ["k", "note", "data"]
    plan = parse(statement, Schema({"k": "int", "note": "text", "data": "blob"}, ["k"]))
    assert plan is not None
    page = ServerRows(_body(cells), len(blobs), types, 5)
    driver_rows = list(ServerRows(page.body, page.row_count, types, 5))
    results = []
    for rows in (page, driver_rows):
        evaluator, answer = Evaluator(plan, Decoding()), Answer(plan)
        got = answer.add_page(evaluator, names, rows) + answer.final()
        assert evaluator.on_core
        c = answer.counts
        results.append(([tuple(shown(v) if hasattr(v, "layers") else v for v in row) for row in got],
                        (c.read, c.matched, c.undecodable, c.cut, dict(c.kinds))))
    assert same(results[0][0], results[1][0]), results
    assert results[0][1] == results[1][1]
    assert results[0][0] and results[0][1][0] == len(blobs)
    assert page._rows is None and len(page._made) < len(blobs)  # the rows dropped were never made


def test_the_cells_of_some_rows_are_those_rows_cells(native_core: None,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """ServerRows.cells(wanted, rows): the named rows' cells in their order, by the core and by the
    Python reader alike; a row past the page refused in one line by both."""
    from cassandra.cqltypes import BytesType, Int32Type

    cells: list[bytes | None] = []
    for k in range(5):
        cells += [k.to_bytes(4, "big"), None if k == 1 else b"" if k == 2 else bytes([k]) * k]
    page = ServerRows(_body(cells), 5, [Int32Type, BytesType], 5)
    whole = page.cells([1, 0])
    want = [[column[row] for row in (3, 1, 2)] for column in whole]
    assert page.cells([1, 0], [3, 1, 2]) == want
    with pytest.raises(MalformedPage, match=r"^a malformed page of rows: row 5 asked of a page of 5 rows"):
        page.cells([0], [5])
    page.make([4, 2])
    assert page._made == {4: (4, b"\x04" * 4), 2: (2, b"")} and page._rows is None
    monkeypatch.setattr(native, "available", lambda: False)  # the Python reader
    assert page.cells([1, 0], [3, 1, 2]) == want
    with pytest.raises(MalformedPage, match=r"^a malformed page of rows: row 5 asked of a page of 5 rows"):
        page.cells([0], [5])


def _same(a: list[Any], b: list[Any]) -> bool:
    """Equal values of the same types (True == 1 and 0.0 == -0.0 are not enough)."""
    return [(type(v), repr(v)) for v in a] == [(type(v), repr(v)) for v in b]


def test_columns_the_core_lays_out_equal_the_drivers_parser(every_type: Any) -> None:
    """columns_of over a server page (the ordinary columns a query or an export names): the
    columns the core lays out from the cells (int, bigint, double, boolean, text, ascii) equal,
    type for type, the driver's rows, with nulls and empty values (an empty number left to the
    driver's parser, which makes it None); every other type still by the driver."""
    from cqlsh_ext.payload.server_rows import columns_of

    session, table = every_type
    driver = _pages(session, table, pages_in=False)
    ours = _pages(session, table, pages_in=True)
    laid: set[str] = set()
    for (names, rows), (_names, page) in zip(driver, ours, strict=True):
        every = list(range(len(names)))
        some = list(range(len(rows)))[::-2]  # some rows, asked out of order
        for kept in (None, some):
            got = columns_of(page, every, kept)
            for i, name in enumerate(names):
                want = [row[i] for row in rows] if kept is None else [rows[k][i] for k in kept]
                assert _same(got[i], want), name
            laid.update(names[i] for i in page.laid_out(every, kept))
    # Every type the core reads was laid out by it on some page; of the row of empty values, the
    # bigint, boolean and double were not (the driver's parser makes them None).
    assert laid == {"k", "bi", "db", "bo", "tx", "asci"}
    (names, page, row), = [(names, page, k) for (names, rows), (_n, page) in zip(driver, ours, strict=True)
                           for k, r in enumerate(rows) if r[0] == ROWS]
    assert {names[i] for i in page.laid_out(list(range(page.columns)), [row])} == {"k", "tx", "asci"}


def test_a_cell_the_core_would_read_otherwise_is_left_to_the_driver(native_core: None) -> None:
    """A width that is not the type's, text that is not UTF-8, ascii that is not ASCII: that
    column is the driver's (not in laid_out's answer); the others are read; a malformed page or
    a row past it is refused in one line."""
    from cassandra import cqltypes

    types = [cqltypes.Int32Type, cqltypes.LongType, cqltypes.UTF8Type, cqltypes.AsciiType,
             cqltypes.BooleanType, cqltypes.DoubleType]
    good = [b"\x00\x00\x00\x07", b"\xff" * 8, "é".encode(), b"abc", b"\x02", b"\x3f\xf0" + b"\x00" * 6]
    page = ServerRows(_body(good + [None] * 6), 2, types, 5)
    assert page.laid_out(range(6)) == {0: [7, None], 1: [-1, None], 2: ["é", None], 3: ["abc", None],
                                       4: [True, None], 5: [1.0, None]}
    bad = [b"\x00\x07", b"\x00" * 9, b"\xed\xa0\x80", "é".encode(), b"", b"\x00" * 4]
    assert ServerRows(_body(good + bad), 2, types, 5).laid_out(range(6)) == {}
    assert ServerRows(_body(good + bad), 2, types, 5).laid_out(range(6), [0]) == {
        0: [7], 1: [-1], 2: ["é"], 3: ["abc"], 4: [True], 5: [1.0]}
    with pytest.raises(MalformedPage, match=r"^a malformed page of rows: row 2 asked of a page of 2 rows$"):
        page.laid_out([0], [2])
    with pytest.raises(MalformedPage, match=r"^a malformed page of rows: .* bytes after the last of 1 rows$"):
        ServerRows(_body(good + [None] * 6), 1, types, 5).laid_out([0])


def test_runs_of_equal_texts_are_read_as_each_cell_says(native_core: None) -> None:
    """A text column's runs of equal cells (a partition key over its rows), broken by another
    value, a null or an empty text, read cell for cell as the driver reads them, of every row and
    of some rows; an ascii column's too. (The core makes one str for a run.)"""
    from cassandra import cqltypes

    texts = ["p0", "p0", None, "p0", "p1", "p0", "", "", "p1", "é", "é"]
    types = [cqltypes.UTF8Type, cqltypes.AsciiType]
    cells = [cell for text in texts
             for cell in ((None, None) if text is None else (text.encode(), text.encode("ascii", "replace")))]
    page = ServerRows(_body(cells), len(texts), types, 5)
    driver = [(None, None) if t is None else (t, t.encode("ascii", "replace").decode()) for t in texts]
    assert page.laid_out([0]) == {0: [t for t, _ in driver]}
    assert page.laid_out([1]) == {1: [a for _, a in driver]}
    some = [10, 0, 1, 4, 3, 9]
    assert page.laid_out([0, 1], some) == {0: [driver[k][0] for k in some], 1: [driver[k][1] for k in some]}
