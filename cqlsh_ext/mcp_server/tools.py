"""The tools: their names (clients and docs/mcp.md rely on them), arguments, and the statement each
runs through the shell. Every statement passes the read-only gate (gate.py) first, the ones a tool
writes itself too; names given as arguments are read with the shell's lexer and spelt back as CQL
names, so an argument cannot carry a second statement.

    list_keyspaces                          SELECT keyspace_name FROM system_schema.keyspaces
    list_tables(keyspace)                   SELECT table_name FROM system_schema.tables WHERE ...
    describe_table(table)                   DESCRIBE TABLE, and which columns hold blobs or JSON text
    query(statement, limit)                 the SELECT given (payload paths, GROUP BY, ...)
    describe_payload(column, sample, where) DESCRIBE PAYLOAD ks.t.column [WHERE ...] [SAMPLE n]
    compression_stats(table, column, sample) COMPRESSION STATS [SAMPLE n] ks.t | SELECT column FROM ks.t
    compression_settings(table)             COMPRESSION SETTINGS ks.t
    compression_advise(table, column, sample) COMPRESSION ADVISE [SAMPLE n] ks.t | SELECT column FROM ks.t
    inspect_value(statement)                INSPECT <the SELECT given>

query, inspect_value and describe_payload also take `decode` (column -> spec, for that call only:
guard.py applies it), and every call passes guard.py (the policy) around its answer.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from cqlsh_ext.codecs.base import CODEC_EXAMPLES
from cqlsh_ext.mcp_server import answers, connection, gate
from cqlsh_ext.mcp_server.answers import ToolAnswer, failed
from cqlsh_ext.mcp_server.capture import Capture
from cqlsh_ext.payload.names import FORMAT_EXAMPLES, title

if TYPE_CHECKING:
    from cqlsh_ext.upstream.protocol import Shell

#: `query`'s rows by default, and at most.
DEFAULT_ROWS, MAX_ROWS = 100, 10_000
#: The answer's byte cap by default (rows and values; `cqlsh-ext mcp --max-bytes`).
DEFAULT_BYTES = 256 << 10
#: A report's size at most: the report is one JSON document, kept whole or refused.
REPORT_BYTES = 8 << 20
#: INSPECT's values at most (one value is what it is for; each is a few KB of layers and headers).
INSPECT_VALUES = 10
#: describe_table reads this many rows of the text columns to tell JSON text.
TEXT_SAMPLE_ROWS = 20
#: What blobs hold, as the descriptions say it (from the declarations: payload.names, codecs.base).
PAYLOADS = f"compressed JSON, {', '.join(title(name) for name in FORMAT_EXAMPLES)}, ..."
#: The largest SAMPLE a tool asks for.
MAX_SAMPLE = 10_000_000
#: compression_advise's SAMPLE at most: each value is compressed by every codec at several levels.
MAX_ADVISE_SAMPLE = 10_000


class Invalid(Exception):
    """An argument that is not what the tool takes; str() is the one line."""


@dataclass
class Work:
    """What a tool runs with: the shell, the call's stop flag (cancelled, out of time) and the
    answer's byte cap."""

    shell: Shell
    stop: threading.Event
    max_bytes: int = DEFAULT_BYTES

    def run(self, text: str, kinds: set[str], rows: bool, limit: int | None = None,
            max_bytes: int | None = None,
            table: tuple[str | None, str] | None = None) -> tuple[gate.AllowedStatement, Capture]:
        """`text` through the gate, then the shell; what it wrote. `table`: the [keyspace,] table it
        reads, when known (looked up again if the driver does not know it yet). Raises gate.Refused."""
        read = gate.check(text, kinds)
        if table is not None:
            connection.known(self.shell, *table)
        capture = Capture(rows, limit, self.max_bytes if max_bytes is None else max_bytes, self.stop)
        connection.run(self.shell, read, capture)
        return read, capture

    def rows(self, text: str, limit: int, kinds: set[str] | None = None, key: str = "rows",
             select: str | None = None) -> ToolAnswer:
        """The rows `text` prints; `select`: the SELECT it runs (its table is looked up first)."""
        from cqlsh_ext.query.recognize import table_of

        _, capture = self.run(text, kinds or {gate.SELECT}, rows=True, limit=limit,
                              table=table_of(select or text))
        return answers.rows(text, capture, key)

    def report(self, text: str, kind: str, table: tuple[str, str]) -> ToolAnswer:
        return answers.report(self.run(text, {kind}, rows=False, max_bytes=REPORT_BYTES, table=table)[1])


@dataclass(frozen=True)
class Tool:
    name: str
    title: str
    description: str
    #: Each argument's JSON Schema.
    arguments: dict[str, dict[str, Any]]
    required: tuple[str, ...]
    answer: Callable[[Work, dict[str, Any]], ToolAnswer]

    def input_schema(self) -> dict[str, Any]:
        return {"type": "object", "properties": self.arguments, "required": list(self.required),
                "additionalProperties": False}

    def call(self, work: Work, arguments: dict[str, Any]) -> ToolAnswer:
        """The answer to a call; a bad argument or a refused statement is an error answer."""
        unknown = sorted(set(arguments) - set(self.arguments))
        if unknown:
            return failed(f"{self.name} takes no argument {', '.join(unknown)} "
                          f"(it takes {', '.join(self.arguments) or 'none'})")
        missing = [name for name in self.required if arguments.get(name) in (None, "")]
        if missing:
            return failed(f"{self.name} needs {', '.join(missing)}")
        try:
            return self.answer(work, arguments)
        except (Invalid, gate.Refused) as err:
            return failed(str(err))


# ------------------------------------------------------------------------------------- arguments


def names(text: Any, parts: tuple[int, ...], what: str) -> list[str]:
    """`ks.table` (or the like) as the schema spells each name: "quoted" as written, else lower
    case, read with the shell's lexer; `parts` says how many names may be given."""
    from cqlsh_ext.cql.errors import QueryError
    from cqlsh_ext.cql.lexer import Lexed

    if not isinstance(text, str):
        raise Invalid(f"{what} must be a string such as {_EXAMPLES[what]}")
    try:
        tokens = Lexed(text).tokens[:-1]
    except QueryError as err:
        raise Invalid(f"{what}: {err}") from None
    found: list[str] = []
    for i, tok in enumerate(tokens):
        if i % 2 == 1:
            if tok.kind != "punct" or tok.value != ".":
                break
            continue
        if tok.kind not in ("word", "qname"):
            break
        found.append(tok.value.lower() if tok.kind == "word" else tok.value)
    else:
        if tokens and len(tokens) % 2 == 1 and len(found) in parts:
            return found
    raise Invalid(f"{what} must be {_EXAMPLES[what]} (names, \"quoted\" where they need it), not {text!r}")


_EXAMPLES = {"keyspace": "a keyspace name", "table": "keyspace.table",
             "column": "keyspace.table.column"}


def spell(name: str) -> str:
    """A name as CQL writes it (quoted when it must be)."""
    from cassandra.metadata import protect_name

    return str(protect_name(name))


def number(arguments: dict[str, Any], name: str, default: int | None, low: int, high: int) -> int | None:
    value = arguments.get(name)
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise Invalid(f"{name} must be a whole number from {low:,} to {high:,}, not {value!r}")
    return value


def table_of(work: Work, given: Any) -> tuple[str, str]:
    """(keyspace, table) of a `table` argument; a table alone is in the shell's keyspace (-k)."""
    found = names(given, (1, 2), "table")
    if len(found) == 1:
        if work.shell.current_keyspace is None:
            raise Invalid("table must be keyspace.table (no keyspace is in use: -k names one)")
        return work.shell.current_keyspace, found[0]
    return found[0], found[1]


def statement_of(arguments: dict[str, Any]) -> str:
    statement = arguments.get("statement")
    if not isinstance(statement, str):
        raise Invalid("statement must be a string: one SELECT")
    return statement


# ------------------------------------------------------------------------------------- the tools


def _list_keyspaces(work: Work, arguments: dict[str, Any]) -> ToolAnswer:
    return work.rows("SELECT keyspace_name FROM system_schema.keyspaces", MAX_ROWS)


def _list_tables(work: Work, arguments: dict[str, Any]) -> ToolAnswer:
    keyspace = names(arguments.get("keyspace"), (1,), "keyspace")[0]
    literal = "'" + keyspace.replace("'", "''") + "'"
    return work.rows(f"SELECT table_name FROM system_schema.tables WHERE keyspace_name = {literal}",
                     MAX_ROWS)


def _query(work: Work, arguments: dict[str, Any]) -> ToolAnswer:
    limit = number(arguments, "limit", DEFAULT_ROWS, 1, MAX_ROWS)
    return work.rows(statement_of(arguments), limit or DEFAULT_ROWS)


def _inspect_value(work: Work, arguments: dict[str, Any]) -> ToolAnswer:
    statement = statement_of(arguments)
    gate.check(statement, {gate.SELECT})  # the statement given must be one SELECT by itself
    return work.rows(f"INSPECT {statement}", INSPECT_VALUES, {gate.INSPECT}, key="values", select=statement)


def _describe_payload(work: Work, arguments: dict[str, Any]) -> ToolAnswer:
    keyspace, table, column = names(arguments.get("column"), (3,), "column")
    sample = number(arguments, "sample", None, 1, MAX_SAMPLE)
    where = arguments.get("where")
    if where is not None and not isinstance(where, str):
        raise Invalid("where must be a string: the conditions after WHERE")
    text = f"DESCRIBE PAYLOAD {spell(keyspace)}.{spell(table)}.{spell(column)}"
    if where and where.strip():
        text += f" WHERE {where.strip()}"
    if sample is not None:
        text += f" SAMPLE {sample}"
    return work.report(text, gate.DESCRIBE_PAYLOAD, (keyspace, table))


def _compression_stats(work: Work, arguments: dict[str, Any]) -> ToolAnswer:
    keyspace, table = table_of(work, arguments.get("table"))
    sample = number(arguments, "sample", None, 1, MAX_SAMPLE)
    target = f"{spell(keyspace)}.{spell(table)}"
    column = arguments.get("column")
    if column is not None:
        target = f"SELECT {spell(names(column, (1,), 'column')[0])} FROM {target}"
    return work.report(f"COMPRESSION STATS {f'SAMPLE {sample} ' if sample else ''}{target}",
                       "COMPRESSION STATS", (keyspace, table))


def _compression_settings(work: Work, arguments: dict[str, Any]) -> ToolAnswer:
    keyspace, table = table_of(work, arguments.get("table"))
    return work.report(f"COMPRESSION SETTINGS {spell(keyspace)}.{spell(table)}", "COMPRESSION SETTINGS",
                       (keyspace, table))


def _compression_advise(work: Work, arguments: dict[str, Any]) -> ToolAnswer:
    # Never SAVE DICTIONARY: that writes a file on the server's host (the gate refuses it too).
    keyspace, table = table_of(work, arguments.get("table"))
    sample = number(arguments, "sample", None, 1, MAX_ADVISE_SAMPLE)
    target = f"{spell(keyspace)}.{spell(table)}"
    column = arguments.get("column")
    if column is not None:
        target = f"SELECT {spell(names(column, (1,), 'column')[0])} FROM {target}"
    return work.report(f"COMPRESSION ADVISE {f'SAMPLE {sample} ' if sample else ''}{target}",
                       "COMPRESSION ADVISE", (keyspace, table))


def _describe_table(work: Work, arguments: dict[str, Any]) -> ToolAnswer:
    keyspace, table = table_of(work, arguments.get("table"))
    _, capture = work.run(f"DESCRIBE TABLE {spell(keyspace)}.{spell(table)}", {gate.DESCRIBE}, rows=False,
                          max_bytes=REPORT_BYTES, table=(keyspace, table))
    if capture.errors or not capture.text().strip():
        return failed(" ".join(capture.errors) or f"no table {keyspace}.{table}")
    from cqlsh_ext.mcp_server.table_columns import columns

    try:
        described = columns(work.shell, keyspace, table, TEXT_SAMPLE_ROWS)
    except LookupError as err:
        return failed(str(err))
    data = {"table": f"{keyspace}.{table}", "cql": capture.text().strip(), "columns": described,
            "notes": capture.messages}
    return ToolAnswer(data=data)


_STATEMENT = {"type": "string", "description": "one SELECT statement (CQL, with payload paths)"}
_TABLE = {"type": "string", "description": "keyspace.table"}
_SAMPLE = {"type": "integer", "minimum": 1, "description": "rows to read at random instead of the "
           "reading chosen from the table's size"}
_DECODE = {"type": "object", "additionalProperties": {"type": "string"}, "maxProperties": 16,
           "description": "what columns hold, for this call only, where detection cannot tell: column -> "
                          "spec, codecs from the outside in then the format, e.g. {\"data\": \"deflate\"}, "
                          "{\"data\": \"zstd>json\"}, {\"data\": \"zstd>protobuf:Order@orders.desc\"} (a "
                          "schema file only among those the server was started with)"}

TOOLS: dict[str, Tool] = {tool.name: tool for tool in (
    Tool("list_keyspaces", "Keyspaces",
         "The keyspaces of the cluster: the rows of SELECT keyspace_name FROM system_schema.keyspaces.",
         {}, (), _list_keyspaces),
    Tool("list_tables", "Tables of a keyspace",
         "The tables of a keyspace: the rows of SELECT table_name FROM system_schema.tables WHERE "
         "keyspace_name = ...",
         {"keyspace": {"type": "string", "description": "a keyspace name"}}, ("keyspace",), _list_tables),
    Tool("describe_table", "A table's schema",
         "The table's CQL schema (DESCRIBE TABLE) and its columns: which hold blobs (whose contents "
         f"cqlsh-ext decodes: {PAYLOADS}) and which text columns hold "
         "JSON (told from a few rows).",
         {"table": _TABLE}, ("table",), _describe_table),
    Tool("query", "Run a SELECT",
         "Runs one SELECT and answers its rows as JSON, blob values decoded (each blob as "
         "{label, kind, payload}). Payload paths reach inside blobs: SELECT data.status, "
         "data.items[0].sku FROM ks.t WHERE data.status = 'FAILED' ALLOW FILTERING; aggregates and "
         "GROUP BY too: SELECT data.status, count(*) FROM ks.t GROUP BY data.status ALLOW "
         "FILTERING. A statement that reads beyond the partitions its WHERE names needs ALLOW "
         "FILTERING; a full scan that costs (Amazon Keyspaces, or a table of 1 GB or more) is "
         "refused with its estimated cost until the statement ends with ALLOW FILTERING CONFIRM. "
         "Read-only: anything but a SELECT is refused. At most `limit` rows (default 100) and "
         "256 KB; the answer says when it was cut.",
         {"statement": _STATEMENT,
          "limit": {"type": "integer", "minimum": 1, "maximum": MAX_ROWS,
                    "description": f"rows at most (default {DEFAULT_ROWS})"},
          "decode": _DECODE},
         ("statement",), _query),
    Tool("describe_payload", "What a blob column holds",
         "DESCRIBE PAYLOAD: what a blob (or text) column's values hold: their encodings "
         f"(e.g. {CODEC_EXAMPLES[0]}>json), and every path inside them with its presence, types and frequent "
         "values, from a sample of rows or every row.",
         {"column": {"type": "string", "description": "keyspace.table.column"},
          "sample": _SAMPLE,
          "where": {"type": "string", "description": "conditions on payload paths or columns, as after "
                                                     "WHERE: data.status = 'PAID'"},
          "decode": _DECODE},
         ("column",), _describe_payload),
    Tool("compression_stats", "Compression statistics",
         "COMPRESSION STATS: per blob or text column, values by codec, stored and decompressed bytes, "
         "ratios, size buckets, and Amazon Keyspaces capacity units per row, with a verdict.",
         {"table": _TABLE, "column": {"type": "string", "description": "one column (default: every "
                                                                         "blob and text column)"},
          "sample": {"type": "integer", "minimum": 1,
                     "description": "estimate from random slices holding this many rows"}},
         ("table",), _compression_stats),
    Tool("compression_settings", "Table compression settings",
         "COMPRESSION SETTINGS: the table's SSTable compression options next to measurements on a "
         "sample of its rows, and advice where the numbers support it.",
         {"table": _TABLE}, ("table",), _compression_settings),
    Tool("inspect_value", "Inspect one stored value",
         "INSPECT: for the blob values a SELECT names (one is what it is for; at most 10), the "
         "nesting chain, each layer's container and headers, checksums verified, sizes and ratio, "
         "and the payload's kind.",
         {"statement": {"type": "string", "description": "a SELECT naming one blob value, e.g. SELECT "
                                                         "data FROM ks.t WHERE id = 42"},
          "decode": _DECODE},
         ("statement",), _inspect_value),
    Tool("compression_advise", "Compression advice",
         "COMPRESSION ADVISE: compresses a sample of each blob or text column's decompressed values "
         "with every available codec and level (and a trained dictionary where it helps): ratio, "
         "compress and decompress speed measured here, capacity units, and a verdict. Read-only.",
         {"table": _TABLE, "column": {"type": "string", "description": "one column (default: every "
                                                                         "blob and text column)"},
          "sample": {"type": "integer", "minimum": 1, "maximum": MAX_ADVISE_SAMPLE,
                     "description": "values per column (default 300, the first ones read)"}},
         ("table",), _compression_advise),
)}
