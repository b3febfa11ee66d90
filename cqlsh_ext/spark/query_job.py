"""SELECT with payload paths, conditions, aggregates and GROUP BY on Spark: the shell's parser,
evaluator and answer (cqlsh_ext.query: grammar.parse, evaluate.Evaluator, answer.Answer).

Each Spark task fills a fresh `Answer` (the part a worker process of the shell fills) with its rows,
which cross from the JVM as Arrow batches (as COMPRESSION STATS reads them) and are evaluated a
page at a time, and sends it back with the answer rows it found (a streamed plan's, at most LIMIT
per task); the driver merges the parts in partition order (token order, as the shell reads a whole table) and
prints them with the shell's value conversions and output writers.

Spark reads whole tables: a WHERE with ordinary conditions (the server's part) is the shell's.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable, Iterator, Sequence
from typing import Any, NamedTuple

from cqlsh_ext.cql.errors import QueryError
from cqlsh_ext.cql.lexer import Lexed
from cqlsh_ext.payload.places import Decoding
from cqlsh_ext.payload.view import crossing
from cqlsh_ext.query.answer import Answer
from cqlsh_ext.query.evaluate import Evaluator
from cqlsh_ext.query.grammar import Plan
from cqlsh_ext.spark.parse import QueryStatement
from cqlsh_ext.spark.rows import PART_SCHEMA, CoreCounts, arrow_pages, spark_how, with_dictionaries
from cqlsh_ext.spark.session import SparkError, TaskProgress, read_failed

Row = tuple[Any, ...]


def answer_partition(template: Answer, settings: Decoding, keyspace: str, names: Sequence[str],
                     types: Sequence[Any], counts: CoreCounts, batches: Iterable[Any]) -> Iterator[Any]:
    """One Spark task (in an executor): its rows, Arrow batch by batch a page at a time (as
    COMPRESSION STATS reads them: rows.arrow_pages), into a fresh Answer; yields one Arrow batch
    holding the pickled Answer and the streamed rows found."""
    import pickle

    import pyarrow

    part = template.fresh()
    # Made here from the plan and the settings (plain data), not shipped: its engines and the
    # native core's program are per process.
    evaluator = Evaluator(template.plan, settings, keyspace)
    found: list[Row] = []
    limit = template.plan.limit if part.streamed else None
    pages = arrow_pages(batches, types)
    if limit is None:
        for page in counts.counted(pages):
            found.extend(part.add_page(evaluator, names, page))
    else:
        for page in pages:
            read = 0
            for row in page:  # a LIMIT: row by row, so that the counts stop where the answer does
                found.extend(part.add(evaluator, dict(zip(names, row, strict=True))))
                read += 1
                if len(found) >= limit:
                    break  # the driver keeps the first LIMIT in partition order: more are never needed
            counts.rows_read.add(read)
            if len(found) >= limit:
                break
    # A blob the answer gives whole crosses to the driver with its reading, never decoded again there:
    # the rows found, and those a sorted or DISTINCT answer holds in its part.
    found = [tuple(crossing(value) for value in row) for row in found]
    if part.buffer is not None:
        part.buffer.rows = [tuple(crossing(value) for value in row) for row in part.buffer.rows]
    yield pyarrow.RecordBatch.from_pydict({"part": [pickle.dumps((part, found))]})


def answer_parts(spark: Any, session: Any, ks: str, table: str, names: Sequence[str], answer: Answer,
                 settings: Decoding, rows_read: Any, from_arrow: Any = None) -> Any:
    """An RDD of each Spark task's (part, the streamed rows it found): the columns `names` of
    ks.table read through the connector and answer_partition's Arrow batches unpickled. Spark
    mode's SELECT and its COPY (SELECT ...) both read this way. `rows_read` and `from_arrow`
    (Spark accumulators): the rows read, and the blobs the native core read from Arrow."""
    import pickle
    from functools import partial

    from cqlsh_ext.cql.spelling import columns_select
    from cqlsh_ext.spark.rows import read_table
    from cqlsh_ext.spark.stats_job import result_columns

    names, driver_types = result_columns(session, columns_select(ks, table, names))
    frame = read_table(spark, ks, table, names)
    if from_arrow is None:
        from_arrow = spark.sparkContext.accumulator(0)
    counts = CoreCounts(rows_read, from_arrow)
    task = partial(answer_partition, answer, settings, ks, names, driver_types, counts)
    return frame.mapInArrow(with_dictionaries(task), PART_SCHEMA).rdd.map(lambda row: pickle.loads(row.part))


class PlannedQuery(NamedTuple):
    """A statement planned for Spark: the table, the plan, the evaluator's settings, an empty
    answer, the answer's column types and the columns read, in the table's order."""

    keyspace: str
    meta: Any
    plan: Plan
    settings: Decoding
    answer: Answer
    types: list[Any]
    read: list[str]


def plan_query(session: Any, settings: Any, keyspace: str | None, table: str, statement: Lexed,
               label: str, not_a_query: str, run_there: str, plain: bool = False) -> PlannedQuery:
    """Parse the statement (its tokens, lexed once) against the table's schema and check what
    Spark mode refuses, before Spark reads: SparkError(`not_a_query`) when the grammar finds no
    payload query (a plain SELECT, taken when `plain`), a WHERE on columns (to be run
    `run_there`: the shell's), what the evaluator refuses (-d none with paths). Spark mode's
    SELECT and its COPY (SELECT ...) both start here."""
    from cqlsh_ext.query.grammar import columns_read, parse
    from cqlsh_ext.reading.select import result_types
    from cqlsh_ext.spark.stats_job import spark_table

    target = spark_table(session, keyspace, table)
    ks, meta = target.keyspace, target.meta
    try:
        plan = parse(statement, target.schema, plain=plain)
    except QueryError as err:
        raise SparkError(f"{label}: {err}") from None
    if plan is None:
        raise SparkError(not_a_query)
    if plan.server_where:
        raise SparkError(f"Spark mode reads whole tables: the WHERE's conditions on columns "
                         f"({plan.server_where}) are the shell's (run {run_there} there)")
    evaluator_settings = settings.display.decoding()
    try:
        Evaluator(plan, evaluator_settings, ks)
    except QueryError as err:
        raise SparkError(f"{label}: {err}") from None
    wanted = columns_read(plan, target.schema)
    read = [name for name in meta.columns if wanted is None or name in wanted]
    answer = Answer(plan, read if wanted is None else [])
    try:
        types = result_types(session, plan, answer)
    except Exception as err:
        from cqlsh_ext.scanning.scan import error_text

        raise SparkError(error_text(err)) from None
    return PlannedQuery(ks, meta, plan, evaluator_settings, answer, types, read)


def run(spark: Any, session: Any, stmt: QueryStatement, settings: Any, float_precision: int) -> None:
    """`float_precision`: cqlshrc's, for the floats the aggregates compute (as the shell prints them)."""
    from cqlsh_ext.reading.select import LABEL

    ks, meta, plan, evaluator_settings, answer, types, read = plan_query(
        session, settings, stmt.keyspace, stmt.table, stmt.statement, LABEL,
        "Spark mode runs SELECT statements with payload paths or payload conditions (docs/queries.md); "
        "a plain SELECT is the shell's", "it")
    rows_read, from_arrow = spark.sparkContext.accumulator(0), spark.sparkContext.accumulator(0)
    try:
        tasks = answer_parts(spark, session, ks, meta.name, read, answer,
                             evaluator_settings, rows_read, from_arrow)
        with TaskProgress(spark, f"SELECT {ks}.{meta.name} on Spark", rows_read):
            parts = tasks.collect()
    except Exception as err:
        raise read_failed(spark, f"{ks}.{meta.name}", err) from None
    rows: list[Row] = []
    for part, found in parts:
        answer.merge(part)
        rows.extend(found)
    if answer.streamed:
        rows = rows[:plan.limit] if plan.limit is not None else rows
    else:
        rows = answer.final()
    how = spark_how(spark.sparkContext, len(parts), from_arrow.value)
    from cqlsh_ext.reading.select import answer_columns
    from cqlsh_ext.reading.typed import ReadNotes, TypedAnswer
    from cqlsh_ext.render.closing import closing_line
    from cqlsh_ext.spark.answer_output import print_answer

    # The merged answer as the shell's reading gives it: its columns, one batch, its notes.
    notes = ReadNotes(answer, how=how, emitted=len(rows))
    typed = TypedAnswer(answer_columns(plan, answer, types), iter([rows]), notes, plan)
    print_answer(settings.display, typed, ks, meta.name, float_precision)
    closing_line(notes, sys.stderr)  # the shell's closing line, with how Spark read the table
    sys.stderr.flush()
