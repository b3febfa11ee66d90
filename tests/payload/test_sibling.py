"""A sibling column picks the chain (docs/payloads.md, "A column that names the chain"): a
`content_encoding` column beside the blob, the setting mapping its values to chains, read through
the real binary on the real server (display, a query's filter, JSON output, a Parquet export, an
edit) on both value engines, with the notes of rows whose sibling names no chain."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest
import zstandard
from shell_runner import CQLSH_EXT, run

from cqlsh_ext.codecs.base import DEFAULT_CAP
from cqlsh_ext.payload.confidence import view_confidence
from cqlsh_ext.payload.engine import ValueEngine
from cqlsh_ext.payload.sibling import Chosen
from cqlsh_ext.payload.spec import SpecError, parse_spec

SETTING = "by content_encoding: zstd -> zstd>json, gz -> gzip>json"
PAID = {"order": 1, "status": "PAID", "city": "Paris"}
NEW = {"order": 2, "status": "NEW", "city": "Lyon"}


def zstd(doc: dict[str, object]) -> bytes:
    return zstandard.ZstdCompressor().compress(json.dumps(doc).encode())


def gz(doc: dict[str, object]) -> bytes:
    return gzip.compress(json.dumps(doc).encode(), mtime=0)


# ------------------------------------------------------------------ the setting and the engine


def test_the_setting_is_parsed_and_checked() -> None:
    spec = parse_spec("BY Content_Encoding: 'zstd' -> 'zstd>json', gz->gzip>json")
    assert spec.choice is not None and spec.choice.column == "content_encoding"
    assert str(spec) == SETTING
    for bad, why in [("by content_encoding", "expected"), ("by x: zstd -> zstd>nope", "nope"),
                     ("by x: zstd -> zstd, ZSTD -> gzip", "mapped twice"), ("by x: zstd", "expected"),
                     ("by x: a -> by y: b -> zstd", "not another choice")]:
        with pytest.raises(SpecError, match=why):
            parse_spec(bad)


def test_each_row_is_read_by_the_chain_its_sibling_names() -> None:
    engine = ValueEngine(spec=SETTING, cap=DEFAULT_CAP)
    views = engine.views([Chosen(zstd(PAID), "zstd"), Chosen(gz(NEW), " GZ "), Chosen(gz(NEW), "zstd"),
                          Chosen(zstd(PAID), "br"), Chosen(zstd(PAID), None), zstd(PAID)])
    assert [(v.label, v.kind) for v in views[:2]] == [("zstd>json", "text"), ("gzip>json", "text")]
    assert views[0].tree == PAID and views[1].tree == NEW
    assert view_confidence(views[0]) == "confident"  # the chain is named, by the row
    assert views[2].kind == "failed" and views[2].reason.startswith("as zstd>json: zstd")
    assert views[3].reason == "content_encoding 'br' names no chain of the setting (known: zstd, gz)"
    assert views[4].reason == "content_encoding is null: no chain to read it by (known: zstd, gz)"
    assert views[5].reason == "its chain is picked by content_encoding: read content_encoding in the same row"


# ------------------------------------------------------------------ through the shell, on the server


@pytest.fixture(scope="module")
def ks(cassandra):
    name = cassandra.create_keyspace("sibling")
    s = cassandra.session(name)
    s.execute("CREATE TABLE docs (id int PRIMARY KEY, content_encoding text, data blob)")
    for key, encoding, value in [(1, "zstd", zstd(PAID)), (2, "gz", gz(NEW)), (3, "br", zstd(PAID)),
                                 (4, None, gz(NEW))]:
        s.execute("INSERT INTO docs (id, content_encoding, data) VALUES (%s, %s, %s)", (key, encoding, value))
    s.shutdown()
    return name


def ext(cassandra, home: Path, ks: str, *args: str) -> tuple[int, str, str]:
    rc = home / "cqlshrc"
    rc.write_text(f"[cqlsh_ext.decode]\n{ks}.docs.data = {SETTING}\n")
    result = run(CQLSH_EXT, [*cassandra.cqlsh_args, "--cqlshrc", str(rc), *args], home)
    return result.returncode, result.stdout, result.stderr


def test_display_json_and_the_rows_that_name_no_chain(cassandra, ks, tmp_path, engine):
    code, out, err = ext(cassandra, tmp_path, ks, "-e", f"SELECT id, content_encoding, data FROM {ks}.docs")
    assert code == 0, err
    lines = {line.split("|")[0].strip(): line for line in out.splitlines() if "|" in line}
    assert '[zstd] {"order": 1, "status": "PAID", "city": "Paris"}' in lines["1"]
    assert '[gzip] {"order": 2, "status": "NEW", "city": "Lyon"}' in lines["2"]
    assert "(content_encoding 'br' names no chain of the setting (known: zstd, gz))" in lines["3"]
    assert "(content_encoding is null: no chain to read it by (known: zstd, gz))" in lines["4"]

    code, out, err = ext(cassandra, tmp_path, ks, "-e", f"SELECT id, data FROM {ks}.docs WHERE id = 1")
    assert code == 0, err
    assert "(its chain is picked by content_encoding: read content_encoding in the same row)" in out

    code, out, err = ext(cassandra, tmp_path, ks, "--output-format", "json", "-e",
                         f"SELECT id, content_encoding, data FROM {ks}.docs")
    assert code == 0, err
    got = {row["id"]: row["data"] for row in map(json.loads, out.splitlines())}
    assert got[1] == {"label": "zstd>json", "kind": "text", "confidence": "confident", "payload": PAID}
    assert got[2]["label"] == "gzip>json" and got[2]["payload"] == NEW
    assert got[3]["kind"] == "unknown" and "names no chain" in got[3]["note"]


def test_filter_export_and_edit(cassandra, ks, tmp_path, engine):
    code, out, err = ext(cassandra, tmp_path, ks, "-e", f"SELECT id, content_encoding, data.city "
                         f"FROM {ks}.docs WHERE data.status = 'NEW' ALLOW FILTERING")
    assert code == 0, err
    assert "Lyon" in out and "Paris" not in out

    target = tmp_path / "docs.parquet"
    code, _, err = ext(cassandra, tmp_path, ks, "-e",
                       f"COPY (SELECT id, content_encoding, data FROM {ks}.docs) TO '{target}'")
    assert code == 0, err
    rows = {r["id"]: r for r in pq.read_table(target).to_pylist()}
    assert (rows[1]["data:label"], rows[2]["data:label"]) == ("zstd>json", "gzip>json")
    assert rows[1]["data"]["city"] == "Paris" and rows[2]["data"]["city"] == "Lyon"
    assert rows[3]["data"] is None and "names no chain" in rows[3]["data:note"]

    code, _, err = ext(cassandra, tmp_path, ks, "-e",
                       f"UPDATE {ks}.docs SET data.city = 'Nice' WHERE id = 2 CONFIRM")
    assert code == 0, err
    s = cassandra.session(ks)
    try:
        after = bytes(s.execute("SELECT data FROM docs WHERE id = 2").one().data)
        assert after[:2] == b"\x1f\x8b"  # still gzip: the chain its content_encoding names
        assert json.loads(gzip.decompress(after)) == dict(NEW, city="Nice")
        s.execute("UPDATE docs SET data = %s WHERE id = 2", (gz(NEW),))
    finally:
        s.shutdown()


def test_rewrite_and_encode_refuse_a_column_whose_sibling_picks_the_chain(cassandra, ks, tmp_path):
    code, out, err = ext(cassandra, tmp_path, ks, "-e", f"COMPRESSION REWRITE {ks}.docs.data AS 'zstd'")
    assert "a rewrite would leave content_encoding naming the old chain" in out + err
    code, out, err = ext(cassandra, tmp_path, ks, "-e",
                         f"INSERT INTO {ks}.docs (id, data) VALUES (9, encode('{{\"a\": 1}}'))")
    assert "the chain is picked by content_encoding row by row: name it" in out + err


def test_decode_by_in_the_shell(cassandra, ks, tmp_path):
    script = tmp_path / "s.cql"
    script.write_text(f"DECODE '{ks}.docs.data' BY content_encoding AS "
                      "'zstd -> zstd>json, gz -> gzip>json';\n"
                      f"SELECT id, content_encoding, data FROM {ks}.docs WHERE id = 2;\n")
    result = run(CQLSH_EXT, [*cassandra.cqlsh_args, "-f", str(script)], tmp_path)
    assert result.returncode == 0, result.stderr
    assert f"{ks}.docs.data AS {SETTING}" in result.stdout
    assert '[gzip] {"order": 2, "status": "NEW", "city": "Lyon"}' in result.stdout
