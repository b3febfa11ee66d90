"""Big answers as files, the truncation signal, and edits proposed rather than written, against the
real Cassandra through the MCP SDK's own client:

- `export`'s file, read back through resources/read chunk by chunk (each within the server's cap as
  sent, each naming the next), is byte for byte (JSON Lines) or table for table (Parquet) what the
  shell's COPY (SELECT ...) TO writes for the same statement;
- an answer a cap cut says so (`truncated`, `truncated_by`, its cursor), one that none cut says
  `truncated: false`;
- `propose_edit`'s statement, run in the shell as it is, previews what the tool announced, and the
  table is as it was.
"""

from __future__ import annotations

import base64
import json
import os
from pathlib import Path
from typing import Any

import pytest
from shell_runner import CQLSH_EXT
from shell_runner import run as run_binary

from cqlsh_ext.mcp_server.exports import ExportDir

from .conftest import Demo
from .harness import McpServer, write_credentials

pytestmark = pytest.mark.server

#: The server's answer cap in these tests: small, so a file takes several chunks.
CAP = 4096


@pytest.fixture
def shell_home(tmp_path: Path, assistant_login: tuple[str, str]) -> Path:
    home = tmp_path / "shell"
    write_credentials(home, *assistant_login)
    return home


def _read_whole(server: McpServer, uri: str) -> tuple[bytes, list[dict[str, Any]]]:
    """The file `uri` names, chunk after chunk as each chunk's _meta.next says; and each chunk's _meta."""
    data, metas = b"", []
    while True:
        contents = server.portal.call(server.client.read_resource, uri).contents
        assert len(contents) == 1
        chunk = contents[0]
        meta = dict(chunk.meta or {})
        metas.append(meta)
        data += chunk.text.encode() if hasattr(chunk, "text") else base64.b64decode(chunk.blob)
        assert meta["offset"] + meta["bytes"] == len(data)
        if not meta["truncated"]:
            return data, metas
        assert meta["cap"] == "max_bytes"
        uri = meta["next"]


def _chunk_messages(server: McpServer) -> list[int]:
    """The size, as sent, of every resources/read answer of an export on the wire."""
    return [len(line) + 1 for line in server.wire.read_bytes().splitlines()
            if b'"contents":[' in line and b"cqlsh-ext://exports/" in line]


@pytest.mark.parametrize("fmt", ["jsonl", "parquet"])
def test_an_exported_file_is_the_shells_copy_of_the_same_statement(
        demo: Demo, assistant_home: Path, shell_home: Path, tmp_path: Path, fmt: str) -> None:
    exports = tmp_path / "exports"
    statement = f"SELECT name, data FROM {demo.keyspace}.blob_formats"
    with McpServer([*demo.conn, *demo.dictionary_args, "--export-dir", str(exports), "--max-bytes", str(CAP)],
                   assistant_home) as server:
        answer = server.call("export", statement=statement, format=fmt)
        data = answer.data
        assert len(answer.links) == 1
        link = answer.links[0]
        assert (str(link.uri), link.mime_type, link.size) == (data["uri"], data["mimeType"], data["size"])
        assert data["truncated"] is False and data["rows"] > 0
        files = os.listdir(exports)
        assert len(files) == 1 and files[0] == str(link.uri).rsplit("/", 1)[1]
        assert os.path.getsize(exports / files[0]) == data["size"]
        read, metas = _read_whole(server, str(link.uri))
        sizes = _chunk_messages(server)
    assert len(metas) > 1 and len(sizes) == len(metas)  # several chunks, each within the cap as sent
    assert max(sizes) <= CAP, sizes
    copied = tmp_path / f"copied.{fmt}"
    run = run_binary(CQLSH_EXT, [*demo.conn, *demo.dictionary_args, "-e",
                                 f"COPY ({statement}) TO '{copied}'"], shell_home)
    assert run.returncode == 0, run.stderr
    assert f"{data['rows']:,} rows written to {copied}" in run.stdout
    if fmt == "jsonl":
        assert read == copied.read_bytes()
        assert len(read.splitlines()) == data["rows"]
    else:
        import io

        import pyarrow.parquet as pq

        ours, theirs = pq.read_table(io.BytesIO(read)), pq.read_table(copied)
        assert ours.num_rows == data["rows"] and ours.equals(theirs)
        assert ours.schema.metadata == theirs.schema.metadata


def test_an_export_is_refused_where_the_policy_redacts_and_without_a_directory(
        demo: Demo, assistant_home: Path, tmp_path: Path) -> None:
    policy = tmp_path / "policy.toml"
    policy.write_text(f'[redact]\ncolumns = ["{demo.keyspace}.blob_formats.data"]\n')
    exports = tmp_path / "exports"
    args = [*demo.conn, "--export-dir", str(exports), "--policy", str(policy)]
    with McpServer(args, assistant_home) as server:
        error = server.call("export", statement=f"SELECT name, data FROM {demo.keyspace}.blob_formats").error
        assert error.startswith("refused: the policy") and "redacts values of" in error
        assert os.listdir(exports) == []
    with McpServer([*demo.conn], assistant_home) as server:
        assert "export" not in [tool.name for tool in server.tools()]
        # Called all the same (the README lists it): the answer names the flag that offers it.
        error = server.call("export", statement=f"SELECT name FROM {demo.keyspace}.blob_formats").error
        assert error.startswith("no tool 'export' on this server: it writes files, and only a server "
                                "started with --export-dir DIR offers it"), error


def test_every_answer_says_whether_a_cap_cut_it(demo: Demo, assistant_home: Path) -> None:
    statement = f"SELECT name FROM {demo.keyspace}.blob_formats"
    with McpServer([*demo.conn], assistant_home) as server:
        whole = server.call("query", statement=statement, limit=10_000).data
        assert whole["truncated"] is False and whole["cut"] is None
        by_limit = server.call("query", statement=statement, limit=2).data
        assert by_limit["count"] == 2 and by_limit["truncated"] == ["limit"] and by_limit["cursor"]
        wide = f"SELECT name, data FROM {demo.keyspace}.blob_formats"
        by_bytes = server.call("query", statement=wide, limit=10_000, max_bytes=3072).data
        assert "max_bytes" in by_bytes["truncated"]
        assert by_bytes["count"] < whole["count"]
        table = server.call("describe_table", table=f"{demo.keyspace}.blob_formats").data
        assert table["truncated"] is False
        column = f"{demo.keyspace}.table_with_compressed_json.data"
        report = server.call("describe_payload", column=column, sample=100, max_bytes=1 << 20)
        assert report.data["truncated"] is False
        # The message carries the report twice (its text and its structured content): a cap of one
        # text's size cuts its lists to about half.
        half = server.call("describe_payload", column=column, sample=100, max_bytes=len(report.texts[0])).data
        assert "max_bytes" in half["truncated"] and half["cut"]


def test_sweep_removes_by_age_then_the_oldest_past_the_size(tmp_path: Path) -> None:
    where = ExportDir.of(str(tmp_path / "x"), max_age=60, max_bytes=250)
    names = [where.new_name("jsonl") for _ in range(3)]
    for i, name in enumerate(names):
        (where.path / name).write_bytes(b"x" * 100)
        os.utime(where.path / name, (1_000 + i, 1_000 + i) if i == 0 else None)
    (where.path / "not-ours.txt").write_bytes(b"x" * 1000)
    assert where.sweep() == [names[0]]  # too old; the other two hold 200 bytes
    newest = where.new_name("parquet")
    (where.path / newest).write_bytes(b"y" * 100)
    assert where.sweep(keep=newest) == [names[1]]  # 300 bytes: the oldest goes, the new one stays
    assert sorted(os.listdir(where.path)) == sorted([names[2], newest, "not-ours.txt"])
    for bad in ("../etc/passwd", "not-ours.txt", names[0] + "/..", "export-zz.jsonl"):
        with pytest.raises(Exception, match="no export"):
            where.file(bad)


def test_a_proposed_edit_run_in_the_shell_previews_what_was_announced(
        cassandra, demo: Demo, assistant_home: Path, shell_home: Path) -> None:  # type: ignore[no-untyped-def]
    table = f"{cassandra.create_keyspace('mcp_proposals')}.proposals"  # the demo's tables stay four
    session = cassandra.session()
    session.execute(f"CREATE TABLE IF NOT EXISTS {table} (id int PRIMARY KEY, data text)")
    docs = {1: {"status": "NEW", "n": 1}, 2: {"status": "NEW", "n": 2}, 3: {"status": "DONE", "n": 3}}
    for key, doc in docs.items():
        session.execute(f"INSERT INTO {table} (id, data) VALUES (%s, %s)", (key, json.dumps(doc)))
    session.execute(f"INSERT INTO {table} (id, data) VALUES (4, 'not json')")
    before = {row.id: row.data for row in session.execute(f"SELECT id, data FROM {table}")}
    with McpServer([*demo.conn], assistant_home) as server:
        proposal = server.call("propose_edit", table=table, where="id IN (1, 2, 3, 4)", path="data.status",
                               value="DONE").data
        removal = server.call("propose_edit", table=table, where="id = 1", path="data.n", remove=True).data
        refused = server.call("propose_edit", table=table, where="id = 1 CONFIRM", path="data.status",
                              value="X").error
        # A path is read as a path: what else its text holds never reaches the statement.
        smuggled = {path: server.call("propose_edit", table=table, where="id = 1", path=path, value="X").error
                    for path in ("data.status = 'X', data.n", "data.status WHERE id = 2 --", "data",
                                 "data.status, data.n")}
        quoted = server.call("propose_edit", table=table, where="id = 1",
                             path='data."s"" = 1, data.n" /* c */', value="X").data
    assert proposal["statement"] == f"UPDATE {table} SET data.status = 'DONE' WHERE id IN (1, 2, 3, 4)"
    assert proposal["to_write"] == proposal["statement"] + " CONFIRM"
    assert (proposal["rows_found"], proposal["would_change"], proposal["already_as_asked"]) == (4, 2, 1)
    assert sum(proposal["refused"].values()) == 1
    old_sizes = sum(len(before[k].encode()) for k in (1, 2))
    new_sizes = sum(len(json.dumps({**docs[k], "status": "DONE"}).encode()) for k in (1, 2))
    assert (proposal["bytes_before"], proposal["bytes_after"]) == (old_sizes, new_sizes)
    assert proposal["truncated"] is False
    assert removal["statement"] == f"DELETE data.n FROM {table} WHERE id = 1" and removal["would_change"] == 1
    assert refused.startswith("where holds the conditions alone (CONFIRM is the person's to add)")
    assert smuggled == {
        "data.status = 'X', data.n": "refused: path: a column and a path inside it, nothing after it: '=' "
                                     "follows data.status; nothing would be written",
        "data.status WHERE id = 2 --": "refused: path: a column and a path inside it, nothing after it: "
                                       "'WHERE' follows data.status; nothing would be written",
        "data": "refused: path: data is a column alone: name a path inside it (data.status); nothing would "
                "be written",
        "data.status, data.n": "refused: path: a column and a path inside it, nothing after it: ',' follows "
                               "data.status; nothing would be written"}
    # One key, quotes and all: one assignment, to that key; the comment is no part of the statement.
    assert quoted["statement"] == f'UPDATE {table} SET data."s"" = 1, data.n" = \'X\' WHERE id = 1'
    changed = [change["path"] for row in quoted["rows"] for change in row["changes"]]
    assert changed == ['data."s"" = 1, data.n"']
    # Nothing was written by the server.
    after = {row.id: row.data for row in session.execute(f"SELECT id, data FROM {table}")}
    session.shutdown()
    assert after == before
    # The person runs the statement as it is: the shell's preview says what the tool announced.
    run = run_binary(CQLSH_EXT, [*demo.conn, "-e", proposal["statement"]], shell_home)
    assert run.returncode == 0, run.stderr
    shown = [line for line in run.stdout.splitlines() if line.strip()]
    assert shown[:len(proposal["preview"])] == proposal["preview"]
    assert shown[0].startswith("edit: 4 rows found: 2 would change, 1 already as asked, 1 refused")


def test_a_proposed_rewrite_run_in_the_shell_previews_what_was_announced(
        cassandra, demo: Demo, assistant_home: Path, shell_home: Path) -> None:  # type: ignore[no-untyped-def]
    import zlib

    table = f"{cassandra.create_keyspace('mcp_rewrites')}.proposed_rewrites"
    session = cassandra.session()
    session.execute(f"CREATE TABLE IF NOT EXISTS {table} (id int PRIMARY KEY, data blob)")
    docs = {key: json.dumps({"id": key, "note": "x" * 200 * key}).encode() for key in range(1, 6)}
    for key, doc in docs.items():
        session.execute(f"INSERT INTO {table} (id, data) VALUES (%s, %s)", (key, zlib.compress(doc)))
    before = {row.id: row.data for row in session.execute(f"SELECT id, data FROM {table}")}
    with McpServer([*demo.conn], assistant_home) as server:
        proposal = server.call("propose_edit", table=table, path="data", target="zstd").data
    after = {row.id: row.data for row in session.execute(f"SELECT id, data FROM {table}")}
    session.shutdown()
    assert after == before  # nothing written
    assert proposal["statement"] == f"COMPRESSION REWRITE {table}.data AS 'zstd'"
    assert (proposal["rows_found"], proposal["would_change"], proposal["sampled"]) == (5, 5, False)
    assert proposal["bytes_before"] == sum(len(value) for value in before.values())
    run = run_binary(CQLSH_EXT, [*demo.conn, "-e", proposal["statement"]], shell_home)
    assert run.returncode == 0, run.stderr
    assert [line for line in run.stdout.splitlines() if line.strip()] == \
        [line for line in proposal["preview"] if line.strip()]
