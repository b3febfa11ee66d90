"""Raw-content zstd frames and RFC 9842 dcz values (python-zstandard's, tests/dictionary_values.py)
and Thrift structs (thriftpy2's) stored on the real server and read by the real binary: the display,
INSPECT, a payload query with a filter, DESCRIBE PAYLOAD, COPY TO, encode('dcz:dict=...'),
COMPRESSION REWRITE ... AS 'dcz:dict=...' and ADVISE's hash."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
import thriftpy2
import zstandard
from dictionary_values import Made, make, read_dcz
from shell_runner import CQLSH_EXT, run, table_rows
from thriftpy2.protocol import TBinaryProtocolFactory, TCompactProtocolFactory
from thriftpy2.utils import serialize

from .test_dictionary_server import shell

IDL = Path(__file__).resolve().parents[1] / "payload" / "thrift" / "orders.thrift"


@pytest.fixture(scope="module")
def stored(cassandra, tmp_path_factory) -> tuple[str, Made]:
    made = make(tmp_path_factory.mktemp("hashed"))
    ks = cassandra.create_keyspace("hashed")
    session = cassandra.session(ks)
    session.execute("CREATE TABLE orders (id int PRIMARY KEY, kind text, data blob)")
    insert = session.prepare("INSERT INTO orders (id, kind, data) VALUES (?, ?, ?)")
    for n in range(30):
        session.execute(insert, (n, "raw", made.raw_values[n]))
        session.execute(insert, (100 + n, "dcz", made.dcz_values[n]))
    session.shutdown()
    return ks, made


def _digest(made: Made) -> str:
    return hashlib.sha256(made.raw_file.read_bytes()).hexdigest()


def test_raw_and_dcz_values_read_with_the_named_file_and_say_what_they_need(cassandra, stored, tmp_path):
    ks, made = stored
    statement = f"SELECT id, data FROM {ks}.orders WHERE id IN (3, 103)"
    missing = {row[0]: row[1] for row in table_rows(shell(cassandra, tmp_path, statement).stdout)}
    assert missing["3"].endswith("(zstd frame needs a dictionary (none named in the frame))"), missing
    assert missing["103"].endswith(f"(dcz value needs the dictionary with SHA-256 {_digest(made)} "
                                   "(not loaded))"), missing
    out = shell(cassandra, tmp_path, statement, "--output-format", "json", "--dictionary", str(made.raw_file))
    rows = {row["id"]: (row["data"]["label"], row["data"]["payload"])
            for row in map(json.loads, out.stdout.splitlines())}
    assert rows == {3: ("zstd>json", json.loads(made.docs[3])), 103: ("dcz>json", json.loads(made.docs[3]))}


def test_inspect_shows_the_dcz_header_and_the_dictionary_found_by_its_hash(cassandra, stored, tmp_path):
    ks, made = stored
    statement = f"INSPECT SELECT data FROM {ks}.orders WHERE id IN (5, 105)"
    said = " ".join(shell(cassandra, tmp_path, statement, "--dictionary", str(made.raw_file)).stdout.split())
    assert "header 5e 2a 4d 18 20 00 00 00" in said, said
    assert f"dictionary_sha256 {_digest(made)}" in said
    size = len(made.raw_file.read_bytes())
    assert f"dictionary SHA-256 {_digest(made)} ({size} bytes, from {made.raw_file})" in said
    assert "a raw dictionary, tried as the frame names none" in said  # the bare raw-content frame
    said = " ".join(shell(cassandra, tmp_path, statement).stdout.split())
    assert f"SHA-256 {_digest(made)}: not loaded (--dictionary FILE)" in said, said


def test_a_payload_query_and_describe_read_them(cassandra, stored, tmp_path):
    ks, made = stored
    flags = ("--dictionary", str(made.raw_file))
    want = sorted(n for n in range(30) if n % 3 == 1)  # status PAID
    query = f"SELECT id, data.status FROM {ks}.orders WHERE data.status = 'PAID' ALLOW FILTERING"
    out = shell(cassandra, tmp_path, query, "--output-format", "json", *flags)
    assert sorted(row["id"] for row in map(json.loads, out.stdout.splitlines())) == sorted(
        want + [100 + n for n in want])
    out = shell(cassandra, tmp_path, f"DESCRIBE PAYLOAD {ks}.orders.data ALL CONFIRM", *flags)
    lines = [line.split() for line in out.stdout.splitlines()]
    for chain in ("zstd>json", "dcz>json"):  # read with a raw dictionary, no checksum: likely at most
        assert [chain, "text", "likely", "30", "50.0", "%"] in lines, out.stdout


def test_encode_rewrite_and_advise_with_dcz(cassandra, stored, tmp_path):
    ks, made = stored
    digest = _digest(made)
    session = cassandra.session(ks)
    session.execute("CREATE TABLE IF NOT EXISTS written (id int PRIMARY KEY, data blob)")
    session.execute("INSERT INTO written (id, data) VALUES (2, %s)",
                    (zstandard.ZstdCompressor().compress(made.docs[2]),))
    session.shutdown()
    doc = '{"orderId": "ORD-900001", "status": "PAID"}'
    script = (f"INSERT INTO {ks}.written (id, data) VALUES (1, encode('dcz:dict={digest}', '{doc}'));\n"
              f"COMPRESSION REWRITE {ks}.written.data AS 'dcz:dict={digest}' WHERE id = 2 CONFIRM;\n")
    out = run(CQLSH_EXT, [*cassandra.cqlsh_args, "--dictionary", str(made.raw_file)], tmp_path, stdin=script)
    assert out.returncode == 0, out.stderr
    session = cassandra.session(ks)
    rows = dict(session.execute("SELECT id, data FROM written"))
    session.shutdown()
    for n, expected in ((1, doc.encode()), (2, made.docs[2])):
        assert read_dcz(made.raw_file.read_bytes(), rows[n]) == expected, n
    out = run(CQLSH_EXT, [*cassandra.cqlsh_args, "-e", f"INSERT INTO {ks}.written (id, data) VALUES "
                          f"(3, encode('dcz', '{doc}'))"], tmp_path)
    assert "dcz is written with a dictionary of the store: dcz:dict=" in out.stderr, out.stderr
    advice = shell(cassandra, tmp_path, f"COMPRESSION ADVISE SELECT data FROM {ks}.orders WHERE kind = 'raw' "
                   "ALLOW FILTERING", "--dictionary", str(made.raw_file))
    said = " ".join(advice.stdout.split())
    assert "dcz (RFC 9842) with the dictionary SAVE DICTIONARY writes" in said, said
    assert "its values carry SHA-256 " in said


def test_thrift_with_its_idl_through_queries_describe_and_export(cassandra, tmp_path):
    shop = thriftpy2.load(str(IDL))
    ks = cassandra.create_keyspace("thrift")
    session = cassandra.session(ks)
    session.execute("CREATE TABLE orders (id int PRIMARY KEY, data blob)")
    insert = session.prepare("INSERT INTO orders (id, data) VALUES (?, ?)")
    for n in range(12):
        order = shop.Order(id=n, customer=f"customer {n}", items=[shop.Item(f"SKU-{n}", n, 1.5)],
                           paid=n % 2 == 0, status=n % 3 + 1)
        factory = TBinaryProtocolFactory() if n % 2 else TCompactProtocolFactory()
        session.execute(insert, (n, zstandard.ZstdCompressor().compress(serialize(order, factory))))
    session.shutdown()
    out = shell(cassandra, tmp_path, f"SELECT id, data FROM {ks}.orders WHERE id = 4")
    assert '[zstd>thrift/compact] {"1":4,"2":"customer 4","3":[{"1":"SKU-4","2":4,"3":1.5}],"4":true,"5":2}' \
        in out.stdout, out.stdout
    setting = ("--decode", f"{ks}.orders.data=zstd>thrift:Order@{IDL}")
    query = (f"SELECT id, data.customer, data.items[0].sku FROM {ks}.orders WHERE data.status = 'SHIPPED' "
             "ALLOW FILTERING")
    out = shell(cassandra, tmp_path, query, "--output-format", "json", *setting)
    rows = sorted((row["id"], row["data.customer"], row["data.items[0].sku"])
                  for row in map(json.loads, out.stdout.splitlines()))
    assert rows == [(n, f"customer {n}", f"SKU-{n}") for n in (2, 5, 8, 11)]
    out = shell(cassandra, tmp_path, f"DESCRIBE PAYLOAD {ks}.orders.data ALL CONFIRM", *setting)
    lines = [line.split() for line in out.stdout.splitlines()]
    assert any(line[:2] == ["zstd>thrift/compact", "record"] for line in lines), out.stdout
    assert any(line[:1] == ["customer"] for line in lines), out.stdout
    assert any(line[:1] == ["status"] for line in lines)
    target = tmp_path / "orders.jsonl"
    shell(cassandra, tmp_path, f"COPY (SELECT id, data FROM {ks}.orders WHERE id = 3) TO '{target}'",
          *setting)
    exported = json.loads(target.read_text().splitlines()[0])
    assert exported["data"]["payload"] == {"id": 3, "customer": "customer 3",
                                           "items": [{"sku": "SKU-3", "qty": 3, "price": 1.5}],
                                           "paid": False, "status": "NEW"}
    assert exported["data"]["label"] == "zstd>thrift/binary"
