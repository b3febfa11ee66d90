"""Running DESCRIBE PAYLOAD, `describe(ctx, statement)` (the shell's command module prints its
answer): the column named, the WHERE read as a payload query's, the reading chosen
(`reading_for`: the statement's SAMPLE n or ALL, else the table's estimated size), the rows read
into a Description, the report's answer.

- ALL, and the default for a table a full read is cheap for: the whole-table plan
  (scanning.plan.whole_table: the cost asked first on Amazon Keyspaces and from 1 GB, worker
  processes from 16 MiB, token-range streams below; progress, retries, Ctrl-C keeps what was read);
- SAMPLE n, and the default for a larger table or on Amazon Keyspaces: random token-range slices
  until n rows are read (scanning.sample), every share with its 95 % interval;
- a WHERE with conditions on columns (a partition key, say): the rows the server returns, read
  as one stream, as a payload query reads them.

The WHERE's payload conditions are evaluated by a payload query's evaluator, page by page, in
whichever process reads the rows. What the report found is offered to key completion for the
rest of the session (payload_select.keys.learn).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from cqlsh_ext.describe.parse import LABEL, DescribeError, DescribeStatement

if TYPE_CHECKING:
    from cqlsh_ext.describe.description import Description
    from cqlsh_ext.payload.places import ValuePlace
    from cqlsh_ext.query.grammar import Plan, Schema
    from cqlsh_ext.reading.context import ReadContext
    from cqlsh_ext.reading.typed import ReportAnswer
    from cqlsh_ext.scanning.scan import TableSize

#: A table whose whole read is estimated at no more than this is read whole by default.
FULL_READ_BYTES = 64 << 20
#: Without a size estimate, a table of at most this many partitions (probed) is read whole.
FULL_READ_PARTITIONS = 20_000
#: Rows a default sample reads.
SAMPLE_ROWS = 10_000


@dataclass(frozen=True)
class Target:
    """The column described: its table (the driver's metadata), type and the query reading it."""

    keyspace: str
    meta: Any
    column: str
    cqltype: Any
    schema: Schema
    #: The whole-table SELECT of the column and the columns the WHERE's payload conditions read.
    query: str
    #: The WHERE as a payload query's plan (None without a WHERE).
    plan: Plan | None

    @property
    def name(self) -> str:
        return f"{self.keyspace}.{self.meta.name}.{self.column}"

    @property
    def place(self) -> ValuePlace:
        """The column's place (column settings match on it and on the places below it)."""
        from cqlsh_ext.payload.places import ValuePlace

        return ValuePlace(self.keyspace, self.meta.name, self.column)


@dataclass(frozen=True)
class Choice:
    """How the rows are read: "all", "sample" (`rows` of them) or "named"; `why`, as the report's
    first line says it."""

    mode: str
    why: str
    rows: int | None = None


def describe(ctx: ReadContext, statement: DescribeStatement) -> ReportAnswer | None:
    """The report's answer: its figures as data, its text laid out on demand; None when nothing
    was read (ctx.error said why). A reading stopped (Ctrl-C, the context's stop) keeps what it
    read, and says so."""
    try:
        target = resolve(ctx, statement)
        choice = reading_for(ctx, target, statement)
    except DescribeError as err:
        ctx.error(f"{LABEL}: {err}")
        return None
    from cqlsh_ext.describe.description import Description

    description = Description(target.query, target.column, ctx.decoding(), target.place,
                              _evaluator(ctx, target))
    started = time.monotonic()
    try:
        if choice.mode == "sample":
            sample = _read_sample(ctx, target, description, choice, statement)
        else:
            sample = None
            if not _read_exactly(ctx, target, description, choice, statement):
                return None
    except DescribeError as err:
        ctx.error(f"{LABEL}: {err}")
        return None
    from cqlsh_ext.describe.report import Reading, Report
    from cqlsh_ext.reading.typed import FAILED, INTERRUPTED, ReportAnswer

    reading = Reading(choice.mode, choice.why, time.monotonic() - started, sample, description.retried)
    if description.error and not description.read:
        ctx.error(f"{LABEL}: {description.error}")
        return None
    report = Report(target.name, str(target.cqltype), description, reading,
                    statement.where, lambda place: decode_place(target, place.name))
    _learn_keys(ctx, target, description)
    stopped = FAILED if description.error else INTERRUPTED if description.interrupted else None
    return ReportAnswer(f"DESCRIBE PAYLOAD {target.name}", report.to_json,
                        lambda width, _blocks: list(report.render(width)), stopped)


# ---------------------------------------------------------------------- what is described

def resolve(ctx: ReadContext, statement: DescribeStatement) -> Target:
    """The column named, its table and the reading's query; DescribeError (one line) otherwise."""
    from cqlsh_ext.cql.errors import QueryError
    from cqlsh_ext.query.grammar import parse, quote
    from cqlsh_ext.reading.resolve import find_table

    keyspace = statement.keyspace or ctx.keyspace
    if not statement.column:
        raise DescribeError(_no_column(ctx, statement, None, statement.table))
    found = find_table(ctx.cluster, keyspace, keyspace, statement.table, refresh=True) if keyspace else None
    if found is None and statement.keyspace is None and \
            find_table(ctx.cluster, None, statement.table, statement.column) is not None:  # keyspace.table
        raise DescribeError(_no_column(ctx, statement, statement.table, statement.column))
    if not keyspace:
        raise DescribeError(f"name the column as keyspace.table.column (or USE a keyspace first): "
                            f"{statement.table}.{statement.column}")
    if found is None:
        raise DescribeError(f"table {keyspace}.{statement.table} not found")
    meta, schema = found.meta, found.schema
    cqltype = schema.type_of(statement.column)
    table = f"{keyspace}.{meta.name}"
    if cqltype is None:
        raise DescribeError(f"{table} has no column {statement.column}{_payload_columns(schema)}")
    if not (cqltype.holds() or cqltype.is_text):
        raise DescribeError(f"{statement.column} is {cqltype}: DESCRIBE PAYLOAD describes a blob column "
                            "(or a map, list, tuple or UDT holding blobs) or a text column"
                            f"{_payload_columns(schema)}")
    if ctx.display.mode == "none" and not cqltype.is_text:
        raise DescribeError("decoding is off (-d none): nothing would be decoded")
    select = f"SELECT {quote(statement.column)} FROM {quote(keyspace)}.{quote(meta.name)}"
    plan = None
    query = select
    if statement.where is not None:
        try:
            plan = parse(f"{select} WHERE {statement.where} ALLOW FILTERING", schema, plain=True)
        except QueryError as err:
            raise DescribeError(f"WHERE: {err}") from None
        assert plan is not None  # plain: every SELECT has a plan
        query = plan.server_statement
        if not plan.server_where:  # the whole table: scanning adds the token ranges
            query = query.removesuffix(" ALLOW FILTERING")
    return Target(keyspace, meta, statement.column, cqltype, schema, query, plan)


def _no_column(ctx: ReadContext, statement: DescribeStatement, keyspace: str | None, table: str) -> str:
    """What a statement that names a table and no column is told: the statement's form (as its
    request carries it), and an example on that table with one of its payload columns when the
    table is known."""
    from cqlsh_ext.reading.resolve import find_table

    named = f"{keyspace}.{table}" if keyspace else table
    found = find_table(ctx.cluster, ctx.keyspace, keyspace, table)
    if found is None:
        return f"{named} names no column: {statement.form}, e.g. {statement.example}"
    schema = found.schema
    columns = _payload_columns(schema)
    payload = [name for name in schema.columns
               if (t := schema.type_of(name)) is not None and t.holds()] or ["column"]
    return (f"{named} names no column: DESCRIBE PAYLOAD {named}.{payload[0]} describes one{columns}; "
            f"in full: {statement.form}")


def _payload_columns(schema: Schema) -> str:
    names = [name for name in schema.columns
             if (t := schema.type_of(name)) is not None and (t.holds() or t.is_text)]
    return f" (its payload columns: {', '.join(names)})" if names else ""


def _evaluator(ctx: ReadContext, target: Target) -> Any:
    """The WHERE's payload conditions as a payload query evaluates them, or None."""
    plan = target.plan
    if plan is None or not plan.predicates:
        return None
    from cqlsh_ext.query.evaluate import Evaluator

    return Evaluator(plan, ctx.decoding(), target.keyspace)


def decode_place(target: Target, place: str) -> str:
    """Where DECODE sets a place's reading: 'ks.t.data', 'ks.t.m.value' (a map's values),
    'ks.t.u.payload' (a UDT's field), 'ks.t.l.item'."""
    base = target.name
    rest = place[len(target.column):]
    if not rest:
        return base
    if rest.startswith("."):
        return base + rest
    if rest.startswith("[]"):
        return base + ".item"
    return base + ".value" if target.cqltype.kind == "map" else base


# ---------------------------------------------------------------------- how much is read

def reading_for(ctx: ReadContext, target: Target, statement: DescribeStatement) -> Choice:
    """The reading: what the statement asks for, else chosen from the table's estimated size."""
    plan = target.plan
    if plan is not None and plan.server_where:
        if statement.sample is not None:
            raise DescribeError("SAMPLE reads random token ranges of the whole table: with conditions on "
                                f"columns ({plan.server_where}) the server finds the rows; leave SAMPLE out")
        return Choice("named", f"the WHERE names rows: {plan.server_where}")
    if statement.every_row:
        return Choice("all", "ALL")
    if statement.sample is not None:
        return Choice("sample", f"SAMPLE {statement.sample:,}", statement.sample)
    if ctx.keyspaces.active:
        return Choice("sample", f"on Amazon Keyspaces every row read costs read capacity: a sample of "
                      f"{SAMPLE_ROWS:,} rows; ALL reads every row", SAMPLE_ROWS)
    size, basis = _estimated_size(ctx, target)
    if size is None:
        return Choice("all", "no size estimate for the table: every row; SAMPLE n reads a sample")
    from cqlsh_ext.common.text import plural

    if isinstance(size, int):  # partitions, probed
        if size <= FULL_READ_PARTITIONS:
            return Choice("all", f"the table is small: about {plural(size, 'partition')}, {basis}; "
                          "SAMPLE n reads a sample")
        return Choice("sample", f"the table holds about {plural(size, 'partition')}, {basis}: a sample of "
                      f"{SAMPLE_ROWS:,} rows; ALL reads every row", SAMPLE_ROWS)
    from cqlsh_ext.common.units import human_size

    if size.bytes <= FULL_READ_BYTES:
        return Choice("all", f"the table is small: about {human_size(size.bytes)}, {basis}; "
                      "SAMPLE n reads a sample")
    return Choice("sample", f"the table is about {human_size(size.bytes)}, {basis}: a sample of "
                  f"{SAMPLE_ROWS:,} rows; ALL reads every row", SAMPLE_ROWS)


def _estimated_size(ctx: ReadContext, target: Target) -> tuple[TableSize | int | None, str]:
    """The server's size estimate, else the partitions counted after a few random tokens."""
    import random

    from cqlsh_ext.scanning.ring import RingError, ring_for, server_partitioner
    from cqlsh_ext.scanning.sample import PROBED, SERVER_ESTIMATE, probe_partitions
    from cqlsh_ext.scanning.scan import table_size

    try:
        ring = ring_for(server_partitioner(ctx.session))
    except RingError:
        return None, ""
    size = table_size(ctx.session, target.keyspace, target.meta.name, ring.span)
    if size is not None:
        return size, SERVER_ESTIMATE
    partitions = probe_partitions(ctx.session, ring, target.keyspace, target.meta.name,
                                  [c.name for c in target.meta.partition_key], random.Random(), ctx.timeout,
                                  ctx.stop)
    return partitions, PROBED


# ---------------------------------------------------------------------- reading

def _read_exactly(ctx: ReadContext, target: Target, description: Description, choice: Choice,
                  statement: DescribeStatement) -> bool:
    """Every row (the whole-table plan) or the rows the WHERE names (one stream); False when the
    cost was not accepted (said why)."""
    from cqlsh_ext.scanning.plan import FullScanQuestion, ReadPlan, whole_table

    label = f"{LABEL} {target.name}"
    if choice.mode == "named":
        plan = ReadPlan(target.query)
    else:
        ask = FullScanQuestion(
            LABEL, "Add CONFIRM after ALL to run it from a script (confirm: true over MCP and the Python "
            "API), or describe a sample: SAMPLE n instead of ALL.",
            "Read every row of the table? (SAMPLE n reads a sample) [y/N] ", statement.confirm)
        found = whole_table(ctx, target.query, target.meta, ask)
        if found is None:
            return False
        plan = found
    progress = ctx.progress(label, True, plan.size.partitions if plan.size is not None else None)
    scan = plan.read(ctx, description, progress, accept=None)
    for _ in scan:
        if ctx.stop.is_set():
            scan.stop()
            description.interrupted = True
    description.retried = scan.retried
    return True


def _read_sample(ctx: ReadContext, target: Target, description: Description, choice: Choice,
                 statement: DescribeStatement) -> Any:
    """Random token-range slices until `choice.rows` rows are read (scanning.sample); the sampler,
    whose slices give the shares' intervals."""
    from cqlsh_ext.scanning.ring import RingError
    from cqlsh_ext.scanning.sample import SamplePlan, SliceSampler
    from cqlsh_ext.scanning.scan import error_text, scanner_for

    partition_key = [c.name for c in target.meta.partition_key]
    plan = SamplePlan(rows=choice.rows, seed=statement.seed)
    try:
        sampler = SliceSampler.of_table(ctx.session, description, plan, target.keyspace, target.meta.name,
                                        partition_key)
    except RingError as err:
        raise DescribeError(f"cannot sample: {err}; ALL reads every row") from None
    progress = ctx.progress(f"{LABEL} {target.name} SAMPLE", True, None)
    if progress is not None:
        progress.detail = lambda: f"{len(sampler.done):,} slices"
    spec = sampler.spec(target.query, partition_key)
    scanner = scanner_for(ctx, spec, progress)
    scanner.pages_in = description.pages_in  # the server's pages, read by the core (scanning.pages_in)
    sampler.read(scanner, stop=ctx.stop)
    description.interrupted = description.interrupted or scanner.interrupted
    description.scan = f"{spec.streams} parallel streams"
    description.retried = scanner.retried
    if scanner.error is not None:
        description.error = error_text(scanner.error)
    return sampler


# ---------------------------------------------------------------------- after

def _learn_keys(ctx: ReadContext, target: Target, description: Description) -> None:
    """Key completion offers, for this column and this session, the keys the report found."""
    from cqlsh_ext.payload_select.keys import KeySample, learn

    sample = KeySample(rows=description.read)
    for place in description.places.values():
        reachable, spot = _completion_place(target, place.name)
        if reachable:
            _prefix_keys(place.structure.root, (), sample.keys.setdefault(spot, {}))
    learn(ctx.session, target.keyspace, target.meta.name, target.column, sample)


def _completion_place(target: Target, place: str) -> tuple[bool, str | None]:
    """How key completion names a place: None for the column itself, a map's key, a UDT's field;
    (False, None) for a place a path cannot reach (a list's blobs, a map's folded keys)."""
    rest = place[len(target.column):]
    if not rest:
        return True, None
    if rest.startswith(".") and "[" not in rest:
        return True, rest[1:]
    if rest.startswith("['") and rest.endswith("']"):
        return True, rest[2:-2].replace("''", "'")
    return False, None


def _prefix_keys(node: Any, prefix: tuple[Any, ...], keys: dict[tuple[Any, ...], set[str]]) -> None:
    """The keys below `node` by path prefix, as key completion keeps them (a list's elements:
    ANY_INDEX; a map's folded data keys are no keys to offer)."""
    from cqlsh_ext.payload_select.keys import ANY_INDEX

    if node.children:
        keys.setdefault(prefix, set()).update(node.children)
    for name, child in node.children.items():
        _prefix_keys(child, (*prefix, name), keys)
    if node.items is not None:
        _prefix_keys(node.items, (*prefix, ANY_INDEX), keys)
