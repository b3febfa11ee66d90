"""Payload queries through the real binary on the real server, every answer compared with the
truth computed from the generator's documents (tools/orders.py), in every output format."""

from __future__ import annotations

import csv
import io
import json
import math
import os
from fractions import Fraction
from typing import Any

import pytest
from orders import MISSING, take
from shell_runner import STOCK_CQLSH, run, said_text, without_patch_warning

from cqlsh_ext.scanning.plan import STREAMS
from tests.query.test_evaluate import TRUTH

from .conftest import Orders, shell

#: Conditions checked on the whole table and on one partition (the rest of TRUTH runs in tests/query).
CONDITIONS = [
    "data.status = 'FAILED'",
    "data.status != 'FAILED'",
    "data.status IN ('NEW', 'PAID')",
    "data.status IS NULL",
    "data.status LIKE 'F%'",
    "data.n > 50",
    "data.n = 300000000000000000000",
    "data.customer.tier = 'gold'",
    "data.items[1].sku = 'S1'",
    "data.tags CONTAINS 'b'",
    "data.\"order-id\" >= 'ORD-2024000100'",
    "data LIKE '%ORD-20240000_7%'",
    "data.status = 7",
]


def json_lines(text: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in text.splitlines() if line.startswith("{")]


def csv_results(text: str, header: str) -> list[list[list[str]]]:
    """Result sets of CSV output (each starts with its header row)."""
    results: list[list[list[str]]] = []
    for row in csv.reader(io.StringIO(text)):
        if row == [header]:
            results.append([])
        elif results:
            results[-1].append(row)
    return results


def matching(orders: Orders, condition: str, partition: str | None = None) -> list[int]:
    return sorted(row["ck"] for row, doc in orders.rows
                  if doc is not None and TRUTH[condition](doc) and partition in (None, row["pk"]))


def value(doc: dict[str, Any] | None, *steps: Any) -> Any:
    found = MISSING if doc is None else take(doc, steps)
    return None if found is MISSING else found


def test_projection_reads_like_the_plain_select(cassandra, orders, home):
    statement = (f"SELECT ck, data.status, data.customer.name, data.items[0].sku, data.customer "
                 f"FROM {orders.name} WHERE pk = 'p1'")
    out = shell(cassandra, home, statement, "--output-format", "json")
    assert out.returncode == 0, out.stderr
    expected = [{"ck": row["ck"], "data.status": value(doc, "status"),
                 "data.customer.name": value(doc, "customer", "name"),
                 "data.items[0].sku": value(doc, "items", 0, "sku"), "data.customer": value(doc, "customer")}
                for row, doc in sorted(orders.rows, key=lambda r: r[0]["ck"]) if row["pk"] == "p1"]
    assert json_lines(out.stdout) == expected
    undecodable = sum(1 for row, doc in orders.rows if row["pk"] == "p1" and doc is None)
    assert f"{undecodable} undecodable" in out.stderr  # never silently dropped: said on stderr


def test_filters_on_the_whole_table_and_on_one_partition(cassandra, orders, home):
    statements = []
    for condition in CONDITIONS:
        statements.append(f"SELECT ck FROM {orders.name} WHERE {condition} ALLOW FILTERING;")
        statements.append(f"SELECT ck FROM {orders.name} WHERE pk = 'p3' AND {condition};")
    out = shell(cassandra, home, "", "--output-format", "csv", stdin="\n".join(statements) + "\n")
    assert out.returncode == 0, out.stderr
    results = csv_results(out.stdout, "ck")
    assert len(results) == len(statements), out.stderr
    for i, condition in enumerate(CONDITIONS):
        whole, one = results[2 * i], results[2 * i + 1]
        assert sorted(int(r[0]) for r in whole) == matching(orders, condition), condition
        assert sorted(int(r[0]) for r in one) == matching(orders, condition, "p3"), condition


#: The GROUP BY key of the undecodable values' group, as JSON Lines spell it.
UNDECODABLE_KEY = '{"$undecodable": true}'


def test_the_undecodable_rows_are_listed_exactly(cassandra, orders, home, tmp_path):
    undecodable = sorted(row["ck"] for row, doc in orders.rows if doc is None)  # the random bytes
    decodable = sorted(row["ck"] for row, doc in orders.rows if doc is not None)
    in_p2 = sorted(row["ck"] for row, doc in orders.rows if doc is None and row["pk"] == "p2")
    exported = tmp_path / "undecodable.jsonl"
    statements = [f"SELECT ck FROM {orders.name} WHERE data IS UNDECODABLE ALLOW FILTERING;",
                  f"SELECT ck FROM {orders.name} WHERE data IS NOT UNDECODABLE ALLOW FILTERING;",
                  f"SELECT ck FROM {orders.name} WHERE pk = 'p2' AND data IS UNDECODABLE;",
                  f"COPY (SELECT ck FROM {orders.name} WHERE data IS UNDECODABLE ALLOW FILTERING) "
                  f"TO '{exported}';"]
    out = shell(cassandra, home, "", "--output-format", "csv", stdin="\n".join(statements) + "\n")
    assert out.returncode == 0, out.stderr
    results = csv_results(out.stdout, "ck")
    listed = [sorted(int(r[0]) for r in result if r[0].isdigit()) for result in results]
    assert listed == [undecodable, decodable, in_p2]
    assert sorted(json.loads(line)["ck"] for line in exported.read_text().splitlines()) == undecodable
    # Counted under that name in the closing lines, the query's and the export's.
    # The generator's random bytes have no known format: the breakdown says so.
    said = (f"{len(orders.rows):,} rows read, {len(undecodable):,} matched, {len(undecodable):,} undecodable "
            f"({len(undecodable):,} no known format)")
    assert said in out.stderr
    assert f"{len(undecodable):,} rows written to {exported} (JSON Lines); {said}" in out.stdout


def _truth_groups(orders: Orders) -> dict[Any, dict[str, Any]]:
    groups: dict[Any, list[Any]] = {}
    for _row, doc in orders.rows:
        # The generator's random bytes are undecodable: a group of their own, not null's.
        key = UNDECODABLE_KEY if doc is None else value(doc, "status")
        groups.setdefault(key, []).append(value(doc, "n"))
    out = {}
    for key, ns in groups.items():
        numbers = [n for n in ns if n is not None]
        if not numbers:
            out[key] = {"count": len(ns), "min(data.n)": None, "max(data.n)": None, "sum(data.n)": None,
                        "avg(data.n)": None}
            continue
        total = sum(Fraction(n) for n in numbers)
        floats = any(isinstance(n, float) for n in numbers)
        out[key] = {"count": len(ns), "min(data.n)": min(numbers), "max(data.n)": max(numbers),
                    "sum(data.n)": float(total) if floats else int(total),
                    "avg(data.n)": float(total / len(numbers))}
    return out


def test_a_payload_query_s_count_is_named_as_the_server_names_a_plain_count(cassandra, orders, home):
    # One name, `count`, for count(*), whoever counts: the server (a plain SELECT) or the shell (a
    # payload condition), in the table's header and in JSON Lines alike.
    plain = f"SELECT count(*) FROM {orders.name}"
    payload = f"SELECT count(*) FROM {orders.name} WHERE data.n >= 0 ALLOW FILTERING"
    headers = []
    for statement in (plain, payload):
        table = shell(cassandra, home, statement)
        assert table.returncode == 0, table.stderr
        headers.append(table.stdout.strip().splitlines()[0].strip())
        lines = shell(cassandra, home, statement, "--output-format", "json")
        assert list(json_lines(lines.stdout)[0]) == ["count"], lines.stdout
    assert headers == ["count", "count"]


@pytest.mark.parametrize("workers", ["1", "2"])
def test_group_by_aggregates_exactly(cassandra, orders, home, workers):
    statement = (f"SELECT data.status, count(*), min(data.n), max(data.n), sum(data.n), avg(data.n) "
                 f"FROM {orders.name} GROUP BY data.status ALLOW FILTERING")
    out = shell(cassandra, home, statement, "--output-format", "json",
                env={"CQLSH_EXT_SCAN_WORKERS": workers})
    assert out.returncode == 0, out.stderr
    def key(status: Any) -> Any:
        return json.dumps(status) if isinstance(status, dict) else status

    got = {key(row.pop("data.status")): row for row in json_lines(out.stdout)}
    assert got == _truth_groups(orders)
    undecodable = sum(doc is None for _row, doc in orders.rows)
    assert f"{len(orders.rows):,} rows read" in out.stderr and f"{undecodable:,} undecodable" in out.stderr
    assert ("2 worker processes" in out.stderr) == (workers == "2")
    # How the table was read, in the user's words (a token range is the server's).
    assert (f"{STREAMS} parallel streams" in out.stderr) == (workers == "1") and "token" not in out.stderr


def cqlsh_digits(value: float, precision: int) -> str:
    """A float as cqlsh shows a float column's: `precision` digits after the point between 1e-4 and
    10**precision (more integer digits make %g's significant digits), trailing zeros dropped."""
    exponent = int(math.log10(abs(value)))
    return f"{value:.{precision + exponent + 1 if -4 <= exponent < precision else precision}g}"


def test_numbers_the_shell_computes_follow_float_precision(cassandra, orders, home):
    totals = [519.25, 100.125, 939.5452097902098, 12.0, 0.1]
    session = cassandra.session(orders.ks)
    session.execute("CREATE TABLE IF NOT EXISTS totals (pk text, ck int, data blob, PRIMARY KEY (pk, ck))")
    for ck, total in enumerate(totals):
        session.execute("INSERT INTO totals (pk, ck, data) VALUES ('p', %s, %s)",
                        (ck, json.dumps({"total": total}).encode()))
    session.shutdown()
    statement = (f"SELECT avg(data.total), sum(data.total), max(data.total), count(*) "
                 f"FROM {orders.ks}.totals WHERE pk = 'p'")
    average = float(sum(Fraction(t) for t in totals) / len(totals))
    total = float(sum(Fraction(t) for t in totals))
    assert len(repr(average)) > 12  # digits to round away

    def cells(*flags: str) -> list[str]:
        out = shell(cassandra, home, statement, *flags)
        assert out.returncode == 0, out.stderr
        row = out.stdout.split("\n")[3]  # after the header and its rule
        return [cell.strip() for cell in row.split("|")]

    # cqlsh's float_precision (5 by default); a value read from a payload keeps its digits.
    assert cells() == [cqlsh_digits(average, 5), cqlsh_digits(total, 5), repr(max(totals)), str(len(totals))]
    (home / ".cassandra").mkdir(exist_ok=True)
    (home / ".cassandra" / "cqlshrc").write_text("[ui]\nfloat_precision = 2\n")
    assert cells()[:3] == [cqlsh_digits(average, 2), cqlsh_digits(total, 2), repr(max(totals))]
    # JSON Lines and CSV keep every digit: they are read by programs.
    out = shell(cassandra, home, statement, "--output-format", "json")
    assert json_lines(out.stdout) == [{"avg(data.total)": average, "sum(data.total)": total,
                                       "max(data.total)": max(totals), "count": len(totals)}]


@pytest.mark.parametrize("workers", ["1", "2"])
def test_a_path_no_value_has_is_named_with_the_nearest_keys(cassandra, orders, home, workers):
    # A typo is otherwise silent: a column of nulls, a null group, no row matched.
    env = {"CQLSH_EXT_SCAN_WORKERS": workers}
    out = shell(cassandra, home, f"SELECT data.stauts, count(*) FROM {orders.name} GROUP BY data.stauts "
                "ALLOW FILTERING", "--output-format", "json", env=env)
    assert out.returncode == 0, out.stderr
    undecodable = sum(1 for _row, doc in orders.rows if doc is None)  # a group of their own
    assert json_lines(out.stdout) == [{"data.stauts": None, "count": len(orders.rows) - undecodable},
                                      {"data.stauts": {"$undecodable": True}, "count": undecodable}]
    # (--output-format json: the closing line is a note's message, after the path's warning)
    closing = said_text(out.stderr)[-1]
    assert closing.endswith("; no value read has data.stauts (nearest keys seen there: status)"), closing
    assert ("2 worker processes" in out.stderr) == (workers == "2")  # parts merged from the workers
    out = shell(cassandra, home, f"SELECT ck FROM {orders.name} WHERE data.stauts = 'PAID' ALLOW FILTERING",
                env=env)
    assert "(0 rows)" in out.stdout
    assert "no value read has data.stauts (nearest keys seen there: status)" in out.stderr
    # Paths only projected, in one partition: the quoted key spelt as a path writes it.
    out = shell(cassandra, home, f"SELECT ck, data.customer.nmae, data.order_id, data.customer.name "
                f"FROM {orders.name} WHERE pk = 'p1'")
    said = [line for line in out.stderr.splitlines() if line.startswith("payload query: ")]
    assert len(said) == 1 and said[0].endswith(
        '; no value read has data.customer.nmae (nearest keys seen there: name)'
        '; no value read has data.order_id (nearest keys seen there: "order-id")'), out.stderr
    # A path some values have (status is absent from a fifth of the documents): nothing to say.
    out = shell(cassandra, home, f"SELECT data.status, count(*) FROM {orders.name} GROUP BY data.status "
                "ALLOW FILTERING", env=env)
    assert "payload query: " in out.stderr and "no value read has" not in out.stderr


def test_streamed_rows_over_worker_processes_and_limit(cassandra, orders, home):
    condition = "data.status IN ('NEW', 'PAID')"
    env = {"CQLSH_EXT_SCAN_WORKERS": "2"}
    out = shell(cassandra, home, f"SELECT ck FROM {orders.name} WHERE {condition} ALLOW FILTERING",
                "--output-format", "json", env=env)
    assert out.returncode == 0, out.stderr
    assert sorted(r["ck"] for r in json_lines(out.stdout)) == matching(orders, condition)
    out = shell(cassandra, home, f"SELECT ck FROM {orders.name} WHERE {condition} LIMIT 7 ALLOW FILTERING",
                "--output-format", "json", env=env)
    got = [r["ck"] for r in json_lines(out.stdout)]
    assert len(got) == 7 and set(got) <= set(matching(orders, condition))


def test_every_output_format_gives_the_same_answer(cassandra, orders, home):
    statement = (f"SELECT ck, data.status, data.n FROM {orders.name} WHERE pk = 'p2' AND data.n > 300 "
                 f"ORDER BY data.n DESC LIMIT 5")
    expected = sorted(((row["ck"], value(doc, "status"), doc["n"]) for row, doc in orders.rows
                       if doc is not None and row["pk"] == "p2" and doc["n"] > 300), key=lambda t: -t[2])[:5]
    as_json = shell(cassandra, home, statement, "--output-format", "json")
    assert [(r["ck"], r["data.status"], r["data.n"]) for r in json_lines(as_json.stdout)] == expected
    as_csv = shell(cassandra, home, statement, "--output-format", "csv")
    header, *rows = list(csv.reader(io.StringIO(as_csv.stdout)))
    assert header == ["ck", "data.status", "data.n"]
    assert [(int(c), s or None, n) for c, s, n in rows] == [(c, s, str(n)) for c, s, n in expected]
    table = shell(cassandra, home, statement)
    lines = [line.split("|") for line in table.stdout.splitlines() if "|" in line][1:]
    assert [(int(c), s.strip(), n.strip()) for c, s, n in lines] == \
        [(c, "null" if s is None else str(s), str(n)) for c, s, n in expected]
    assert "(5 rows)" in table.stdout


def test_one_line_errors_and_nothing_read(cassandra, orders, home):
    bad = {
        f"SELECT ck.x, data.status FROM {orders.name} WHERE pk = 'p1';": "ck",
        f"SELECT data.status FROM {orders.name} WHERE data.status = 'X';":
            "keeps the matching ones in the shell, which can take long on a big table: add ALLOW FILTERING",
        f"SELECT median(data.n) FROM {orders.name} ALLOW FILTERING;": "unknown function median",
        f"SELECT ck, count(data.n) FROM {orders.name} GROUP BY ck ALLOW FILTERING;": "GROUP BY",
        f"SELECT data.status FROM {orders.name} WHERE data.status = 'X' OR data.n = 1 ALLOW FILTERING;": "OR",
        f"COPY {orders.name} (pk, data.status) TO '{home}/out.csv';": "COPY",
    }
    out = shell(cassandra, home, "", stdin="\n".join(bad) + "\n")
    errors = [line for line in out.stderr.splitlines() if "payload query" in line or "COPY" in line]
    assert len(errors) == len(bad), out.stderr
    for line, expected in zip(errors, bad.values(), strict=True):
        assert expected.lower() in line.lower(), (line, expected)
    assert "Traceback" not in out.stderr and not (home / "out.csv").exists()


def test_decoding_off_refuses_paths_and_leaves_other_statements_stock(cassandra, orders, home):
    out = shell(cassandra, home, f"SELECT data.status FROM {orders.name} WHERE pk = 'p1'", "-d", "none")
    assert out.returncode != 0 and "decoding is off" in out.stderr and not out.stdout.strip()
    for statement in (f"SELECT pk, ck, data FROM {orders.name} WHERE pk = 'p4' LIMIT 3",
                      f"SELECT token(pk), writetime(data) FROM {orders.name} LIMIT 2",
                      f"SELECT JSON pk, ck FROM {orders.name} WHERE pk = 'p0' LIMIT 2"):
        ours = shell(cassandra, home, statement, "-d", "none")
        stock = run(STOCK_CQLSH, [*cassandra.cqlsh_args, "-e", statement], home)
        assert ours.returncode == stock.returncode == 0
        assert ours.stdout == without_patch_warning(stock.stdout), statement


def test_maps_udts_and_column_settings(cassandra, home):
    import zlib

    import msgpack
    import zstandard

    ks = cassandra.create_keyspace("pqm")
    session = cassandra.session(ks)
    session.execute("CREATE TYPE wrap (payload blob, n int)")
    session.execute("CREATE TABLE t (id int PRIMARY KEY, m map<text, blob>, u frozen<wrap>, raw blob)")
    insert = session.prepare("INSERT INTO t (id, m, u, raw) VALUES (?, ?, ?, ?)")
    for i in range(6):
        deflated = zlib.compressobj(6, zlib.DEFLATED, -15)  # raw deflate: found only when named
        raw = deflated.compress(json.dumps({"kind": f"K{i % 2}"}).encode()) + deflated.flush()
        session.execute(insert, (i, {"doc": zstandard.compress(msgpack.packb({"status": f"S{i}"}))},
                                 (json.dumps({"tier": "gold" if i % 3 == 0 else "silver"}).encode(), i), raw))
    session.shutdown()
    out = shell(cassandra, home, f"SELECT id, m['doc'].status, u.payload.tier, raw.kind FROM {ks}.t "
                "WHERE u.payload.tier = 'gold' ALLOW FILTERING", "--output-format", "json",
                "--decode", f"{ks}.t.raw=deflate")
    assert out.returncode == 0, out.stderr
    got = sorted((r["id"], r["m['doc'].status"], r["u.payload.tier"], r["raw.kind"])
                 for r in json_lines(out.stdout))
    assert got == [(0, "S0", "gold", "K0"), (3, "S3", "gold", "K1")]


def test_pages_in_gives_the_answer_the_drivers_rows_give(cassandra, pages_table, home):
    """A filter (its rows shown with their text, list and blob), GROUP BY, the undecodable rows and
    a partition's read (reading.statement.ServerPages: its rows with their blob, and paths only),
    read with pages in (the core reads the server's pages) and with the driver's rows
    (CQLSH_EXT_PAGES_IN=0), over blobs the core reads, hands back (bzip2, xz), null and empty,
    texts and lists null and empty: the same JSON rows."""
    t = pages_table
    statements = [f"SELECT pk, ck, note, tags, data, data.n FROM {t} WHERE data.status = 'NEW' "
                  "ALLOW FILTERING",
                  f"SELECT data.status, count(*), sum(data.n), max(data.n) FROM {t} GROUP BY data.status "
                  "ALLOW FILTERING",
                  f"SELECT pk, ck, note FROM {t} WHERE data IS UNDECODABLE ALLOW FILTERING",
                  f"SELECT pk, ck, note, tags, data, data.status, data.n FROM {t} WHERE pk = 1",
                  f"SELECT ck, tags, data.n FROM {t} WHERE pk IN (2, 3)"]
    for statement in statements:
        ours, drivers = (shell(cassandra, home, statement, "--output-format", "json",
                               env={"CQLSH_EXT_PAGES_IN": flag}) for flag in ("1", "0"))
        assert ours.returncode == drivers.returncode == 0, ours.stderr + drivers.stderr
        got = sorted(json_lines(ours.stdout), key=json.dumps)
        assert got == sorted(json_lines(drivers.stdout), key=json.dumps), statement
        assert got, statement


def test_a_partitions_read_takes_the_servers_pages(cassandra, pages_table, tmp_path, monkeypatch):
    """A payload SELECT naming its partition (the server's pages as they come, one answer row a
    row: reading.statement.ServerPages) on the native core is handed the pages as the server sent
    them (scanning.pages_in: a ServerRows a page, counted here as the driver's handler makes
    them), and gives what the driver's rows give (CQLSH_EXT_PAGES_IN=0, or no core: none made)."""
    import cqlsh_ext
    from cqlsh_ext.payload import native
    from cqlsh_ext.payload.server_rows import ServerRows
    from cqlsh_ext.scanning import pages_in

    core = native.available()  # without it (CQLSH_EXT_NATIVE=0: bin/test's second pass) no page is taken in
    if not core and os.environ.get("CI") == "true" and os.environ.get(native.ENV) != "0":
        pytest.fail(f"the native core does not run under CI=true: {native.refusal()}")
    made: list[int] = []

    class Counted(ServerRows):
        def __init__(self, *args: Any) -> None:
            super().__init__(*args)
            made.append(len(self))

    monkeypatch.setattr(pages_in, "ServerRows", Counted)
    rc = tmp_path / "cqlshrc"
    rc.write_text("")
    statement = f"SELECT pk, ck, note, tags, data, data.n FROM {pages_table} WHERE pk IN (0, 1)"
    answers = []
    for flag in ("1", "0"):
        monkeypatch.setenv("CQLSH_EXT_PAGES_IN", flag)
        made.clear()
        with cqlsh_ext.connect(cassandra.host, cassandra.port, username=cassandra.username,
                               password=cassandra.password, cqlshrc=str(rc)) as db:
            answers.append(list(db.query(statement).records(details=True)))
        assert sum(made) == (20 if flag == "1" and core else 0), flag
    assert answers[0] == answers[1] and len(answers[0]) == 20


def test_json_past_the_value_s_budget_counts_as_cut_never_as_a_document_without_the_path(cassandra, home):
    """A valid JSON document nested 1,000 levels deep and one of more values than the budget's
    nodes: a path read in them is cut by the budget (null, counted, matching no condition), never
    the null of a document that lacks the path; the value itself is shown as stored."""
    import pyarrow.parquet as pq
    import zstandard

    ks = cassandra.create_keyspace("pqdeep")
    session = cassandra.session(ks)
    session.execute("CREATE TABLE t (k text PRIMARY KEY, v blob)")
    texts = {"deep": '{"a":' * 1000 + "1" + "}" * 1000,
             "many": '{"a": 3, "l": [' + ",".join(["1"] * 150_000) + "]}",
             "normal": '{"a": 2}', "other": '{"b": 2}'}
    for k, text in texts.items():
        session.execute(f"INSERT INTO {ks}.t (k, v) VALUES (%s, %s)", (k, zstandard.compress(text.encode())))
    session.shutdown()
    statements = (f"SELECT k, v.a FROM {ks}.t;\n"
                  f"SELECT k, v.a FROM {ks}.t WHERE v.a IS NOT NULL ALLOW FILTERING;\n"
                  f"SELECT k, v FROM {ks}.t WHERE k = 'deep';\n"
                  f"COPY (SELECT k, v FROM {ks}.t WHERE k = 'deep') TO '{home / 'deep.parquet'}';\n")
    out = shell(cassandra, home, "", "--output-format", "json", stdin=statements)
    assert out.returncode == 0, out.stderr
    rows = json_lines(out.stdout)
    assert sorted((r["k"], r["v.a"]) for r in rows[:4]) == [
        ("deep", None), ("many", None), ("normal", 2), ("other", None)]
    # the filter: only the document read (the cut ones are counted, not dropped in silence)
    assert rows[4:6] == [{"k": "normal", "v.a": 2}, {"k": "deep", "v": rows[5]["v"]}]
    assert rows[5]["v"]["payload"] == texts["deep"] and rows[5]["v"]["kind"] == "text"  # shown as stored
    said = "not read as JSON: nested deeper than 512 levels, past the value's budget"
    assert rows[5]["v"]["note"] == said
    (exported,) = pq.read_table(home / "deep.parquet").to_pylist()  # Parquet's NAME:note says it too
    assert exported["v"] == texts["deep"] and exported["v:note"] == said
    notes = [json.loads(line)["message"] for line in out.stderr.splitlines() if "payload query:" in line]
    assert notes[0] == "payload query: 4 rows read, 4 matched, 2 cut by the budget"
    assert notes[1].startswith("payload query: 4 rows read, 1 matched, 2 cut by the budget"), notes
