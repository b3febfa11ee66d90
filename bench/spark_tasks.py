"""A Spark task's client CPU a row, in one process, without Spark: the connector's Arrow batches of
real stored blobs handed to the tasks' own functions (stats_job.scan_partition,
query_job.answer_partition, describe_job.describe_partition), against the same batches read as
the tasks read them before the core took Arrow's blob column (issue 63: every column made Python
values with `to_pylist`, zipped into the driver's row tuples, handed on as lists of rows).

    .venv/bin/python bench/spark_tasks.py --host 127.0.0.1 --port 29142 [--table orders]
        [--rows 50000] [--batch 10000] [--repeat 5] [--readers stats filter describe]

The blobs are read once from bench/readers.py's tables (keyspace bench_readers) and kept in
/tmp (an Arrow file); each round runs every reader both ways, interleaved, and takes the
process's CPU (getrusage: user + sys) around each run. Prints per reader the medians of the
rounds (with their spread: min-max) in microseconds a row, and the ratio new / old. The answers
of both ways are compared (the same Stats, Answer or Description figures), else it fails.
"""

from __future__ import annotations

import argparse
import pickle
import resource
import statistics
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

import pyarrow

KEYSPACE = "bench_readers"
FILTER = "SELECT pk, ck FROM t WHERE data.status = 'FAILED' ALLOW FILTERING"


def load(host: str, port: int, table: str, rows: int) -> Any:
    """The table's first `rows` rows (pk, ck, data) as one Arrow table, kept in /tmp."""
    kept = Path(f"/tmp/spark-tasks-{table}-{rows}.arrow")
    if kept.exists():
        with pyarrow.memory_map(str(kept)) as source:
            return pyarrow.ipc.open_file(source).read_all()
    from cassandra.auth import PlainTextAuthProvider
    from cassandra.cluster import Cluster
    from cassandra.query import SimpleStatement, tuple_factory

    cluster = Cluster([host], port=port, auth_provider=PlainTextAuthProvider("cassandra", "cassandra"))
    session = cluster.connect(KEYSPACE)
    session.row_factory = tuple_factory
    got = list(session.execute(SimpleStatement(f"SELECT pk, ck, data FROM {table} LIMIT {rows}",
                                               fetch_size=5000)))
    cluster.shutdown()
    pk_type = pyarrow.string() if isinstance(got[0][0], str) else pyarrow.int32()
    arrow = pyarrow.table([pyarrow.array([r[0] for r in got], pk_type), pyarrow.array([r[1] for r in got],
                                                                                       pyarrow.int32()),
                           pyarrow.array([r[2] for r in got], pyarrow.binary())], names=["pk", "ck", "data"])
    with pyarrow.OSFile(str(kept), "wb") as sink, pyarrow.ipc.new_file(sink, arrow.schema) as writer:
        writer.write_table(arrow)
    return arrow


class Sum:
    """A Spark accumulator's add(), in one process."""

    def __init__(self) -> None:
        self.value = 0

    def add(self, n: int) -> None:
        self.value += n


def old_rows(batches: Iterable[Any], names: Sequence[str], types: Sequence[Any]
             ) -> Iterator[list[tuple[Any, ...]]]:
    """The tasks' reading before (spark/rows.py's batch_rows and pages at 0f0d0e1 and before):
    every column to_pylist, zipped into rows, PAGE_ROWS at a time."""
    from cqlsh_ext.cql.types import from_driver
    from cqlsh_ext.spark.rows import PAGE_ROWS, driver_value

    cqltypes = [from_driver(t) for t in types]
    nested = [i for i, t in enumerate(cqltypes) if t.params]
    for batch in batches:
        columns = [batch.column(i).to_pylist() for i in range(len(names))]
        for i in nested:
            columns[i] = [driver_value(v, cqltypes[i]) for v in columns[i]]
        rows = list(zip(*columns, strict=True))
        for start in range(0, len(rows), PAGE_ROWS):
            yield rows[start:start + PAGE_ROWS]


Way = Callable[[Iterable[Any]], Any]


def readers(names_all: list[str], types_all: list[Any]) -> dict[str, tuple[Way, Way]]:
    """Per reader: (old, new), each taking the batches and giving the task's pickled part."""
    from cqlsh_ext.describe.description import Description
    from cqlsh_ext.insight.stats import Stats
    from cqlsh_ext.payload.places import Decoding
    from cqlsh_ext.query.answer import Answer
    from cqlsh_ext.query.evaluate import Evaluator
    from cqlsh_ext.query.grammar import Schema, parse
    from cqlsh_ext.spark.describe_job import describe_partition
    from cqlsh_ext.spark.query_job import answer_partition
    from cqlsh_ext.spark.rows import CoreCounts
    from cqlsh_ext.spark.stats_job import scan_partition

    data = [names_all.index("data")]
    names, types = ["data"], [types_all[i] for i in data]
    stats = Stats("SELECT data FROM t")
    stats.set_columns(names, types)
    plan = parse(FILTER, Schema({"pk": "text", "ck": "int", "data": "blob"}, ["pk", "ck"]))
    assert plan is not None
    answer = Answer(plan)
    description = Description("SELECT data FROM t", "data", Decoding())

    def counts() -> CoreCounts:
        return CoreCounts(Sum(), Sum())

    def only_data(batches: Iterable[Any]) -> Iterator[Any]:
        return (b.select(["data"]) for b in batches)

    def old_stats(batches: Iterable[Any]) -> Any:
        part = stats.fresh()
        part.set_columns(names, types)
        for page in old_rows(only_data(batches), names, types):
            part.add_rows(page)
        return pickle.dumps(part)

    def old_describe(batches: Iterable[Any]) -> Any:
        part = description.fresh()
        part.set_columns(names, types)
        for page in old_rows(only_data(batches), names, types):
            part.add_rows(page)
        return pickle.dumps(part)

    def old_filter(batches: Iterable[Any]) -> Any:
        part = answer.fresh()
        evaluator = Evaluator(plan, Decoding(), KEYSPACE)
        found: list[Any] = []
        for page in old_rows(batches, names_all, types_all):
            found.extend(part.add_page(evaluator, names_all, page))
        return pickle.dumps((part, found))

    def new(task: Callable[..., Iterator[Any]]) -> Callable[[Iterable[Any]], Any]:
        def run(batches: Iterable[Any]) -> Any:
            (out,) = list(task(batches))
            return out.column(0)[0].as_py()
        return run

    return {
        "stats": (old_stats, lambda b: new(lambda bs: scan_partition(stats, names, types, counts(), bs))(
            only_data(b))),
        "filter": (old_filter, new(lambda bs: answer_partition(answer, Decoding(), KEYSPACE, names_all,
                                                                 types_all, counts(), bs))),
        "describe": (old_describe, lambda b: new(lambda bs: describe_partition(
            description, None, names, types, counts(), bs))(only_data(b))),
    }


def figures(reader: str, pickled: bytes) -> Any:
    """What both ways must answer alike."""
    part = pickle.loads(pickled)
    if reader == "stats":
        part.finish()
        return {k: v for k, v in part.to_json().items() if k not in ("elapsed_s", "rows_per_s")}
    if reader == "filter":
        answer, found = part
        c = answer.counts
        return (sorted(map(repr, found)), c.read, c.matched, c.undecodable, c.cut, dict(c.kinds))
    places = {name: (p.values, p.encodings, p.reasons, p.structure.values,
                     [(path, node.present, node.types) for path, _d, _s, node in p.structure.walk(name)])
              for name, p in part.places.items()}
    return places, part.nulls, part.read


def cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=29142)
    parser.add_argument("--table", default="orders")
    parser.add_argument("--rows", type=int, default=50000)
    parser.add_argument("--batch", type=int, default=10000, help="rows an Arrow batch (Spark's default)")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--readers", nargs="+", default=["stats", "filter", "describe"])
    args = parser.parse_args()
    from cassandra.cqltypes import BytesType, Int32Type, UTF8Type

    table = load(args.host, args.port, args.table, args.rows)
    batches = table.to_batches(max_chunksize=args.batch)
    rows = table.num_rows
    pk = UTF8Type if pyarrow.types.is_string(table.schema.field("pk").type) else Int32Type
    ways = readers(["pk", "ck", "data"], [pk, Int32Type, BytesType])
    times: dict[tuple[str, str], list[float]] = {}
    for reader in args.readers:  # once each, unmeasured: imports, engines, the answers compared
        old, new = ways[reader]
        assert figures(reader, old(batches)) == figures(reader, new(batches)), reader
    for _ in range(args.repeat):
        for reader in args.readers:
            for way, run in zip(("old", "new"), ways[reader], strict=True):
                start = cpu()
                run(batches)
                times.setdefault((reader, way), []).append((cpu() - start) / rows * 1e6)
    print(f"{args.table}: {rows:,} rows in batches of {args.batch:,}; CPU us a row, median (min-max) "
          f"of {args.repeat} interleaved rounds")
    for reader in args.readers:
        old, new = times[(reader, "old")], times[(reader, "new")]
        print(f"  {reader:9} before {statistics.median(old):6.2f} ({min(old):.2f}-{max(old):.2f})   "
              f"after {statistics.median(new):6.2f} ({min(new):.2f}-{max(new):.2f})   "
              f"after/before {statistics.median(new) / statistics.median(old):.2f}")


if __name__ == "__main__":
    main()
