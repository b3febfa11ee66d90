"""COMPRESSION STATS over a whole table on Spark: the executors build the shell's aggregate.

compression_stats' statement declares it (features.feature.Statement.spark: `on_spark`): what Spark
refuses of the shell's statement (SAMPLE, PARALLEL, a SELECT of less than whole rows), then the
job (`StatsOnSpark.run`).

Each Spark partition (a set of token ranges the connector reads) is scanned by one task into a fresh
`insight.stats.Stats`, exactly as a worker process of the shell's exact scan does (an Aggregate,
scanning/aggregate.py): `fresh()`, `set_columns(names, types)` with the column types the Python
driver reports for the same SELECT, `add_rows(rows)` page by page. The driver merges the tasks'
Stats (`merge`) and prints the shell's own report (`render`, `to_json`).
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from cqlsh_ext.insight.stats import Stats
from cqlsh_ext.reading.read_requests import StatsRequest
from cqlsh_ext.spark.rows import merged_on_spark
from cqlsh_ext.spark.session import SparkError

if TYPE_CHECKING:
    from cqlsh_ext.reading.resolve import TableTarget


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

    def run(self, spark: Any, session: Any, conn: Any) -> None:
        """The statement read by Spark, the shell's report printed (as JSON, or laid out)."""
        from cqlsh_ext.insight.view_measures import effective_mode
        from cqlsh_ext.spark.answer_output import print_report

        display = conn.settings.display
        stats = run(spark, session, self, effective_mode(display.mode), display.cap, _pricing(session, conn))
        print_report(display, self.asjson, stats.to_json, lambda width: _fitted(stats.render(), width))


def _fitted(lines: list[Any], width: int) -> list[str]:
    """As in the shell: the report laid out for a terminal (`width`; 0 to a pipe or a file)."""
    from cqlsh_ext.common.text import draws_blocks, fit

    return list(fit(lines, width, draws_blocks(sys.stdout.encoding)))


def on_spark(request: StatsRequest, asjson: bool) -> StatsOnSpark:
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


def _pricing(db: Any, conn: Any) -> Any:
    """How the report prices capacity units, by the shell's rule (scanning.cost.pricing_for), at
    the level the connector reads at: LOCAL_QUORUM on Amazon Keyspaces, its default LOCAL_ONE
    elsewhere (spark/connect.py)."""
    from cqlsh_ext.scanning.cost import pricing_for

    level = "LOCAL_QUORUM" if conn.settings.keyspaces.keyspaces else "LOCAL_ONE"
    return pricing_for(level, conn.settings.keyspaces, db, conn.host)


def spark_table(session: Any, keyspace: str | None, table: str) -> TableTarget:
    """The table a statement names (reading.resolve: the one lookup), a table and not a view:
    Spark's connector reads tables."""
    from cqlsh_ext.reading.resolve import table_target

    ks = keyspace or session.keyspace
    if not ks:
        raise SparkError(f"name the table as keyspace.table (or give -k KEYSPACE): {table}")
    found = table_target(session.cluster.metadata, ks, table)
    if found is None or found.view:
        raise SparkError(f"table {ks}.{table} not found")
    return found


def stats_query(session: Any, stmt: StatsOnSpark, ks: str, meta: Any) -> str:
    """The SELECT the shell scans for this statement (a table named alone: its payload columns,
    cql.types.table_payload_columns)."""
    if stmt.request.target.select is not None:
        return stmt.request.target.select
    from cqlsh_ext.cql.spelling import columns_select

    columns = spark_table(session, ks, stmt.table).payload_columns()
    if not columns:
        raise SparkError(f"{ks}.{stmt.table} has no blob column and no text column outside its primary key")
    return columns_select(ks, stmt.table, columns)


def result_columns(session: Any, query: str) -> tuple[list[str], list[Any]]:
    """The result's column names and driver types, as the shell sees them (one row read)."""
    from cassandra.query import SimpleStatement

    try:
        result = session.execute(SimpleStatement(f"{query} LIMIT 1", fetch_size=1))
    except Exception as err:
        from cqlsh_ext.scanning.scan import error_text

        raise SparkError(error_text(err)) from None
    return list(result.column_names), list(result.column_types)


def run(spark: Any, session: Any, stmt: StatsOnSpark, mode: str, cap: int, pricing: Any = None) -> Stats:
    found = spark_table(session, stmt.keyspace, stmt.table)
    ks, meta = found.keyspace, found.meta
    query = stats_query(session, stmt, ks, meta)
    names, types = result_columns(session, query)
    stats = Stats(query, mode, cap, from_headers=stmt.request.from_headers, pricing=pricing)
    stats.set_columns(names, types)
    if not stats.has_payloads:
        raise SparkError("the result has no blob or text column")
    stats.scan = merged_on_spark(spark, stats, ks, stmt.table, names, types,
                                 f"COMPRESSION STATS {ks}.{stmt.table} on Spark")
    stats.finish()
    return stats
