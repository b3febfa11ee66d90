"""A statement is lexed once (cqlsh_ext.cql.lexer): recognition, the payload-query parser, its
error path, COPY (SELECT ...) TO's, encode()'s and COMPRESSION REWRITE's readers share one pass
(REWRITE never reaching cqlsh's parser), and a SELECT without a payload path costs no schema and
no parse. Run in the shell itself against the real server; each case checks what the user sees,
then how often the statement was lexed."""

from __future__ import annotations

import gzip
import importlib
import json
import sys
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from cqlsh_ext.cql import lexer

#: Modules that read statements: imported first, so that every name bound to tokenize is counted.
READERS = ("cqlsh_ext.query.recognize", "cqlsh_ext.query.grammar", "cqlsh_ext.payload_select.command",
           "cqlsh_ext.payload_select.keys", "cqlsh_ext.export.command", "cqlsh_ext.export.parse",
           "cqlsh_ext.export.run", "cqlsh_ext.encode.command", "cqlsh_ext.encode.parse",
           "cqlsh_ext.spark.parse", "cqlsh_ext.spark.cli", "cqlsh_ext.rewrite.command",
           "cqlsh_ext.rewrite.parse", "cqlsh_ext.rewrite.run")

DOCS = {1: {"status": "NEW", "n": 3}, 2: {"status": "PAID", "n": 7}}


@pytest.fixture(scope="module")
def docs(cassandra) -> str:
    ks = cassandra.create_keyspace("lexonce")
    session = cassandra.session(ks)
    session.execute("CREATE TABLE docs (pk int PRIMARY KEY, data blob, note text)")
    for pk, doc in DOCS.items():
        session.execute("INSERT INTO docs (pk, data, note) VALUES (%s, %s, %s)",
                        (pk, gzip.compress(json.dumps(doc).encode(), mtime=0), f"note {pk}"))
    session.shutdown()
    return ks


@pytest.fixture(scope="module")
def ext_shell(cassandra, docs) -> Iterator[Any]:
    from shell_runner import in_process_shell

    with in_process_shell(cassandra, docs) as sh:
        yield sh


class Calls:
    """Counts calls of the functions it wraps, by name."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.counts: Counter[str] = Counter()
        self.monkeypatch = monkeypatch

    def wrap(self, name: str, owner: Any, attr: str, original: Callable[..., Any]) -> None:
        def counted(*args: Any, **kwargs: Any) -> Any:
            self.counts[name] += 1
            return original(*args, **kwargs)

        self.monkeypatch.setattr(owner, attr, counted)


@pytest.fixture
def calls(monkeypatch: pytest.MonkeyPatch) -> Calls:
    """`tokenize` counted wherever a module of cqlsh_ext holds it, and the schema and the parse of
    a payload query (looked up by the shell's modules when they run)."""
    for module in READERS:
        importlib.import_module(module)
    spy = Calls(monkeypatch)
    original = lexer.tokenize
    for name, module in list(sys.modules.items()):
        ours = name == "cqlsh_ext" or name.startswith("cqlsh_ext.")
        if ours and getattr(module, "tokenize", None) is original:
            spy.wrap("lex", module, "tokenize", original)
    from cqlsh_ext.query import grammar
    from cqlsh_ext.reading import resolve

    # The table's schema is read in one place (reading.resolve.table_target).
    spy.wrap("schema", resolve, "table_target", resolve.table_target)
    spy.wrap("parse", grammar, "parse", grammar.parse)
    return spy


def run(shell: Any, capsys: pytest.CaptureFixture[str], calls: Calls, statement: str) -> tuple[str, str]:
    capsys.readouterr()
    calls.counts.clear()
    shell.query_out = sys.stdout  # cqlsh keeps the stdout it was built with: this test's, captured
    shell.onecmd(statement)
    out, err = capsys.readouterr()
    print(f"{statement!r}: {dict(calls.counts)}", file=sys.__stderr__)
    return out, err


def test_a_payload_select_is_lexed_once(ext_shell, capsys, calls):
    out, err = run(ext_shell, capsys, calls, "SELECT pk, data.status FROM docs WHERE pk = 2;")
    assert "PAID" in out and "NEW" not in out, (out, err)
    assert calls.counts["lex"] == 1
    assert calls.counts["schema"] == 1


def test_a_payload_select_refused_is_lexed_once(ext_shell, capsys, calls):
    out, err = run(ext_shell, capsys, calls, "SELECT data.status FROM docs WHERE data.n > 1;")
    assert err.endswith("payload query: this reads rows beyond the partitions the WHERE clause names and "
                        "keeps the matching ones in the shell, which can take long on a big table: add "
                        "ALLOW FILTERING to run it anyway\n"), err
    assert calls.counts["lex"] == 1
    out, err = run(ext_shell, capsys, calls, "SELECT data.status AS s FROM docs;")
    assert err.endswith("payload query: AS is not supported in a payload query: "
                        "columns are named as written\n"), err
    assert calls.counts["lex"] == 1


@pytest.mark.parametrize("statement, shown", [
    ("SELECT pk, note FROM docs WHERE pk = 1;", "note 1"),
    ("SELECT note, writetime(note) FROM docs WHERE pk = 1;", "note 1"),  # CQL the parser does not know
    ("SELECT JSON pk, note FROM docs WHERE pk = 2;", '"note": "note 2"'),
    ("SELECT count(*) FROM docs;", "2"),
])
def test_a_select_without_a_payload_path_costs_no_schema(ext_shell, capsys, calls, statement, shown):
    out, err = run(ext_shell, capsys, calls, statement)
    assert shown in out, (out, err)
    assert calls.counts["lex"] <= 1
    assert calls.counts["schema"] == 0
    assert calls.counts["parse"] == 0


def test_a_select_the_server_refuses_is_the_servers(ext_shell, capsys, calls):
    """No payload path and no column the parser knows: what cqlsh says, no schema fetched."""
    out, err = run(ext_shell, capsys, calls, "SELECT nothere FROM docs;")
    assert "Undefined column name nothere" in err, err
    assert calls.counts["schema"] == 0


def test_copy_select_to_a_file_is_lexed_once(ext_shell, capsys, calls, tmp_path: Path):
    target = tmp_path / "out.jsonl"
    out, err = run(ext_shell, capsys, calls, f"COPY (SELECT pk, data.status FROM docs) TO '{target}';")
    rows = sorted((r["pk"], r["data.status"]) for r in map(json.loads, target.read_text().splitlines()))
    assert rows == [(1, "NEW"), (2, "PAID")], (out, err)
    assert calls.counts["lex"] == 1


def test_an_insert_with_encode_is_lexed_once(ext_shell, capsys, calls):
    out, err = run(ext_shell, capsys, calls,
                   """INSERT INTO docs (pk, data) VALUES (3, encode('gzip', '{"status": "SENT"}'));""")
    assert "encode: " in err and "as gzip" in err, err
    assert calls.counts["lex"] == 1
    out, err = run(ext_shell, capsys, calls, "SELECT data.status FROM docs WHERE pk = 3;")
    assert "SENT" in out, (out, err)


def test_a_rewrite_is_lexed_once_and_cqlsh_never_parses_it(ext_shell, capsys, calls, tmp_path: Path):
    """COMPRESSION REWRITE is our grammar's alone (rewrite.command): lexed once into its request,
    its WHERE read from the same tokens, a refusal from them too; cqlsh's parser never sees it,
    nor the other COMPRESSION statements, read from their declarations."""
    from cqlsh_ext.upstream import seams

    rules = seams.import_cqlshmain(None).cqlruleset
    calls.wrap("cqlsh", rules, "cql_whole_parse_tokens", rules.cql_whole_parse_tokens)
    ext_shell.settings.display.journal_dir = str(tmp_path)
    out, err = run(ext_shell, capsys, calls, "COMPRESSION REWRITE docs.data AS 'zstd' WHERE data.n > 1 "
                                             "ALLOW FILTERING;")
    assert "would rewrite 2 rows" in out and not err, (out, err)
    assert (calls.counts["lex"], calls.counts["cqlsh"]) == (1, 0)
    out, err = run(ext_shell, capsys, calls, "COMPRESSION REWRITE docs.data AS 'zstd' PACE 0;")
    assert err.endswith("PACE takes write capacity units a second, a positive whole number, not '0'; "
                        "nothing was written\n"), err
    assert (calls.counts["lex"], calls.counts["cqlsh"]) == (1, 0)
    # COMPRESSION SETTINGS is read from its feature's declaration, with our lexer: cqlsh parses nothing.
    out, err = run(ext_shell, capsys, calls, "COMPRESSION SETTINGS docs;")
    assert "compression" in out.lower() and not err, (out, err)
    assert (calls.counts["lex"], calls.counts["cqlsh"]) == (1, 0)
    # So are COMPRESSION ADVISE and STATS, a SELECT read from the statement's own tokens.
    out, err = run(ext_shell, capsys, calls, "COMPRESSION ADVISE SAMPLE 5 SELECT data FROM docs;")
    assert "COMPRESSION ADVISE: sample of" in out and not err, (out, err)
    assert (calls.counts["lex"], calls.counts["cqlsh"]) == (1, 0)
    out, err = run(ext_shell, capsys, calls, "COMPRESSION STATS DECODE ALL SELECT data FROM docs;")
    assert "COMPRESSION STATS" in out and not err, (out, err)
    assert (calls.counts["lex"], calls.counts["cqlsh"]) == (1, 0)
    # And INSPECT (its runner prints each value as it comes).
    out, err = run(ext_shell, capsys, calls, "INSPECT SELECT data FROM docs LIMIT 1;")
    assert "blob value" in out and not err, (out, err)
    assert (calls.counts["lex"], calls.counts["cqlsh"]) == (1, 0)
    # And TRIAL, declared too: its refusal (no INTO) read from the same tokens, cqlsh parsing nothing.
    out, err = run(ext_shell, capsys, calls, "COMPRESSION TRIAL docs.data;")
    assert "COMPRESSION TRIAL: name the keyspace for the scratch tables" in err, (out, err)
    assert (calls.counts["lex"], calls.counts["cqlsh"]) == (1, 0)


def test_a_select_with_block_comments_is_read_as_written(ext_shell, capsys, calls):
    """Comments are space to the lexer, /* */ too (it once refused them: the SELECT went to the
    server, which knows no payload path)."""
    out, err = run(ext_shell, capsys, calls, "SELECT pk, /* the state */ data.status FROM docs WHERE pk = 1;")
    assert "NEW" in out and not err, (out, err)
    assert calls.counts["lex"] == 1


def test_a_statement_that_does_not_lex_is_lexed_once_and_says_why_each_time(calls):
    from cqlsh_ext.cql.errors import QueryError
    from cqlsh_ext.cql.lexer import Lexed
    from cqlsh_ext.query.recognize import table_of

    statement = Lexed("SELECT data.a FROM t WHERE data.a ~ 1")
    assert table_of(statement) is None
    for _ in range(2):
        with pytest.raises(QueryError, match="unexpected character '~' at 34"):
            _ = statement.tokens
    assert calls.counts["lex"] == 1


def test_the_select_inside_copy_is_read_from_the_copys_tokens(calls):
    from cqlsh_ext.cql.lexer import Lexed
    from cqlsh_ext.export.parse import parse as parse_export
    from cqlsh_ext.query.grammar import parse
    from cqlsh_ext.query.recognize import table_of
    from tests.query.test_grammar import SCHEMA

    text = ("COPY ( SELECT pk, data.status FROM ks.t WHERE pk = 'a' -- one\n) TO 'x.jsonl' "
            "WITH OVERWRITE = true;")
    export = parse_export(Lexed(text))
    assert export.select == "SELECT pk, data.status FROM ks.t WHERE pk = 'a' -- one"
    assert [export.query.text[t.start:t.end] for t in export.query.tokens[:2]] == ["SELECT", "pk"]
    assert table_of(export.query) == ("ks", "t")
    plan = parse(export.query, SCHEMA, plain=True)
    assert calls.counts["lex"] == 1
    assert plan == parse(export.select, SCHEMA, plain=True)  # the SELECT's own text, lexed alone
    assert plan is not None and plan.server_statement == "SELECT pk, data FROM ks.t WHERE pk = 'a'"


def test_spark_reads_a_script_lexed_once(calls):
    from types import SimpleNamespace

    from cqlsh_ext.query.grammar import parse
    from cqlsh_ext.spark.cli import _statements
    from cqlsh_ext.spark.parse import QueryStatement, classify
    from tests.query.test_grammar import SCHEMA

    script = ("-- the first\nSELECT pk, data.a FROM ks.t WHERE data.a = ';' ALLOW FILTERING;\n"
              "COMPRESSION STATS ks.t; -- the end\n")
    statements = [classify(s) for s in _statements(SimpleNamespace(execute=script, file=None))]
    assert [type(s).__name__ for s in statements] == ["QueryStatement", "StatsOnSpark"]
    query = statements[0]
    assert isinstance(query, QueryStatement) and (query.keyspace, query.table) == ("ks", "t")
    plan = parse(query.statement, SCHEMA)
    assert plan is not None and [p.values for p in plan.predicates] == [(";",)]
    assert calls.counts["lex"] == 1


# ------------------------------------------------------------------------ cqlsh-ext mcp's query


def mcp_call(shell: Any, calls: Calls, tool_name: str, **arguments: Any) -> Any:
    """One call as cqlsh-ext mcp serves it (the guard around the tool, on the shell), counted:
    our lexer (`lex`), cqlsh's (`cqlsh lex`: seams.split_statements), the schema and the parse."""
    import threading

    from cqlsh_ext.common import jsonenc
    from cqlsh_ext.mcp_server.connection import Served
    from cqlsh_ext.mcp_server.cursor import Cursors
    from cqlsh_ext.mcp_server.guard import Guard
    from cqlsh_ext.mcp_server.policy import load
    from cqlsh_ext.mcp_server.tools import TOOLS, Work
    from cqlsh_ext.reading.context import shell_context
    from cqlsh_ext.render.json_lines import JsonRows
    from cqlsh_ext.upstream import seams

    calls.wrap("cqlsh lex", seams, "split_statements", seams.split_statements)
    calls.wrap("rows as text", JsonRows, "batch_bytes", JsonRows.batch_bytes)  # an export file's text
    calls.wrap("report as text", jsonenc, "dumps", jsonenc.dumps)  # a report or an INSPECT value alike
    tool = Guard(load(None, TOOLS)).wrap(TOOLS[tool_name])
    work = Work(Served(shell_context(shell)), threading.Event(), cursors=Cursors())
    calls.counts.clear()
    answer = tool.call(work, arguments)
    print(f"mcp {tool_name} {arguments!r}: {dict(calls.counts)}", file=sys.__stderr__)
    return answer


@pytest.mark.parametrize("statement, rows", [
    ("SELECT pk, data.status FROM docs WHERE data.n > 5 ALLOW FILTERING", [{"pk": 2, "data.status": "PAID"}]),
    ("SELECT pk, data.status FROM docs", [{"pk": 1, "data.status": "NEW"}, {"pk": 2, "data.status": "PAID"}]),
    ("SELECT pk, note FROM docs;", [{"pk": 1, "note": "note 1"}, {"pk": 2, "note": "note 2"}]),
])
def test_an_mcp_query_is_lexed_once(ext_shell, calls, statement, rows):
    """A `query` call: the guard lexes it, resolves its table and reads its plan once; the reading
    takes them (no second lexing by cqlsh's lexer or ours, none for the cursor of its cut answer);
    its rows are never spelt as text by the export's writer and read back (the native core lays
    them out once, the cut and redaction applied there; the Python engine screens JSON values)."""
    answer = mcp_call(ext_shell, calls, "query", statement=statement, limit=1)
    body = answer.body()
    assert body is not None, answer.error
    got = answer.json_data(body)  # as the client receives it (rows the core spelt are text until then)
    assert got["count"] == 1 and got["rows"][0] in rows, got
    assert bool(got.get("cursor")) == (len(rows) > 1), got  # cut: its cursor issued
    assert calls.counts["lex"] == 1
    assert calls.counts["cqlsh lex"] == 0
    assert calls.counts["schema"] == 1
    assert calls.counts["parse"] == 1
    assert calls.counts["rows as text"] == 0  # never JSON Lines made as the export's and read back


@pytest.mark.parametrize("tool, arguments, names", [
    ("compression_stats", {"table": "docs", "column": "data"}, 2),  # `docs`, `data`
    ("compression_settings", {"table": "docs"}, 1),
])
def test_an_mcp_report_reads_its_arguments_once(ext_shell, calls, tool, arguments, names):
    """compression_stats, compression_settings: their names read once each (no statement spelt or
    lexed), the table resolved once, by the guard (the tool and the report's reading take it)."""
    answer = mcp_call(ext_shell, calls, tool, **arguments)
    assert answer.data is not None, answer.error
    if tool == "compression_stats":
        assert [c["column"] for c in answer.data["columns"]] == ["data"], answer.data
    else:
        assert answer.data["table"] == "docs", answer.data
        assert answer.data["compression"]["class"].endswith("LZ4Compressor"), answer.data
        assert answer.data["sample"]["rows"] >= len(DOCS), answer.data  # other cases add rows
    assert calls.counts["lex"] == names
    assert calls.counts["cqlsh lex"] == 0
    assert calls.counts["schema"] == 1
    assert calls.counts["report as text"] == 0  # its figures screened and measured as JSON values


def test_an_mcp_inspect_value_is_lexed_once(ext_shell, calls):
    """inspect_value: the guard lexes its SELECT and resolves its table; the tool and the reading
    take them; each value's report screened as JSON values, never spelt as text and read back."""
    answer = mcp_call(ext_shell, calls, "inspect_value", statement="SELECT data FROM docs WHERE pk = 2")
    assert answer.data is not None, answer.error
    (value,) = answer.data["values"]
    assert value["chain"] == ["gzip"] and "PAID" in json.dumps(value), value
    assert calls.counts["lex"] == 1
    assert calls.counts["cqlsh lex"] == 0
    assert calls.counts["schema"] == 1
    assert calls.counts["parse"] == 1  # the guard's plan (its redactions' checks)
    assert calls.counts["report as text"] == 0
