"""Which statements Spark mode runs, read from their tokens (cqlsh_ext.cql.lexer.Lexed: the script
is lexed once, each statement a part of it, and the payload-query parser reads the same tokens):
COMPRESSION STATS and DESCRIBE PAYLOAD (docs/describe.md: describe_job.py), told and read by their
features' declarations as the shell tells and reads them (features.shell_statement.own_feature_of,
features.calling.read_statement); COMPRESSION REWRITE; a SELECT (payload paths, payload
conditions, aggregates, GROUP BY: docs/queries.md); COPY (SELECT ...) TO 'dir' WITH FORMAT =
'parquet' (docs/export.md: export_job.py). Spark reads whole tables: COMPRESSION STATS over anything
but a whole-table SELECT, and the shell's SAMPLE and PARALLEL, and DESCRIBE PAYLOAD's SAMPLE, are
refused in one line (the shell runs those), as is any other statement a feature declares.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from cqlsh_ext.cql.lexer import Lexed, Token
from cqlsh_ext.describe.parse import DescribeStatement
from cqlsh_ext.reading.read_requests import StatsRequest
from cqlsh_ext.spark.session import SparkError


@dataclass(frozen=True)
class StatsOnSpark:
    """COMPRESSION STATS: the shell's own typed request (reading.read_requests.StatsRequest: the
    table, the whole-table SELECT as typed or None for a table named alone, DECODE ALL as
    `from_headers=False`), and whether the report is asked as JSON (how it is rendered, not what
    is read)."""

    request: StatsRequest
    asjson: bool

    @property
    def keyspace(self) -> str | None:
        return self.request.target.keyspace

    @property
    def table(self) -> str:
        assert self.request.target.table is not None
        return self.request.target.table


@dataclass(frozen=True)
class DescribeOnSpark:
    """DESCRIBE PAYLOAD: the shell's own typed request (describe.parse.DescribeStatement, read from
    describe_payload's declaration), and whether the report is asked as JSON."""

    request: DescribeStatement
    asjson: bool


@dataclass
class ExportStatementOnSpark:
    """COPY (SELECT ...) TO 'dir': the parsed export (cqlsh_ext.export.parse) and its table."""

    export: Any
    keyspace: str | None
    table: str


@dataclass(frozen=True)
class RewriteOnSpark:
    """COMPRESSION REWRITE (or its RESUME): read by the rewrite's own parser on the driver
    (spark/rewrite_job.py), against the driver's schema."""

    statement: Lexed


@dataclass
class QueryStatement:
    statement: Lexed
    keyspace: str | None
    table: str


def _name(tok: Token) -> str:
    return tok.value if tok.kind == "qname" else tok.value.lower()


def _table(tokens: list[Token], i: int) -> tuple[str | None, str, int]:
    """[ks.]table at tokens[i]: (keyspace, table, index after it)."""
    if tokens[i].kind not in ("word", "qname"):
        raise SparkError(f"expected a table name, found {tokens[i].describe()}")
    if tokens[i + 1].value == "." and tokens[i + 2].kind in ("word", "qname"):
        return _name(tokens[i]), _name(tokens[i + 2]), i + 3
    return None, _name(tokens[i]), i + 1


def classify(statement: Lexed, keyspace: str | None = None) -> (StatsOnSpark | QueryStatement
                                                                | ExportStatementOnSpark | DescribeOnSpark
                                                                | RewriteOnSpark):
    """What the statement (a statement of the script, lexed: cli.statements) asks Spark to run; a
    table named alone is in `keyspace` (-k). A statement a feature declares is told by its
    declaration (features.shell_statement.own_feature_of: its words, DESCRIBE PAYLOAD from cqlsh's
    DESCRIBE), read as the shell reads it, then what Spark makes of it (`_RUNS`); any other
    declared statement is the shell's."""
    from cqlsh_ext.features.shell_statement import own_feature_of

    tokens = statement.tokens
    words = [t.value.upper() if t.kind == "word" else None for t in tokens]
    if words[0] == "COPY":
        return _export(statement)
    if words[0] == "SELECT":
        i = next((k for k, w in enumerate(words) if w == "FROM"), None)
        if i is None:
            raise SparkError("a SELECT needs FROM [keyspace.]table")
        keyspace, table, _ = _table(tokens, i + 1)
        return QueryStatement(statement, keyspace, table)
    if words[:2] == ["COMPRESSION", "REWRITE"]:
        return RewriteOnSpark(statement)
    declared = own_feature_of(statement)
    if declared is not None and declared[0].name in _RUNS:
        request, asjson = _declared(declared[0].name, statement, declared[1], keyspace)
        return _RUNS[declared[0].name](request, asjson)
    if words[0] in ("DESCRIBE", "DESC"):
        raise SparkError("Spark mode's DESCRIBE is DESCRIBE PAYLOAD ks.table.column; other DESCRIBE "
                         "statements are the shell's")
    raise SparkError(f"Spark mode runs {_ran()} statements; {tokens[0].value or 'an empty statement'} is the "
                     "shell's")


def _ran() -> str:
    """What Spark mode runs, as its refusal lists it: the declared statements of `_RUNS` among the
    others."""
    from cqlsh_ext.features import declared
    from cqlsh_ext.features.forms import statement_words

    features = declared(plugins=False)
    stats, describe = (" ".join(statement_words(features[name])) for name in _RUNS)
    return f"{stats}, COMPRESSION REWRITE, SELECT and {describe}"


def _declared(name: str, statement: Lexed, skip: int, keyspace: str | None) -> tuple[Any, bool]:
    """The statement (its `skip` words, then what feature `name` declares) read as the shell reads
    it (features.calling.read_statement; a table alone in `keyspace`): its request, and whether it
    asks for JSON. Its refusal is a SparkError, in the statement's words."""
    from cqlsh_ext.features import declared
    from cqlsh_ext.features.arguments import Invalid
    from cqlsh_ext.features.calling import read_statement, spoken

    feature = declared(plugins=False)[name]
    try:
        return read_statement(feature, statement, skip, keyspace)
    except Invalid as err:
        raise SparkError(spoken(feature, str(err))) from None


def _stats(request: StatsRequest, asjson: bool) -> StatsOnSpark:
    """COMPRESSION STATS [JSON] [DECODE ALL] [CONFIRM] SELECT cols|* FROM [ks.]table | [ks.]table,
    read from compression_stats' declaration as the shell reads it; Spark reads the whole table
    exactly, so the shell's SAMPLE and PARALLEL, and a SELECT of anything but whole rows, are refused.
    A full scan is what Spark mode is for: confirmed by asking for it."""
    for clause, given in (("SAMPLE", request.sample), ("PARALLEL", request.parallel)):
        if given is not None:
            raise SparkError(f"COMPRESSION STATS {clause} is the shell's; Spark mode scans the whole table "
                             "exactly (leave it out)")
    target = request.target
    if target.select is not None and not target.whole_table:
        raise SparkError("Spark mode's COMPRESSION STATS reads whole tables: it takes a whole-table SELECT, "
                         "SELECT columns FROM [keyspace.]table and nothing after it (run the others in the "
                         "shell)")
    return StatsOnSpark(replace(request, target=replace(target, whole_table=True), confirm=True), asjson)


def _export(statement: Lexed) -> ExportStatementOnSpark:
    """COPY (SELECT ...) TO 'dir' [WITH ...]: Parquet only, written by Spark (a directory)."""
    from cqlsh_ext.export.parse import LABEL, CopyError, parse
    from cqlsh_ext.query.recognize import table_of

    tokens = statement.tokens
    if not (tokens[1].kind == "punct" and tokens[1].value == "("):
        raise SparkError("Spark mode's COPY is COPY (SELECT ...) TO 'dir' WITH FORMAT = 'parquet'; "
                         "COPY table TO is the shell's (cqlsh's own COPY)")
    try:
        export = parse(statement)
    except CopyError as err:
        raise SparkError(f"{LABEL}: {err}") from None
    if export.fmt != "parquet":
        from cqlsh_ext.common.file_formats import FILE_FORMATS, listed

        shells = listed((f.title for f in FILE_FORMATS if f.name != "parquet"), "and")
        raise SparkError(f"{LABEL}: Spark mode writes Parquet (WITH FORMAT = 'parquet'); {shells} files are "
                         "the shell's")
    if export.row_group_size is not None:
        raise SparkError(f"{LABEL}: ROW_GROUP_SIZE is the shell's: Spark's Parquet writer sizes row "
                         "groups in bytes (--conf spark.hadoop.parquet.block.size=...)")
    if export.sample_rows is not None or export.schema is not None:
        raise SparkError(f"{LABEL}: SAMPLE_ROWS and SCHEMA are the shell's: Spark mode reads its types "
                         "from the first 5,000 rows")
    target = table_of(export.query)
    if target is None:
        raise SparkError(f"{LABEL}: COPY ( ... ) takes a SELECT ... FROM [keyspace.]table")
    return ExportStatementOnSpark(export, target[0], target[1])


def _describe(request: DescribeStatement, asjson: bool) -> DescribeOnSpark:
    """DESCRIBE PAYLOAD ks.t.column [WHERE ...] [ALL [CONFIRM]] [JSON]: every row, read by Spark, the
    statement read from describe_payload's declaration as the shell reads it."""
    from cqlsh_ext.describe.parse import LABEL

    if request.sample is not None:
        raise SparkError(f"{LABEL}: SAMPLE is the shell's; Spark mode reads every row (leave it out)")
    return DescribeOnSpark(request, asjson)


#: The declared statements Spark mode runs, by their feature: what it makes of each one's request
#: (and whether it asks for JSON).
_RUNS: dict[str, Callable[[Any, bool], StatsOnSpark | DescribeOnSpark]] = {
    "compression_stats": _stats, "describe_payload": _describe}
