"""The demo's blob formats (cqlsh_ext.demo: one value per container, written by the real producers)
exported with their chains: each row's label is the codec chain the display shows, the payload the
demo's document, and a value that does not decode keeps its stored bytes and its reason."""

from __future__ import annotations

import json

import pyarrow as pa

from cqlsh_ext.demo.cli import load
from cqlsh_ext.demo.records import documents
from cqlsh_ext.demo.samples import samples
from tests.payload_select.conftest import shell

from .readback import duckdb_rows, parquet_rows


def test_the_demo_blob_formats_with_their_chains(cassandra, home):
    ks = cassandra.create_keyspace("exdemo")
    session = cassandra.session()
    load(session, ks, 5)
    stored = {r.name: r.data for r in session.execute(f"SELECT name, data FROM {ks}.blob_formats")}
    session.shutdown()
    target = home / "formats.parquet"
    out = shell(cassandra, home, f"COPY (SELECT name, producer, data FROM {ks}.blob_formats) TO '{target}'")
    assert out.returncode == 0, out.stderr

    schema, rows = parquet_rows(target)
    assert pa.types.is_struct(schema.field("data").type)  # every decoded document has one shape
    got = {r["name"]: r for r in rows}
    document = json.loads(next(documents(5)))  # the demo's first document, in every format
    expected = samples(json.dumps(document))
    assert set(got) == {s.name for s in expected}
    for sample in expected:
        row = got[sample.name]
        if sample.expect.startswith("raw"):  # shown as hex: no payload, the stored bytes and why
            assert row["data"] is None and row["data:stored"] == stored[sample.name], sample.name
            reason = sample.expect.partition(": ")[2]
            assert row["data:label"] is None, sample.name
            assert row["data:kind"] == ("failed" if reason else "unknown"), sample.name
            assert reason in (row["data:note"] or ""), sample.name
            continue
        chain = [] if sample.expect == "text" else sample.expect.split(">")
        assert row["data:label"].split(">")[:len(chain)] == chain, (sample.name, row["data:label"])
        assert row["data:stored"] is None
        if row["data:kind"] == "text" and "java" in row["data:label"].split(">"):
            continue  # a Java string holding the document: not a record
        record = {k: v for k, v in row["data"].items() if v is not None}
        assert record == {k: v for k, v in document.items() if v is not None}, sample.name
    _types, duck = duckdb_rows(target, "name, \"data:label\" AS label")
    assert {r["name"]: r["label"] for r in duck} == {n: r["data:label"] for n, r in got.items()}
