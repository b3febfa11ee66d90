"""Which statements Spark mode runs, read from their tokens (cqlsh_ext.cql.lexer.Lexed: the script
is lexed once, each statement a part of it, and the payload-query parser reads the same tokens).

A statement a feature declares is told and read by its declaration as the shell tells and reads it
(features.statements.own_feature_of, features.calling.read_statement), and runs on Spark when
its Statement declares `spark`, the job Spark runs for it (COMPRESSION STATS: stats_job.py; DESCRIBE
PAYLOAD: describe_job.py), which refuses what Spark does not run of it (the shell's SAMPLE); any
other declared statement is refused in one line naming it. Spark mode's own, which no feature's
declaration reads: COMPRESSION REWRITE (rewrite_job.py reads it with the rewrite's parser); a SELECT
(payload paths, payload conditions, aggregates, GROUP BY: docs/queries.md); COPY (SELECT ...) TO
'dir' WITH FORMAT = 'parquet' (docs/export.md: export_job.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from cqlsh_ext.cql.lexer import Lexed, Token
from cqlsh_ext.spark.session import SparkError

if TYPE_CHECKING:
    from cqlsh_ext.features.feature import Feature


class DeclaredJob(Protocol):
    """What a declared statement's Spark job (features.feature.Statement.spark) makes of its
    request: the Spark jobs of the statement, run by `run`, its report printed."""

    def run(self, spark: Any, session: Any, conn: Any) -> None: ...


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


def _table(tokens: list[Token], i: int) -> tuple[str | None, str, int]:
    """[ks.]table at tokens[i]: (keyspace, table, index after it)."""
    if tokens[i].kind not in ("word", "qname"):
        raise SparkError(f"expected a table name, found {tokens[i].describe()}")
    if tokens[i + 1].value == "." and tokens[i + 2].kind in ("word", "qname"):
        return tokens[i].name, tokens[i + 2].name, i + 3
    return None, tokens[i].name, i + 1


def classify(statement: Lexed, keyspace: str | None = None) -> (QueryStatement | ExportStatementOnSpark
                                                                | RewriteOnSpark | DeclaredJob):
    """What the statement (a statement of the script, lexed: cli.statements) asks Spark to run; a
    table named alone is in `keyspace` (-k). A statement a feature declares is told by its
    declaration (features.statements.own_feature_of: its words, DESCRIBE PAYLOAD from cqlsh's
    DESCRIBE), read as the shell reads it, then handed to the job its Statement declares for Spark."""
    from cqlsh_ext.features.forms import statement_words
    from cqlsh_ext.features.statements import own_feature_of

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
    declaration = declared[0].statement if declared is not None else None
    spark = declaration.spark if declaration is not None else None
    if declared is not None and spark is not None:  # (its Statement declares its job on Spark)
        request, asjson = _declared(declared[0], statement, declared[1], keyspace)
        job: DeclaredJob = spark(request, asjson)
        return job
    if words[0] in ("DESCRIBE", "DESC"):
        raise SparkError("Spark mode's DESCRIBE is DESCRIBE PAYLOAD ks.table.column; other DESCRIBE "
                         "statements are the shell's")
    said = " ".join(statement_words(declared[0])) if declared is not None else \
        tokens[0].value or "an empty statement"
    raise SparkError(f"Spark mode runs {_ran()} statements; {said} is the shell's")


def _ran() -> str:
    """What Spark mode runs, as its refusal lists it: the declared statements Spark has a job of,
    then its own."""
    from cqlsh_ext.common.file_formats import listed
    from cqlsh_ext.features import declared
    from cqlsh_ext.features.forms import statement_words

    jobs = [" ".join(statement_words(feature)) for feature in declared(plugins=False).values()
            if feature.statement is not None and feature.statement.spark is not None]
    return listed([*jobs, "COMPRESSION REWRITE", "SELECT", "COPY (SELECT ...) TO"], "and")


def _declared(feature: Feature, statement: Lexed, skip: int, keyspace: str | None) -> tuple[Any, bool]:
    """The statement (its `skip` words, then what `feature` declares) read as the shell reads it
    (features.calling.read_statement; a table alone in `keyspace`): its request, and whether it
    asks for JSON. Its refusal is a SparkError, in the statement's words."""
    from cqlsh_ext.features.arguments import Invalid
    from cqlsh_ext.features.calling import read_statement, spoken

    try:
        return read_statement(feature, statement, skip, keyspace)
    except Invalid as err:
        raise SparkError(spoken(feature, str(err))) from None


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
