"""DESCRIBE PAYLOAD through the real binary on the real server, every figure compared with the
truth computed from the generator (conftest.py): exact with ALL, inside its interval with SAMPLE;
the same report from worker processes; WHERE as a payload query's; hostile values within bounds;
the one-line refusals; DESCRIBE itself untouched."""

from __future__ import annotations

import json
import re
from collections import Counter
from typing import Any

import pytest
from shell_runner import STOCK_CQLSH, run, without_e_place, without_patch_warning

from .conftest import REPORTED, ROWS, Docs, document, encoding, extra, report, shell, truth


def by_path(place: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {p["path"]: p for p in place["paths"]}


def place(doc: dict[str, Any], name: str) -> dict[str, Any]:
    return next(p for p in doc["places"] if p["place"] == name)


def encodings(place_doc: dict[str, Any]) -> dict[tuple[str, str, bool], int]:
    return {(e["kind"], e["label"], e["cut"]): e["count"] for e in place_doc["encodings"]}


def assert_paths_match(got: dict[str, dict[str, Any]], expected: dict[str, Any], structured: int) -> None:
    """Every path the truth has, with its presence, occurrences, types and values; no other."""
    assert set(got) == set(expected)
    for path, want in expected.items():
        have = got[path]
        assert have["present"]["count"] == want.present, path
        assert have["present"]["share"] == pytest.approx(want.present / structured, abs=1e-6), path
        assert have["occurrences"] == want.seen, path
        assert {t: s["count"] for t, s in have["types"].items()} == dict(want.types), path
        for type_name, share in have["types"].items():
            want_share = want.types[type_name] / want.seen
            assert share["share"] == pytest.approx(want_share, abs=1e-6), (path, type_name)
        values = Counter({k: n for k, n in want.values.items() if k[0] != "null"})
        distinct = len(values)
        if values:
            assert have["distinct_exact"] == (distinct + (("null", None) in want.values) <= 64), path
            if have["distinct_exact"]:
                assert have["distinct"] == distinct, path
                got_values = Counter({(_type(v["value"]), v["value"]): v["count"] for v in have["values"]})
                assert got_values == want.values, path
            else:
                assert abs(have["distinct"] - distinct) <= 0.05 * distinct, path
                assert have["distinct"] <= want.seen, path  # an estimate never past the values counted
        numbers = [v for (t, v) in values if t in ("integer", "float")]
        if numbers:
            assert (have["numbers"]["min"], have["numbers"]["max"]) == (min(numbers), max(numbers)), path
        strings = [v for (t, v) in values for _ in range(values[(t, v)]) if t == "string"]
        if strings:
            lengths = [len(s) for s in strings]
            assert have["string_length"] == {"min": min(lengths), "max": max(lengths),
                                             "mean": round(sum(lengths) / len(lengths), 3)}, path


def _type(value: Any) -> str:
    from .conftest import type_name

    return type_name(value)


def expected_encodings(rows: range | list[int]) -> Counter[tuple[str, str, bool]]:
    return Counter(REPORTED[how] for i in rows if (how := encoding(i)) is not None)


def test_every_row_every_figure_exact(cassandra, home, docs: Docs):
    got = report(cassandra, home, f"DESCRIBE PAYLOAD {docs.name}.data ALL")
    assert got["reading"]["mode"] == "all" and got["rows_read"] == ROWS
    assert got["rows_without_value"] == sum(encoding(i) is None for i in range(ROWS))
    data = place(got, "data")
    want = expected_encodings(range(ROWS))
    assert data["values"] == sum(want.values())
    assert encodings(data) == dict(want)
    for e in data["encodings"]:
        assert e["share"] == pytest.approx(e["count"] / data["values"], abs=1e-6) and "interval" not in e
    assert data["reasons"] == {"gzip: truncated stream": want[REPORTED["failed"]],
                               "cut at the output cap (--max-output-size)": want[REPORTED["cut"]]}
    described = Docs.described()
    assert data["structured_values"] == len(described)
    assert_paths_match(by_path(data), truth(described), len(described))
    folded = by_path(data)["data.byDay.*"]
    date_keys = Counter(k for d in described for k in d["byDay"])
    assert folded["keys"] == {"kinds": {"dates": sum(date_keys.values())}, "distinct": len(date_keys),
                              "distinct_exact": True}
    assert "hint" in data and f"DECODE '{docs.name}.data' AS " in data["hint"]
    # The map of blobs: a place per key, the date keys folded into one.
    got = report(cassandra, home, f"DESCRIBE PAYLOAD {docs.name}.extra ALL")
    assert got["rows_without_value"] == sum(extra(i) is None for i in range(ROWS))
    meta = place(got, "extra['meta']")
    metas = [json.loads(_snappy(extra(i)["meta"])) for i in range(ROWS) if i % 4 == 0]
    assert meta["values"] == len(metas) and encodings(meta) == {("text", "snappy>json", False): len(metas)}
    assert_paths_match(by_path(meta), truth(metas, "extra['meta']"), len(metas))
    dated = place(got, "extra[*]")
    keys = Counter(k for i in range(ROWS) if i % 4 == 1 for k in extra(i))
    assert dated["values"] == sum(keys.values())
    assert dated["map_keys"] == {"kinds": {"dates": sum(keys.values())}, "distinct": len(keys),
                                 "distinct_exact": True}
    assert encodings(dated) == {("text", "zstd>json", False): sum(keys.values())}


def _snappy(value: bytes) -> bytes:
    import snappy

    return snappy.decompress(value)


def test_worker_processes_give_the_same_report(cassandra, home, docs: Docs):
    statement = f"DESCRIBE PAYLOAD {docs.name}.data ALL"
    one = report(cassandra, home, statement, env={"CQLSH_EXT_SCAN_WORKERS": "1"})
    two = report(cassandra, home, statement, env={"CQLSH_EXT_SCAN_WORKERS": "2"})
    assert "2 worker processes" in two["reading"]["scan"]
    for doc in (one, two):
        doc.pop("reading")
    assert one == two


def test_a_sample_s_intervals_hold_the_truth(cassandra, home, docs: Docs):
    """95 % intervals: over several samples, nearly every share's interval holds the table's share."""
    want = expected_encodings(range(ROWS))
    values = sum(want.values())
    described = Docs.described()
    paths = truth(described)
    held = checked = 0
    for seed in (1, 2, 3, 4):
        got = report(cassandra, home, f"DESCRIBE PAYLOAD {docs.name}.data SAMPLE 900 SEED {seed}")
        assert got["reading"]["mode"] == "sample" and got["reading"]["sample"]["seed"] == seed
        assert 900 <= got["rows_read"] < ROWS
        data = place(got, "data")
        shares = [(e, want[(e["kind"], e["label"], e["cut"])] / values) for e in data["encodings"]]
        for path in ("data.customer", "data.customer.tier", "data.note", "data.items[]", "data.matrix[]"):
            shares.append((by_path(data)[path]["present"], paths[path].present / len(described)))
        amount = by_path(data)["data.amount"]["types"]
        shares += [(amount[t], paths["data.amount"].types[t] / paths["data.amount"].seen) for t in amount]
        for share, true in shares:
            low, high = share["interval"]
            assert low <= share["share"] <= high
            checked += 1
            held += low <= true <= high
    assert checked >= 60 and held / checked >= 0.85, (held, checked)


def test_the_same_seed_draws_the_same_sample(cassandra, home, docs: Docs):
    first = report(cassandra, home, f"DESCRIBE PAYLOAD {docs.name}.data SAMPLE 300 SEED 11")
    again = report(cassandra, home, f"DESCRIBE PAYLOAD {docs.name}.data SAMPLE 300 SEED 11")
    for doc in (first, again):
        doc["reading"].pop("seconds")
    assert first == again


def test_where_describes_the_rows_a_payload_query_keeps(cassandra, home, docs: Docs):
    got = report(cassandra, home, f"DESCRIBE PAYLOAD {docs.name}.data WHERE data.status = 'PAID' "
                                  "AND data.customer.tier = 'gold' ALL")
    structured = ("snappy-json", "zstd-msgpack", "json", "lz4-cbor", "gzip-json")
    kept = [i for i in range(ROWS) if encoding(i) in structured
            and document(i)["status"] == "PAID" and document(i).get("customer", {}).get("tier") == "gold"]
    assert got["where"]["rows_matched"] == len(kept) and got["rows_read"] == ROWS
    data = place(got, "data")
    assert encodings(data) == dict(expected_encodings(kept))
    assert_paths_match(by_path(data), truth([document(i) for i in kept]), len(kept))
    # A typo in a path: named, with the key it was nearest to, as a query's closing line does.
    out = shell(cassandra, home, f"DESCRIBE PAYLOAD {docs.name}.data WHERE data.stauts = 'PAID' ALL")
    assert out.returncode == 0, out.stderr
    assert "no value read has data.stauts (nearest keys seen there: status)" in out.stdout
    assert "0 of 3,000 rows matched" in out.stdout


def test_a_where_on_the_partition_key_reads_those_rows(cassandra, home, docs: Docs):
    got = report(cassandra, home, f"DESCRIBE PAYLOAD {docs.name}.data WHERE pk IN (1, 2, 3, 11)")
    assert got["reading"]["mode"] == "named" and got["rows_read"] == 4
    assert encodings(place(got, "data")) == dict(expected_encodings([1, 2, 3, 11]))
    out = shell(cassandra, home, f"DESCRIBE PAYLOAD {docs.name}.data WHERE pk = 1 SAMPLE 5")
    assert "SAMPLE reads random token ranges" in out.stderr and not out.stdout.strip()


def test_the_default_reading_is_said_in_the_first_line(cassandra, home, docs: Docs):
    out = shell(cassandra, home, f"DESCRIBE PAYLOAD {docs.name}.data")
    assert out.returncode == 0, out.stderr
    first = out.stdout.strip().splitlines()[0]
    assert first.startswith(f"DESCRIBE PAYLOAD {docs.name}.data: every row, exact counts (the table is small")
    # Where the size comes from, in plain words (not 'by DISTINCT partition keys after random tokens').
    plain = (r"small: about [\d,.]+ (partitions|[KMG]?i?B), (the server's estimate|estimated from the "
             r"partition keys found after 4 random places in the ring); SAMPLE n reads a sample\)")
    assert re.search(plain, first), first


@pytest.mark.parametrize("statement, message", [
    ("DESCRIBE PAYLOAD {ks}.nope.data", "table {ks}.nope not found"),
    ("DESCRIBE PAYLOAD {ks}.docs.nope", "{ks}.docs has no column nope (its payload columns: data, extra)"),
    ("DESCRIBE PAYLOAD {ks}.docs.pk", "pk is int: DESCRIBE PAYLOAD describes a blob column"),
    ("DESCRIBE PAYLOAD docs.data", "name the column as keyspace.table.column"),
    # A table without its column (was cqlsh's 'Improper DESCRIBE command.'): the form, and the
    # table's own columns when it is known.
    ("DESCRIBE PAYLOAD {ks}.docs", "{ks}.docs names no column: DESCRIBE PAYLOAD {ks}.docs.data describes "
     "one (its payload columns: data, extra); in full: DESCRIBE PAYLOAD [keyspace.]table.column "
     "[WHERE conditions] [SAMPLE n [SEED s]] [ALL [CONFIRM]] [JSON]"),
    ("DESCRIBE PAYLOAD docs;", "docs names no column: DESCRIBE PAYLOAD [keyspace.]table.column"),
    ("DESCRIBE PAYLOAD {ks}.docs.data WHERE data.status == 1", "WHERE:"),
])
def test_refused_in_one_line_before_reading(cassandra, home, docs: Docs, statement, message):
    out = shell(cassandra, home, statement.format(ks=docs.ks))
    assert out.stderr.strip().splitlines()[-1].endswith(message.format(ks=docs.ks)) or \
        message.format(ks=docs.ks) in out.stderr, out.stderr
    assert "DESCRIBE PAYLOAD: " in out.stderr and not out.stdout.strip()
    off = shell(cassandra, home, f"DESCRIBE PAYLOAD {docs.name}.data", "-d", "none")
    assert "decoding is off (-d none)" in off.stderr


def test_describe_itself_is_cqlsh_s(cassandra, home, docs: Docs):
    for statement in (f"DESCRIBE TABLE {docs.name}", f"DESC {docs.name}", "DESC PAYLOAD"):
        ours = shell(cassandra, home, statement)
        stock = run(STOCK_CQLSH, [*cassandra.cqlsh_args, "-e", statement], home)
        assert (ours.stdout, ours.stderr.splitlines()[-1:]) == \
            (without_patch_warning(stock.stdout), without_e_place(stock.stderr).splitlines()[-1:]), statement
    help_text = shell(cassandra, home, "HELP PAYLOAD").stdout
    assert "DESCRIBE PAYLOAD [keyspace.]table.column" in help_text
    queries = shell(cassandra, home, "HELP QUERIES").stdout
    assert "DESCRIBE PAYLOAD ks.t.data lists paths" in queries


def _letters(n: int) -> str:
    """A field name of letters only (no digit: not data), one per number."""
    out = ""
    while True:
        n, rest = divmod(n, 26)
        out += chr(97 + rest)
        if not n:
            return "f" + out


@pytest.fixture(scope="module")
def hostile(cassandra) -> str:
    """Values made to hurt a walk, in table `t`: 10**12 paths in a pickle's shared parts, nesting
    past every bound, a 50 MB bomb, a long string, and one ordinary document; in table `wide`:
    maps of 1,000 keys each, 3,000 paths in all."""
    import pickle

    import zstandard

    shared: Any = {"leaf": 1}
    for _ in range(12):
        shared = [shared] * 10
    deep: Any = 1
    for _ in range(200):
        deep = {"d": deep}
    ks = cassandra.create_keyspace("describehostile")
    session = cassandra.session(ks)
    tables = {
        "t": [pickle.dumps({"a": shared}, protocol=4), json.dumps(deep).encode(),
              zstandard.compress(b"[" + b"0," * 25_000_000 + b"0]"), json.dumps({"s": "y" * 60_000}).encode(),
              json.dumps({"ok": 12345}).encode()],
        "wide": [json.dumps({_letters(k * 1000 + i): i for i in range(1000)}).encode() for k in range(3)],
    }
    for table, values in tables.items():
        session.execute(f"CREATE TABLE {table} (pk int PRIMARY KEY, data blob)")
        insert = session.prepare(f"INSERT INTO {table} (pk, data) VALUES (?, ?)")
        for i, value in enumerate(values):
            session.execute(insert, (i, value))
    session.shutdown()
    return ks


def test_hostile_values_are_described_within_the_bounds(cassandra, home, hostile):
    # The subprocess's timeout (conftest.shell) is the hang guard; what bounds the work is asserted
    # below as the counts the code keeps (values walked in part, too deep, cut at the cap).
    got = report(cassandra, home, f"DESCRIBE PAYLOAD {hostile}.t.data ALL")
    data = place(got, "data")
    assert data["values"] == 5
    assert data["bounds"]["values_walked_in_part"] == 1  # the shared parts: MAX_VISITS nodes
    assert data["bounds"]["values_too_deep"] == 2  # the shared parts' 12 levels of lists, the nesting
    assert encodings(data)[("text", "zstd>text", True)] == 1  # the bomb: cut at the output cap
    paths = by_path(data)
    assert paths["data.ok"]["present"]["count"] == 1
    long = paths["data.s"]
    assert long["string_length"]["max"] == 60_000 and len(json.dumps(long["values"])) < 500


def test_paths_past_the_bound_are_counted(cassandra, home, hostile):
    from cqlsh_ext.describe.structure import MAX_PATHS

    data = place(report(cassandra, home, f"DESCRIBE PAYLOAD {hostile}.wide.data ALL"), "data")
    assert data["bounds"]["paths"] == MAX_PATHS
    # 3,000 keys and the root: every occurrence is either a path's or counted as past the bound.
    assert data["bounds"]["untracked_occurrences"] == 3000 - (MAX_PATHS - 1)
    assert sum(p["occurrences"] for p in data["paths"]) == 3 + MAX_PATHS - 1
    out = shell(cassandra, home, f"DESCRIBE PAYLOAD {hostile}.wide.data ALL")
    assert f"1,001 occurrences past the {MAX_PATHS:,} paths tracked, not described" in out.stdout


@pytest.mark.parametrize("workers", ["1", "2"])
def test_ctrl_c_keeps_what_was_read(cassandra, home, workers):
    """Ctrl-C in the middle of ALL: the report of the rows read, said to be interrupted; its counts
    are those rows' (every one of them read into a place or counted without a value)."""
    import os
    import signal
    import subprocess

    from cassandra.concurrent import execute_concurrent_with_args
    from shell_runner import CQLSH_EXT, isolated_env
    from waiting import wait_until

    from .conftest import CAP, stored

    ks = cassandra.create_keyspace("faults_describe")  # its SELECTs go through the fault plan
    session = cassandra.session(ks)
    session.execute("CREATE TABLE docs (pk int PRIMARY KEY, data blob)")
    insert = session.prepare("INSERT INTO docs (pk, data) VALUES (?, ?)")
    execute_concurrent_with_args(session, insert, [(i, stored(i)) for i in range(ROWS)], concurrency=32)
    session.shutdown()
    cassandra.faults.set("delay", -1, 2000)  # every page two seconds late: the read takes a while
    args = [*cassandra.cqlsh_args, "--max-output-size", str(CAP), "-e",
            f"DESCRIBE PAYLOAD {ks}.docs.data ALL JSON"]
    proc = subprocess.Popen([CQLSH_EXT, *args], env={**isolated_env(home), "CQLSH_EXT_SCAN_WORKERS": workers},
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        # The first pages are in, the last far from it: with at most two pages asked for at once per
        # worker (scanning/workers.py), one more answered means a page came to the shell a delay
        # (two seconds) before; two rounds more, that the workers have had those pages' rows for a
        # delay at least (one round past was not always enough on a loaded machine: 0 rows read).
        wait_until(lambda: cassandra.faults.met().answered >= 4 * int(workers) + 1, "first pages answered",
                   process=proc)
        os.killpg(proc.pid, signal.SIGINT)  # as a terminal's Ctrl-C: the whole process group
        stdout, stderr = proc.communicate(timeout=60)
    finally:
        cassandra.faults.clear()
        if proc.poll() is None:
            proc.kill()
    assert "Traceback" not in stderr
    got = json.loads(stdout)
    assert got["interrupted"] is True
    assert 0 < got["rows_read"] < ROWS, (got["reading"], got.get("error"), stderr[-500:])
    data = place(got, "data")
    assert data["values"] + got["rows_without_value"] == got["rows_read"]
    assert sum(e["count"] for e in data["encodings"]) == data["values"]


def test_blobs_in_a_udt_a_list_and_a_tuple_and_a_text_column_per_place(cassandra, home):
    import snappy
    import zstandard

    ks = cassandra.create_keyspace("describeplaces")
    session = cassandra.session(ks)
    session.execute("CREATE TYPE att (name text, content blob)")
    session.execute("CREATE TABLE t (pk int PRIMARY KEY, u frozen<att>, l list<blob>, p tuple<text, blob>, "
                    "doc text)")
    insert = session.prepare("INSERT INTO t (pk, u, l, p, doc) VALUES (?, ?, ?, ?, ?)")
    for i in range(30):
        content = zstandard.compress(json.dumps({"page": i, "title": f"t{i % 3}"}).encode())
        history = [snappy.compress(json.dumps({"v": v}).encode()) for v in range(i % 4)]
        session.execute(insert, (i, (f"f{i}", content), history or None, ("x", content),
                                 json.dumps({"kind": "note", "n": i}) if i % 5 else "plain words, no JSON"))
    session.shutdown()
    udt = report(cassandra, home, f"DESCRIBE PAYLOAD {ks}.t.u ALL")
    (content,) = udt["places"]
    assert content["place"] == "u.content" and content["values"] == 30
    assert encodings(content) == {("text", "zstd>json", False): 30}
    titles = by_path(content)["u.content.title"]["values"]
    assert titles == [{"value": f"t{k}", "count": 10} for k in range(3)]
    history = report(cassandra, home, f"DESCRIBE PAYLOAD {ks}.t.l ALL")
    (items,) = history["places"]
    lengths = [i % 4 for i in range(30)]
    assert items["place"] == "l[]" and items["values"] == sum(lengths)
    assert history["rows_without_value"] == lengths.count(0)  # an empty list is stored as null
    assert by_path(items)["l[].v"]["numbers"] == {"min": 0, "max": 2}
    pair = report(cassandra, home, f"DESCRIBE PAYLOAD {ks}.t.p ALL")
    assert [p["place"] for p in pair["places"]] == ["p[1]"]
    text = report(cassandra, home, f"DESCRIBE PAYLOAD {ks}.t.doc ALL")
    (doc,) = text["places"]
    assert encodings(doc) == {("text", "json", False): 24, ("text", "text", False): 6}
    assert by_path(doc)["doc.kind"]["present"]["count"] == 24


@pytest.fixture(scope="module")
def mixed(cassandra) -> str:
    """A small table of what the core reads and what it hands back: nulls, empty values, bzip2
    and xz values (decoded by the Python engine), snappy and zstd JSON, truncated gzip; a text
    column."""
    import bz2
    import gzip
    import lzma

    import snappy
    import zstandard

    ks = cassandra.create_keyspace("describemixed")
    session = cassandra.session(ks)
    session.execute("CREATE TABLE t (pk int PRIMARY KEY, data blob, doc text)")
    insert = session.prepare("INSERT INTO t (pk, data, doc) VALUES (?, ?, ?)")
    makers = [lambda b: None, lambda b: b"", bz2.compress, lzma.compress, snappy.compress,
              zstandard.compress, lambda b: gzip.compress(b, mtime=0)[:-9]]
    for i in range(140):
        text = json.dumps({"status": ["NEW", "PAID"][i % 2], "n": i, "tags": ["x"] * (i % 3)}).encode()
        doc = None if i % 9 == 0 else "" if i % 9 == 1 else text.decode()
        session.execute(insert, (i, makers[i % len(makers)](text), doc))
    session.shutdown()
    return f"{ks}.t"


@pytest.mark.parametrize("statement", [
    "{t}.data ALL", "{t}.data SAMPLE 60 SEED 5", "{t}.data WHERE pk IN (1, 2, 3, 4, 5)",
    "{t}.data WHERE data.status = 'PAID' ALL", "{t}.doc ALL"])
def test_pages_in_gives_the_driver_rows_report(cassandra, home, mixed: str, statement: str):
    """DESCRIBE PAYLOAD reads the server's pages (scanning.pages_in) where the core runs: the same
    report, text and JSON, as on the driver's rows (CQLSH_EXT_PAGES_IN=0)."""
    from cqlsh_ext.payload import native

    statement = "DESCRIBE PAYLOAD " + statement.format(t=mixed)
    off = {"CQLSH_EXT_PAGES_IN": "0"}
    pages, rows = report(cassandra, home, statement), report(cassandra, home, statement, env=off)
    for doc in (pages, rows):
        doc["reading"].pop("seconds")
    assert pages == rows
    assert pages["rows_read"] > 0 and pages["places"][0]["values"] > 0
    if statement.endswith(".data ALL"):  # the table's nulls, empty and handed-back values
        labels = {e["label"] for e in pages["places"][0]["encodings"]}
        assert {"bzip2>json", "xz>json", "snappy>json"} <= labels, labels
        assert pages["rows_without_value"] == 20
        text = shell(cassandra, home, statement), shell(cassandra, home, statement, env=off)
        assert [_timeless(t.stdout) for t in text] == [_timeless(text[1].stdout)] * 2 and text[0].stdout
    if native.available():  # the core runs here: the report above was read from the server's pages
        from cqlsh_ext.describe.description import Description
        from cqlsh_ext.payload.places import Decoding

        assert Description("q", "data", Decoding()).pages_in


def _timeless(text: str) -> str:
    return re.sub(r"\d+(\.\d+)? ?(s|ms|seconds?)\b", "T", text)
