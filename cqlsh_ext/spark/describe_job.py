"""DESCRIBE PAYLOAD over a whole table on Spark: the executors fill the shell's aggregate.

describe_payload's statement declares it (features.feature.Statement.spark: `on_spark`): what
Spark refuses of the shell's statement (SAMPLE), then the job (`DescribeOnSpark.run`).

Each Spark partition (token ranges the connector reads) is one task filling a fresh
`describe.description.Description`, as a worker process of the shell's ALL does: `set_columns`
with the types the Python driver reports for the same SELECT, `add_rows` a page at a time (the
value engine decodes a page's blobs together; a WHERE's payload conditions are the evaluator's).
The driver merges the tasks' parts (every figure merges exactly, the distinct counts' sketches
included) and prints the shell's report: the figures equal the shell's ALL.

Spark reads every row: SAMPLE is refused by the statement parser, a WHERE on columns here.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from cqlsh_ext.describe.description import Description
from cqlsh_ext.describe.parse import LABEL, DescribeError, DescribeStatement
from cqlsh_ext.spark.rows import merged_on_spark
from cqlsh_ext.spark.session import SparkError


@dataclass(frozen=True)
class DescribeOnSpark:
    """DESCRIBE PAYLOAD: the shell's own typed request (describe.parse.DescribeStatement, read from
    describe_payload's declaration), and whether the report is asked as JSON."""

    request: DescribeStatement
    asjson: bool

    def run(self, spark: Any, session: Any, conn: Any) -> None:
        """The statement read by Spark, the shell's report printed (as JSON, or laid out)."""
        from cqlsh_ext.spark.answer_output import print_report

        report = run(spark, session, self.request, conn.settings)
        print_report(conn.settings.display, self.asjson, report.to_json, report.render)


def on_spark(request: DescribeStatement, asjson: bool) -> DescribeOnSpark:
    """DESCRIBE PAYLOAD ks.t.column [WHERE ...] [ALL [CONFIRM]] [JSON]: every row, read by Spark, the
    statement read from describe_payload's declaration as the shell reads it; the shell's SAMPLE is
    refused."""
    if request.sample is not None:
        raise SparkError(f"{LABEL}: SAMPLE is the shell's; Spark mode reads every row (leave it out)")
    return DescribeOnSpark(request, asjson)


def run(spark: Any, session: Any, stmt: DescribeStatement, settings: Any) -> Any:
    """The statement read by Spark: the shell's Report (describe.report) of every row."""
    from cqlsh_ext.describe import run as shell_run
    from cqlsh_ext.describe.report import Reading, Report
    from cqlsh_ext.reading.context import ReadContext
    from cqlsh_ext.spark.stats_job import result_columns

    # The shell's DESCRIBE resolves its column in a reading's context: here the Spark driver's
    # session (its schema, keyspace and settings; nothing is asked, nothing read through it).
    ctx = ReadContext(session=session, cluster=session.cluster, host="", keyspace=session.keyspace,
                      consistency=session.default_consistency_level,
                      serial_consistency=session.default_serial_consistency_level, settings=settings)
    try:
        target = shell_run.resolve(ctx, stmt)
    except DescribeError as err:
        raise SparkError(f"{LABEL}: {err}") from None
    plan = target.plan
    if plan is not None and plan.server_where:
        raise SparkError(f"Spark mode reads whole tables: the WHERE's conditions on columns "
                         f"({plan.server_where}) are the shell's (run DESCRIBE PAYLOAD there)")
    decoding = settings.display.decoding()
    evaluator_settings = (plan, decoding, target.keyspace) if plan is not None and plan.predicates else None
    names, types = result_columns(session, target.query)
    description = Description(target.query, target.column, decoding, target.place)
    started = time.monotonic()
    description.scan = merged_on_spark(spark, description, target.keyspace, target.meta.name, names, types,
                                       f"{LABEL} {target.name} on Spark", evaluator_settings)
    reading = Reading("all", "on Spark", time.monotonic() - started)
    return Report(target.name, str(target.cqltype), description, reading, stmt.where,
                  lambda place: shell_run.decode_place(target, place.name))
