"""`cqlsh_ext`, a Spark 4 Python data source (pyspark.sql.datasource, pyspark 4.1 and later): a
table read as the Python API reads it, by token ranges, in Spark's Python workers, with no JVM
connector (docs/spark.md, "Spark 4").

    from cqlsh_ext.spark.datasource import register
    register(spark)
    frame = (spark.read.format("cqlsh_ext").option("table", "shop.orders")
             .option("columns", "id, data.status, data.amount").option("host", "10.0.0.5")
             .option("credentials", "/home/me/.cassandra/credentials").load())
    frame.filter(frame["`data.status`"] == "PAID").count()

- The schema is the API's answer's (db.query(...).schema: a blob column's six columns, a path's
  value and its note), read once from the statement's leading sample when the frame is made.
- The partitions: the token ring cut as the Spark Cassandra Connector cuts it, by the table's size
  in system.size_estimates over `split_size_mb` (512), at least `min_partitions` (1 + 2 x Spark's
  default parallelism, as the connector; `register` reads it) or exactly `partitions`; each
  partition is an API partition (api.partitions), planned with the schema when the frame is made
  (a read with pushed filters plans its own), read by cqlsh_ext.read_partition on a connection
  its Python worker keeps: the same reading db.query does, the native core's Arrow batches.
- pushFilters: a comparison of a path's column (or of a field of a blob's payload struct) with
  literals (=, <>, <, <=, >, >=, IN) becomes a payload condition of the statement read
  (api.conditions: the kinds where it keeps every row Spark's comparison keeps; floats stay
  Spark's, whose NaN is greater than any number), and is applied again to each batch as Spark
  compares; `explain("formatted")` shows them as PushedFilters. Only on a Spark whose scans keep
  their own reads (scans_own_their_reads): Spark 4.1 to 4.3 read a frame's later queries with
  the read planned for its last pushed filters, and there the reader takes none. Python data
  sources take pushed filters only with spark.sql.python.filterPushdown.enabled on: `register`
  turns it on.
- `blobs` = `stored`: the table's columns with each blob as its stored bytes, undecoded, as the
  connector gives them: what `cqlsh-ext spark`'s statements read on Spark 4 (rows.read_table).

Connection options are cqlsh_ext.connect's: host, port, username, password, credentials,
keyspace, amazon_keyspaces, decode, cqlshrc, dictionaries (paths, comma-separated); each Python
worker connects with them (a credentials file must exist where the workers run).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pyspark.sql.datasource import (
    DataSource,
    DataSourceReader,
    EqualTo,
    GreaterThan,
    GreaterThanOrEqual,
    In,
    InputPartition,
    LessThan,
    LessThanOrEqual,
    Not,
)

from cqlsh_ext.api.errors import Error
from cqlsh_ext.spark.datasource_arrow import Pushed

NAME = "cqlsh_ext"
#: Spark's setting without which a Python data source that takes filters is refused.
PUSHDOWN = "spark.sql.python.filterPushdown.enabled"
#: The connector's spark.cassandra.input.split.sizeInMB: about this much data a partition.
SPLIT_SIZE_MB = 512.0
#: The most partitions a read is cut into (a task each, all planned on Spark's driver at once;
#: 5 TB of a table at the default split size): `partitions` and `min_partitions` above it are
#: refused, as is a `split_size_mb` that cuts the table into more; the default split size grows.
MAX_PARTITIONS = 10_000
#: cqlsh_ext.connect's arguments, as options.
CONNECT_OPTIONS = ("host", "port", "username", "password", "credentials", "keyspace", "amazon_keyspaces",
                   "decode", "cqlshrc", "dictionaries")
READ_OPTIONS = ("table", "path", "columns", "where", "partitions", "split_size_mb", "min_partitions", "blobs")
BLOBS = ("decoded", "stored")


def register(spark: Any, arguments: Sequence[str] | None = None) -> None:
    """Register the data source with `spark` (classic or Connect), pushed filters turned on, the
    partitions' floor this session's (1 + 2 x its default parallelism, the connector's);
    `arguments`: the connection as cqlsh-ext's command line gives it (cqlsh-ext spark's own), for
    every read that names no connection option."""
    spark.conf.set(PUSHDOWN, "true")
    try:
        context = spark.sparkContext
        parallelism = int(context.defaultParallelism)
    except Exception:  # Spark Connect: no SparkContext here
        context, parallelism = None, 1
    source = source_class(1 + 2 * parallelism, arguments, scans_own_their_reads(spark))
    python = None if context is None else workers_python(context)
    if python is None:
        spark.dataSource.register(source)
        return
    spark_default, context.pythonExec = context.pythonExec, python  # what the registration carries
    try:
        spark.dataSource.register(source)
    finally:
        context.pythonExec = spark_default


def workers_python(context: Any) -> str | None:
    """The interpreter the source's Python workers run on a local master, where it is not Spark's
    choice: this one (as `cqlsh-ext spark`'s executors), when nobody chose (PYSPARK_PYTHON unset:
    Spark's `python3` from the PATH, which need not have cqlsh_ext: ModuleNotFoundError in the
    workers). An interpreter chosen is kept, and one without cqlsh_ext refused in one line, naming
    PYSPARK_PYTHON. On a cluster, Spark's choice stands (the executors are other machines, where
    this interpreter need not be: docs/spark.md, "On a cluster")."""
    import os
    import subprocess
    import sys

    if not str(context.master).startswith("local"):
        return None
    chosen = context.pythonExec
    if not os.environ.get("PYSPARK_PYTHON") and chosen == "python3":
        return sys.executable
    if chosen == sys.executable:  # (this one has cqlsh_ext: it runs it)
        return None
    finds = "import importlib.util as u, sys; sys.exit(u.find_spec('cqlsh_ext') is None)"
    try:
        found = subprocess.run([chosen, "-c", finds], capture_output=True, timeout=60).returncode == 0
    except (OSError, subprocess.SubprocessError):
        found = False
    if not found:
        raise Error(f"{NAME}: Spark's Python workers run {chosen!r} (PYSPARK_PYTHON), which has no "
                    f"cqlsh_ext: set PYSPARK_PYTHON to one that has ({sys.executable!r} has) before the "
                    "Spark session starts")
    return None


def source_class(min_partitions: int, arguments: Sequence[str] | None = None,
                 takes_filters: bool = False) -> type[CqlshExtSource]:
    """The data source with `min_partitions` as its floor, `arguments` as its connection, taking
    pushed filters or not (a class of its own: Spark pickles the registered class, by value, to
    each Python worker)."""
    return type("CqlshExtSource", (CqlshExtSource,), {
        "min_partitions": min_partitions, "arguments": None if arguments is None else tuple(arguments),
        "takes_filters": takes_filters, "__module__": __name__})


#: Spark's builder of a Python data source's scan (org.apache.spark.sql.execution.datasources.v2.python).
_SCAN_BUILDER = "org.apache.spark.sql.execution.datasources.v2.python.PythonScanBuilder"


def scans_own_their_reads(spark: Any) -> bool:
    """Whether this Spark keeps the read it plans with a scan's pushed filters (the reader's
    partitions and read function) to that scan. Spark 4.1 to 4.3 keep it on the frame's source
    instead (PythonDataSourceV2.setReadInfo), and every later scan of the frame that hands the source
    no filter, and each side of a join, reads with it: a reader that took filters would make
    `df.count()` after `df.filter(...).count()` the filtered count. A scan builder that holds its
    own read info (apache/spark after 4.3) is the fix; unknown (Spark Connect: no JVM here): no."""
    try:
        builder = spark._jvm.java.lang.Class.forName(_SCAN_BUILDER)
        return any(field.getName() == "readInfo" for field in builder.getDeclaredFields())
    except Exception:
        return False


@dataclass(frozen=True)
class SourceOptions:
    """What the options ask: the statement's parts, the connection, the partitions."""

    #: The table's keyspace (None: the connection's) and name, as the schema spells them.
    keyspace: str | None
    table: str
    columns: str
    where: str | None
    connect: dict[str, Any]
    #: cqlsh-ext's command-line arguments instead of `connect` (register's).
    arguments: tuple[str, ...] | None
    partitions: int | None
    #: None: the default (SPLIT_SIZE_MB, grown to keep within MAX_PARTITIONS).
    split_size_mb: float | None
    min_partitions: int
    stored: bool

    def statement(self, pushed: Sequence[Pushed] = ()) -> tuple[str, list[Any] | None]:
        """The SELECT read, with the pushed filters' payload conditions (their values bound)."""
        from cqlsh_ext.cql.spelling import spell

        conditions = ([self.where] if self.where else []) + [p.condition for p in pushed]
        table = spell(self.table) if self.keyspace is None else f"{spell(self.keyspace)}.{spell(self.table)}"
        text = f"SELECT {self.columns} FROM {table}"
        if conditions:
            text += " WHERE " + " AND ".join(conditions) + " ALLOW FILTERING"
        params = [v for p in pushed for v in p.bound]
        return text, params or None


def source_options(options: Mapping[str, str], min_partitions: int,
                   arguments: tuple[str, ...] | None = None) -> SourceOptions:
    """The options read (Spark gives them as strings), each within its range, or Error with one
    line, before anything is read; `arguments`: the registered connection, for options that name
    none."""
    given = {key.lower(): value for key, value in options.items()}
    unknown = sorted(set(given) - set(CONNECT_OPTIONS) - set(READ_OPTIONS))
    if unknown:
        known = ", ".join(READ_OPTIONS + CONNECT_OPTIONS)
        raise Error(f"{NAME}: unknown option {_shown(unknown[0])} (options: {known})")
    named = given.get("table") or given.get("path")
    if not named:
        raise Error(f"{NAME}: name the table: .option(\"table\", \"keyspace.table\")")
    keyspace, table = _table_name(named)
    blobs = given.get("blobs", "decoded").lower()
    if blobs not in BLOBS:
        raise Error(f"{NAME}: blobs takes {' or '.join(BLOBS)}, not {_shown(blobs)}")
    connect: dict[str, Any] = {k: given[k] for k in CONNECT_OPTIONS if given.get(k)}
    if "port" in connect:
        connect["port"] = _whole(connect["port"], "port", 65535)
    if "dictionaries" in connect:
        connect["dictionaries"] = [p.strip() for p in connect["dictionaries"].split(",") if p.strip()]
    if connect or arguments is None:
        arguments = None
    elif blobs == "stored":
        arguments = (*arguments, "-d", "none")
    if blobs == "stored":
        connect["decode"] = "none"  # the stored bytes only: nothing decoded
    parts, split = given.get("partitions"), given.get("split_size_mb")
    return SourceOptions(
        keyspace=keyspace, table=table, columns=_clauseless(given.get("columns") or "*", "columns"),
        where=_clauseless(given["where"], "where") if given.get("where") else None,
        connect=connect, arguments=arguments,
        partitions=None if parts is None else _whole(parts, "partitions", MAX_PARTITIONS),
        split_size_mb=None if split is None else _split_size(split),
        min_partitions=_whole(given.get("min_partitions", min_partitions), "min_partitions", MAX_PARTITIONS),
        stored=blobs == "stored")


def _shown(text: str) -> str:
    """An option's text as a message quotes it: escaped, on one line, cut."""
    from cqlsh_ext.common.text import shorten

    return shorten(repr(text), 60)


def _tokens(text: str, option: str) -> list[Any]:
    """The option's CQL tokens (comments are space), the end token left out."""
    from cqlsh_ext.cql.errors import QueryError
    from cqlsh_ext.cql.lexer import tokenize

    try:
        return tokenize(text)[:-1]
    except QueryError as err:
        raise Error(f"{NAME}: {option} {_shown(text)}: {err}") from None


def _table_name(text: str) -> tuple[str | None, str]:
    """`keyspace.table`, or `table`, as CQL names them (a plain name in lower case, a quoted one
    as written): names only, never more of a statement."""
    tokens = _tokens(text, "table")
    names, dots = tokens[::2], tokens[1::2]
    if len(tokens) not in (1, 3) or any(t.kind not in ("word", "qname") for t in names) \
            or any(t.value != "." for t in dots):
        raise Error(f"{NAME}: table takes keyspace.table (CQL names), not {_shown(text)}")
    spelt = [t.name for t in names]
    return (None, spelt[0]) if len(spelt) == 1 else (spelt[0], spelt[1])


def _clauseless(text: str, option: str) -> str:
    """`columns` (or `where`) as given, when it is that part of the statement only: no FROM (a
    reserved word, never a column's name unquoted) and no `;`, so that the statement reads the
    table the `table` option names and nothing else (the statement's parser checks the rest
    against the table's schema)."""
    for token in _tokens(text, option):
        if (token.kind, token.value.lower()) in (("word", "from"), ("punct", ";")):
            what = "the table's columns and payload paths" if option == "columns" else "conditions"
            raise Error(f"{NAME}: {option} takes {what} (the table option names the table), "
                        f"not {_shown(text)}")
    return text


def _whole(text: Any, name: str, most: int) -> int:
    try:
        value = int(text)
    except (TypeError, ValueError):
        value = 0
    if not 0 < value <= most:
        raise Error(f"{NAME}: {name} takes a whole number from 1 to {most:,}, not {_shown(str(text))}")
    return value


def _split_size(text: str) -> float:
    try:
        value = float(text)
    except (TypeError, ValueError):
        value = math.nan
    if not 0 < value < math.inf:  # (NaN compares false)
        raise Error(f"{NAME}: split_size_mb takes a positive number of megabytes, not {_shown(text)}")
    return value


@dataclass(frozen=True)
class Planned:
    """The statement's answer as the schema was read for it: its columns (name, role, source: a
    path as written), their Arrow kinds, the API's Arrow schema; the stored columns' where asked;
    the table (keyspace, name), whose size cuts the partitions."""

    columns: tuple[tuple[str, str, str | None], ...]
    kinds: tuple[Any, ...]
    arrow: Any
    stored: Any
    keyspace: str
    table: str
    #: How many partitions each read is cut into (partition_count).
    count: int
    #: The statement's partitions without pushed filters (api.partitions.Partition), planned with
    #: the schema on its connection: a read that takes no filter needs no connection of its own
    #: to plan (Spark plans each in a Python worker of its own).
    parts: tuple[Any, ...] = ()

    @property
    def spark_arrow(self) -> Any:
        """The Arrow schema of what Spark is given (the stored columns', or the API's)."""
        return self.arrow if self.stored is None else self.stored.schema(self.arrow)


_DATABASES: dict[tuple[Any, ...], Any] = {}


def database(options: SourceOptions) -> Any:
    """This process's connection with the options' arguments (a Python worker reads many
    partitions, one after another: connected once)."""
    from cqlsh_ext.api import connect
    from cqlsh_ext.api.database import connect_with

    key: tuple[Any, ...] = options.arguments or tuple(sorted((k, tuple(v) if isinstance(v, list) else v)
                                            for k, v in options.connect.items()))
    db = _DATABASES.get(key)
    if db is None or db.cluster.is_shutdown:
        db = connect_with(options.arguments) if options.arguments else connect(**options.connect)
        _DATABASES[key] = db
    return db


def planned(options: SourceOptions) -> Planned:
    """The statement planned on its table, its kinds read from its leading sample."""
    from cqlsh_ext.api.call import Call
    from cqlsh_ext.api.partitions import partitions
    from cqlsh_ext.spark.datasource_arrow import stored_columns

    db = database(options)
    statement, _ = options.statement()
    _lexed, plan, target = db._plain_plan(statement, NAME)
    if (target.keyspace if options.keyspace is None else options.keyspace, options.table) != \
            (target.keyspace, target.name):  # (what _clauseless keeps out: never read another table)
        raise Error(f"{NAME}: the statement reads {target.keyspace}.{target.name}, not the table named")
    if plan.aggregates or plan.group_by or plan.order_by or plan.distinct or plan.limit is not None:
        raise Error(f"{NAME}: a source reads rows; aggregate, group, sort and limit them in Spark")
    paths = plan.predicates or any(item.kind not in ("star", "column") for item in plan.items)
    if options.stored and paths:
        raise Error(f"{NAME}: blobs=stored reads the table's columns as stored: no payload path or condition")
    with db._answer(statement, None, Call(), plain=True) as sample:
        kinds = sample._kinds()
        arrow = sample.schema
        columns = list(sample._typed.fixed())
    stored = stored_columns(columns, arrow) if options.stored else None
    count = partition_count(db, options, target.keyspace, target.name)
    parts = tuple(partitions(db, statement, count, None, kinds=kinds))
    return Planned(tuple((c.name, c.role, c.source) for c in columns), kinds, arrow, stored,
                   target.keyspace, target.name, count, parts)


class CqlshExtSource(DataSource):
    """See the module doc."""

    #: The partitions' floor (register: the session's).
    min_partitions = 1
    #: The connection as cqlsh-ext's command line gives it (register's), for options naming none.
    arguments: tuple[str, ...] | None = None
    #: Whether the reader takes the filters Spark pushes (register: scans_own_their_reads).
    takes_filters = False

    @classmethod
    def name(cls) -> str:
        return NAME

    def _planned(self) -> tuple[SourceOptions, Planned]:
        options = source_options(self.options, self.min_partitions, self.arguments)
        found = getattr(self, "_plan", None)
        if found is None:
            found = self._plan = planned(options)
        return options, found

    def schema(self) -> Any:
        from cqlsh_ext.spark.datasource_arrow import spark_schema

        return spark_schema(self._planned()[1].spark_arrow)

    def reader(self, schema: Any) -> DataSourceReader:
        from cqlsh_ext.spark.datasource_arrow import spark_schema

        options, plan = self._planned()
        if schema != spark_schema(plan.spark_arrow):
            raise Error(f"{NAME}: the schema is the answer's (read from its leading sample): "
                        "leave .schema() out")
        return TokenRangeReader(options, plan, schema, self.takes_filters)


@dataclass
class TokenRanges(InputPartition):
    """One partition: an API partition (api.partitions.Partition: token ranges of the statement)."""

    part: Any


class TokenRangeReader(DataSourceReader):
    def __init__(self, options: SourceOptions, plan: Planned, schema: Any, takes_filters: bool) -> None:
        self.options = options
        self.plan = plan
        self.schema = schema
        self.takes_filters = takes_filters and plan.stored is None
        self.pushed: list[Pushed] = []

    def pushFilters(self, filters: list[Any]) -> Iterable[Any]:  # noqa: N802 - Spark's name
        for spark_filter in filters:
            taken = pushed(spark_filter, self.plan) if self.takes_filters else None
            if taken is None:
                yield spark_filter
            else:
                self.pushed.append(taken)

    def __getstate__(self) -> dict[str, Any]:
        """What Spark pickles into every task's read function: the planned partitions left out
        (each task is handed its own)."""
        from dataclasses import replace

        return {**self.__dict__, "plan": replace(self.plan, parts=())}

    def partitions(self) -> list[TokenRanges]:
        from cqlsh_ext.api.partitions import partitions

        if not self.pushed and self.plan.parts:
            return [TokenRanges(part) for part in self.plan.parts]
        db = database(self.options)
        statement, params = self.options.statement(self.pushed)
        return [TokenRanges(part) for part in
                partitions(db, statement, self.plan.count, params, kinds=self.plan.kinds)]

    def read(self, partition: TokenRanges) -> Iterator[Any]:
        from pyspark.sql.pandas.types import to_arrow_schema

        from cqlsh_ext.api import read_partition
        from cqlsh_ext.spark.datasource_arrow import kept, spark_batch

        to_arrow: Any = to_arrow_schema  # (pyspark 4's: mypy may see 3.5's)
        target = to_arrow(self.schema, timezone="UTC")  # what Spark checks each batch against
        with read_partition(partition.part, database(self.options)) as answer:
            for batch in answer.to_reader():
                batch = kept(batch, self.pushed)
                if self.plan.stored is not None:
                    batch = self.plan.stored.batch(batch)
                if batch.num_rows:
                    yield spark_batch(batch, target)


def partition_count(db: Any, options: SourceOptions, keyspace: str, table: str) -> int:
    """The connector's rule: the table's estimated size (system.size_estimates, scaled to the
    whole ring) over the split size, at least the floor; `partitions` when given. Never more than
    MAX_PARTITIONS: a split size asked that cuts the table into more is refused (naming the
    smallest that does not), the default grows."""
    if options.partitions is not None:
        return options.partitions
    from cqlsh_ext.scanning.ring import RingError, ring_for, server_partitioner
    from cqlsh_ext.scanning.scan import table_size

    try:
        span: int | None = ring_for(server_partitioner(db.session)).span
    except RingError:
        span = None
    size = table_size(db.session, keyspace, table, span)
    megabytes = size.bytes / 2 ** 20 if size is not None else 0.0
    split = SPLIT_SIZE_MB if options.split_size_mb is None else options.split_size_mb
    by_size = math.ceil(megabytes / split)
    if by_size > MAX_PARTITIONS:
        if options.split_size_mb is not None:
            raise Error(f"{NAME}: split_size_mb {split:g} cuts {keyspace}.{table} (about {megabytes:.3g} MB "
                        f"by the server's estimate) into more than {MAX_PARTITIONS:,} partitions: take "
                        f"at least {megabytes / MAX_PARTITIONS:.3g}")
        by_size = MAX_PARTITIONS
    return max(options.min_partitions, by_size, 1)


_OPS = {EqualTo: "=", GreaterThan: ">", GreaterThanOrEqual: ">=", LessThan: "<", LessThanOrEqual: "<=",
        In: "IN"}


def pushed(spark_filter: Any, plan: Planned) -> Pushed | None:
    """The payload condition a filter Spark hands over becomes (None: it stays Spark's): a
    comparison of a path's column, or of a field inside a blob's payload struct, with literals
    of its kind (floats excepted)."""
    from cqlsh_ext.api.conditions import path_condition
    from cqlsh_ext.payload.arrow_types import Float, arrow_type
    from cqlsh_ext.spark.datasource_arrow import comparable

    if isinstance(spark_filter, Not) and isinstance(spark_filter.child, EqualTo):
        attribute, op, values = spark_filter.child.attribute, "!=", (spark_filter.child.value,)
    elif type(spark_filter) in _OPS:
        op = _OPS[type(spark_filter)]
        attribute = spark_filter.attribute
        values = tuple(spark_filter.value) if op == "IN" else (spark_filter.value,)
    else:
        return None
    found = _path_at(tuple(attribute), plan)
    if found is None or not values or any(v is None for v in values):
        return None  # (a null compares to nothing, and Spark's IN (1, NULL) is null for any other value)
    path, kind = found
    if isinstance(kind, Float) or not comparable(arrow_type(kind, storage=True), values):
        return None
    condition = path_condition(kind, path, op, values)
    if condition is None:
        return None
    return Pushed(tuple(attribute), op, values, condition.text, condition.values)


def _path_at(attribute: tuple[str, ...], plan: Planned) -> tuple[str, Any] | None:
    """The payload path a filter's column names, and its kind: a path's column, or a blob
    column's payload struct and the fields inside it (plain names only)."""
    import re

    from cqlsh_ext.payload.arrow_types import Struct
    from cqlsh_ext.payload.columns import BLOB, PATH

    named = [i for i, (name, _role, _source) in enumerate(plan.columns) if name == attribute[0]]
    if len(named) != 1:
        return None
    _name, role, source = plan.columns[named[0]]
    kind = plan.kinds[named[0]]
    if role == PATH and len(attribute) == 1:
        return (source, kind) if source is not None else None
    plain = re.compile(r"[a-z_][a-z0-9_]*")
    if role != BLOB or len(attribute) < 2 or not all(plain.fullmatch(step) for step in attribute):
        return None
    for step in attribute[1:]:
        fields = dict(kind.fields) if isinstance(kind, Struct) and not kind.cql else {}
        if step not in fields:
            return None
        kind = fields[step]
    return ".".join(attribute), kind
