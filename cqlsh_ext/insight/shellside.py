"""What the insight commands share: what a command reads (`target`: the SELECT or table it names,
how values decode, the scanner), in a reading's context (reading.context.ReadContext), and
whether its report is wanted as JSON. The services take typed requests (reading.read_requests),
built by their features' declared builders (insight/report_requests.py); the reports are
answers (reading.typed.ReportAnswer) that the shell's command module (insight/command.py) prints
(render.text_report) and `cqlsh-ext mcp` gives as data. Nothing here takes the shell."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from cqlsh_ext.scanning.scan import Progress, Scanner, ScanSpec, error_text, scanner_for

if TYPE_CHECKING:
    from cqlsh_ext.common.text import Line
    from cqlsh_ext.reading.context import ReadContext
    from cqlsh_ext.reading.read_requests import ReportTarget
    from cqlsh_ext.reading.resolve import TableTarget
    from cqlsh_ext.reading.typed import ReportAnswer


@dataclass(frozen=True)
class InsightTarget:
    """What an insight command reads: `query` (a whole-table SELECT when `whole_table`: it may be
    split into token ranges), its `limit`, the table it names (the driver's `meta`, or None), and
    how values decode (-d's `mode`, the output `cap`)."""

    query: str
    whole_table: bool
    limit: int | None
    keyspace: str | None
    table: str | None
    meta: Any
    mode: str
    cap: int

    def scanner(self, ctx: ReadContext, progress: Progress | None = None) -> Scanner:
        """The query read as one stream in this process, up to its LIMIT."""
        return scanner_for(ctx, ScanSpec(self.query, limit=self.limit), progress)


def target(ctx: ReadContext, request: ReportTarget, action: str, statement: str | None = None,
           statement_limit: int | None = None) -> InsightTarget | None:
    """What COMPRESSION `action` (or INSPECT) reads: `statement` when given (with its LIMIT), else
    the SELECT given, else the table's columns named (request.columns), or for a table named alone
    its payload columns (its blob columns, its text columns outside the primary key:
    cql.types.table_payload_columns), whole rows of it. None (said why) when such a table is
    unknown, or has none of those columns."""
    from cqlsh_ext.insight.view_measures import effective_mode

    ks, table, meta = named_table(ctx, request.keyspace, request.table, request.found)
    settings = ctx.display

    def read(text: str, whole: bool, limit: int | None) -> InsightTarget:
        return InsightTarget(text, whole, limit, ks, table, meta, effective_mode(settings.mode), settings.cap)

    if statement is not None:
        return read(statement, False, statement_limit)
    if request.select is not None:
        return read(request.select, request.whole_table, request.limit)
    if not ks or not table:
        ctx.error(f"COMPRESSION {action}: name a table as keyspace.table (or USE a keyspace first), "
                       f"e.g. COMPRESSION {action} ks.t;")
        return None
    if meta is None:
        ctx.error(f"COMPRESSION {action}: table {ks}.{table} not found")
        return None
    from cqlsh_ext.common.text import unknown
    from cqlsh_ext.cql.spelling import columns_select
    from cqlsh_ext.cql.types import table_payload_columns, udts_of

    if request.columns is not None:
        missing = [name for name in request.columns if name not in meta.columns]
        if missing:
            ctx.error(f"COMPRESSION {action}: "
                      + unknown("column", missing[0], list(meta.columns), within=f"{ks}.{table}"))
            return None
        return read(columns_select(ks, table, request.columns), True, None)
    columns = table_payload_columns(meta, udts_of(ctx.cluster.metadata.keyspaces.get(ks)))
    if not columns:
        ctx.error(f"COMPRESSION {action}: {ks}.{table} has no blob column and no text column "
                       "outside its primary key")
        return None
    return read(columns_select(ks, table, columns), True, None)


def named_table(ctx: ReadContext, keyspace: str | None, table: str | None,
                found: TableTarget | None = None) -> tuple[str | None, str | None, Any]:
    """(keyspace, table, table metadata or None) named (as the schema spells them; keyspace None:
    the context's); `found`: that table resolved already (taken as it is)."""
    from cqlsh_ext.reading.resolve import find_table

    ks = keyspace or ctx.keyspace
    meta = None
    if found is not None and (found.keyspace, found.name) == (ks, table):
        meta = found.meta if not found.view else None
    elif ks and table:
        found = find_table(ctx.cluster, ks, ks, table)
        meta = found.meta if found is not None and not found.view else None  # tables, not views
    return ks, table, meta


def report(title: str, to_json: Callable[[], Any], render: Callable[[], Sequence[Line]],
           stopped: str | None = None) -> ReportAnswer:
    """A report's answer: its figures (`to_json`) and its text (`render`'s blocks, fitted)."""
    from cqlsh_ext.reading.typed import ReportAnswer, fitted

    return ReportAnswer(title, to_json, fitted(render), stopped)


def failed(ctx: ReadContext, err: BaseException) -> None:
    ctx.error(error_text(err))

