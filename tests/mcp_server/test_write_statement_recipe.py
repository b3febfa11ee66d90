"""A write statement is its service and its declaration (issue 99, "a write statement's recipe ... in
at most 3 files"): REVERSE BYTES (`REVERSE BYTES ks.t.column [WHERE ...] [CONFIRM]`: each stored value
of a blob column written back with its bytes reversed) added to a copy of the tree in four files, its
service (edit/statements/reverse.py, writing through writing.loop.write_changes), one more `register`
in edit/declared.py (and the names it imports there), its own test and its service's line in its
package's README.md, passes lint-imports, the declarations' tests, the maintainers' docs tests and the
fast tests a new feature touches there (ruff on what it adds); it is then a
statement of the shell (HELP lists it, it previews, writes with CONFIRM, journaled, and UNDO writes the
old values back), a method of the Python API (db.reverse_bytes, its result naming the journal db.undo
takes) and, as every write, no MCP tool, with no other file touched. What it writes is held to the
bytes the test wrote, read back with the driver."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from tests.shell_runner import api, ext, journal_of

from .tree_copy import (
    FAST,
    MAINTAINER_DOCS,
    add_readme_line,
    assert_checks_pass,
    changed,
    copied,
    copy_env,
    in_copy,
)

ROOT = Path(__file__).resolve().parents[2]

#: The write statement's three files, as a person adding one writes them.
SERVICE = ("cqlsh_ext/edit/statements/reverse.py", '''"""REVERSE BYTES: a blob column's values reversed.

Each stored value written back with its bytes in reverse order: a toy write statement, previewed,
journaled, conditioned and undoable as every write is."""

from __future__ import annotations

import time
from typing import Any


def reverse_bytes(ctx: Any, call: Any) -> dict[str, Any] | None:
    from cqlsh_ext.cql.errors import QueryError
    from cqlsh_ext.cql.spelling import spell
    from cqlsh_ext.features.arguments import names
    from cqlsh_ext.writing.blob_target import BlobTarget, key_columns, refuse_system
    from cqlsh_ext.writing.loop import CellChange, write_changes
    from cqlsh_ext.writing.mechanism import choose
    from cqlsh_ext.writing.requests import FeatureRequest
    from cqlsh_ext.writing.ttl import expiry

    found = names(call.arguments["column"], (2, 3), "column")
    keyspace, table, column = found if len(found) == 3 else (ctx.keyspace, *found)
    refuse_system(keyspace)
    meta = ctx.cluster.metadata.keyspaces.get(keyspace)
    meta = meta.tables.get(table) if meta is not None else None
    if meta is None or column not in meta.columns:
        raise QueryError(f"no blob column {keyspace}.{table}.{column}")
    keys, blob = key_columns(meta, column), BlobTarget(column)
    where = call.arguments.get("where")
    cell = spell(column)
    selected = ", ".join([*map(spell, keys), cell, f"WRITETIME({cell})", f"TTL({cell})"])
    sent = time.time()
    rows = ctx.session.execute(f"SELECT {selected} FROM {spell(keyspace)}.{spell(table)}"
                               + (f" WHERE {where}" if where else ""))
    changes = []
    for row in rows:
        values = list(row.values()) if isinstance(row, dict) else list(row)  # the shell's row factory
        stored, writetime, ttl = values[len(keys):]
        if stored:
            changes.append(CellChange(dict(zip(keys, values[:len(keys)], strict=True)), stored,
                                      bytes(reversed(bytes(stored))), writetime, ttl, expiry(ttl, sent)))
    print(f"REVERSE BYTES: {len(changes)} values to reverse", file=ctx.out)
    if not call.arguments.get("confirm") or not changes:
        print("Nothing written: add CONFIRM to write them.", file=ctx.out)
        return {"confirmed": False, "found": len(changes)}
    mechanism = choose(ctx, keyspace, table, blob, keys)
    done, journal = write_changes(ctx, keyspace, meta, blob, keys, mechanism, changes,
                                  FeatureRequest("reverse_bytes", call.arguments), "REVERSE BYTES")
    return {"confirmed": True, "found": len(changes), "written": done.written, "journal": journal}
''')
DECLARATIONS = "cqlsh_ext/edit/declared.py"
DECLARATION = '''
register(Feature(
    "reverse_bytes", "Reverse stored bytes",
    "REVERSE BYTES ks.t.data WHERE id = 1: each stored value's bytes written back in reverse order.",
    (Argument("column", "string", "keyspace.table.column (a blob column)", required=True),
     Argument("where", "string", "conditions as after WHERE", keyword="WHERE", conditions=True),
     CONFIRM._replace(keyword="CONFIRM")),
    Reads("nothing"), WRITE,
    {"type": "object", "properties": {"confirmed": {"type": "boolean"}, "found": {"type": "integer"},
                                      "written": {"type": "integer"}, "journal": {"type": "string"}},
     "required": ["confirmed", "found"]},
    Service("cqlsh_ext.edit.statements.reverse", "reverse_bytes"), writes=Writes("column", "column"),
    statement=Statement(("REVERSE", "BYTES"), "REVERSE BYTES ks.t.data WHERE id = 1 CONFIRM;", json=False,
                        options_last=True),
    method=Method("reverse_bytes")))
'''
TEST = ("tests/edit/test_reverse_bytes.py", '''import pytest

from cqlsh_ext.cql.lexer import Lexed
from cqlsh_ext.features import declared
from cqlsh_ext.features.arguments import Invalid
from cqlsh_ext.features.calling import read_statement


def test_reverse_bytes_reads_its_column_its_where_and_confirm():
    reverse = declared(plugins=False)["reverse_bytes"]
    statement = Lexed("REVERSE BYTES ks.t.data WHERE id = 1 AND c = 'x' CONFIRM;")
    call, _ = read_statement(reverse, statement, 2, "ks")
    assert call.arguments == {"column": "ks.t.data", "where": "id = 1 AND c = 'x'", "confirm": True}
    with pytest.raises(Invalid, match="column is required"):
        read_statement(reverse, Lexed("REVERSE BYTES WHERE id = 1"), 2, "ks")
''')
#: The fourth: the service's line in its package's README.md (tests/test_maintainer_docs.py).
README = "cqlsh_ext/edit/statements/README.md"


def _add_the_statement(copy: Path) -> None:
    """The statement's four files: its service, its declaration (appended to its package's
    declarations, which import every name it needs: Statement and Method, the package's own
    statements and writes declaring theirs), its test, its service's line in its package's README."""
    assert add_readme_line(copy, SERVICE[0], "REVERSE BYTES: a blob column's values written back reversed.") \
        == README
    for name, text in (SERVICE, TEST):
        (copy / name).write_text(text)
    declarations = copy / DECLARATIONS
    declarations.write_text(declarations.read_text() + DECLARATION)


@pytest.fixture(scope="module")
def reverse_tree(tmp_path_factory: pytest.TempPathFactory) -> Path:
    copy = tmp_path_factory.mktemp("reverse-tree")
    before = copied(copy)
    _add_the_statement(copy)
    assert changed(copy, before) == sorted([SERVICE[0], DECLARATIONS, TEST[0], README])
    return copy


def test_the_write_statement_passes_the_lints_and_the_declarations_tests_in_its_four_files(
        reverse_tree: Path, tmp_path: Path) -> None:
    assert_checks_pass(reverse_tree, tmp_path, [SERVICE[0], TEST[0], DECLARATIONS],
                       [TEST[0], *FAST, MAINTAINER_DOCS])
    guide = in_copy(reverse_tree, tmp_path, sys.executable, "-m", "cqlsh_ext", "docs", "features")
    assert guide.returncode == 0, guide.stderr
    assert "reverse_bytes" in guide.stdout


#: The rows the test writes: id -> stored bytes (none a palindrome: reversed, each differs).
STORED = {1: b"\x01first value", 2: b"\x02second value", 3: b"\x03third value"}


def _stored(session, table: str) -> dict[int, bytes]:  # type: ignore[no-untyped-def]
    """The table's values as the driver reads them: the oracle."""
    return {row.id: bytes(row.data) for row in session.execute(f"SELECT id, data FROM {table}")}


@pytest.fixture
def reverse_table(cassandra):  # type: ignore[no-untyped-def]
    keyspace = f"recipe_{os.getpid()}"
    session = cassandra.session()
    session.execute(f"CREATE KEYSPACE IF NOT EXISTS {keyspace} WITH replication = "
                    "{'class': 'SimpleStrategy', 'replication_factor': 1}")
    session.execute(f"CREATE TABLE IF NOT EXISTS {keyspace}.t (id int PRIMARY KEY, data blob)")
    for key, value in STORED.items():
        session.execute(f"INSERT INTO {keyspace}.t (id, data) VALUES (%s, %s)", (key, value))
    try:
        yield session, f"{keyspace}.t"
    finally:
        session.execute(f"DROP KEYSPACE IF EXISTS {keyspace}")
        session.shutdown()


@pytest.mark.server
def test_the_write_statement_in_the_shell_the_api_and_not_mcp(  # type: ignore[no-untyped-def]
        reverse_tree: Path, cassandra, reverse_table, serve, tmp_path: Path) -> None:
    env = copy_env(reverse_tree)
    home = tmp_path / "home"
    home.mkdir()
    session, table = reverse_table

    # The shell: HELP lists it; a preview writes nothing; CONFIRM writes, journaled; UNDO writes back.
    listed = ext(cassandra, home, "-e", "HELP", env=env).checked_stdout()
    assert ("  REVERSE BYTES <column> [WHERE conditions] [CONFIRM]  -- Reverse stored bytes: REVERSE BYTES "
            "ks.t.data WHERE id = 1: each stored value's bytes written back in reverse order.") in listed
    document = ext(cassandra, home, "-e", "HELP REVERSE BYTES", env=env).checked_stdout()
    assert document.startswith("REVERSE BYTES <column> [WHERE conditions] [CONFIRM];")
    preview = ext(cassandra, home, "-e", f"REVERSE BYTES {table}.data WHERE id = 1", env=env).checked_stdout()
    assert preview.splitlines() == ["REVERSE BYTES: 1 values to reverse",
                                    "Nothing written: add CONFIRM to write them."]
    assert _stored(session, table) == STORED
    written = ext(cassandra, home, "-e", f"REVERSE BYTES {table}.data WHERE id = 1 CONFIRM", env=env)
    said = written.checked_stdout()
    assert "1 row written." in said and "Undo: UNDO '" in said
    assert _stored(session, table) == {**STORED, 1: STORED[1][::-1]}
    journal = journal_of(said)
    ext(cassandra, home, "-e", f"UNDO '{journal}' CONFIRM", env=env).checked_stdout()
    assert _stored(session, table) == STORED
    refused = ext(cassandra, home, "-e", "REVERSE BYTES WHERE id = 1", env=env)
    assert refused.returncode == 2 and not refused.stdout
    assert refused.stderr.strip().splitlines()[-1] == \
        "REVERSE BYTES: column is required (keyspace.table.column (a blob column))"

    # The API: db.reverse_bytes, made from the declaration; db.undo takes its result.
    proc = api(cassandra, home, "import inspect\n"
               "print(list(inspect.signature(db.reverse_bytes).parameters))\n"
               "print(db.reverse_bytes(argv[0], where='id = 2').to_dict())\n"
               "done = db.reverse_bytes(argv[0], where='id IN (2, 3)', confirm=True)\n"
               "print(done.written, done.found, done.confirmed)\n"
               "rows = sorted(row.id for row in db.session.execute('SELECT id, data FROM ' + argv[1]) "
               "if bytes(row.data).endswith(bytes([2])) or bytes(row.data).endswith(bytes([3])))\n"
               "print(rows)\n"
               "print(db.undo(done).rows, db.undo(done, confirm=True).written)\n",
               f"{table}.data", table, env=env, timeout=300)
    assert proc.returncode == 0, proc.stderr
    parameters, previewed, counts, reversed_rows, undone = proc.stdout.splitlines()
    assert parameters == "['column', 'where', 'confirm', 'progress']"
    assert previewed == "{'confirmed': False, 'found': 1}"
    assert counts == "2 2 True"
    assert reversed_rows == "[2, 3]"  # written, as the driver reads them before the undo
    assert undone == "2 2"
    assert _stored(session, table) == STORED

    # MCP: a write is never a tool (it proposes writes: propose_edit).
    server = serve(env=env)
    assert "reverse_bytes" not in {tool.name for tool in server.tools()}
    assert server.call("reverse_bytes", column=f"{table}.data").is_error
