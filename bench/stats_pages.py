"""COMPRESSION STATS' first pages over worker processes and in a sample: the real shell's
statement with each reading's ranges after the first starting at the size the first page's rows
call for (ScanSpec.sized_first, the default), and with every range's first page at 100 rows (the
child sets Stats.answers_at_end False: STATS as it was), in the same interleaved rounds.

    .venv/bin/python bench/stats_pages.py --host 127.0.0.1 --port 9042 [--repeat 5]
        [--rows 44000] [--sample-rows 200000] [--readers workers sample one]

Tables: bench/readers.py's `orders` (--rows, bench_readers.orders, as bench/phases.py) for the
whole-table readings, and the same documents at --sample-rows in bench_pages.orders for the sample
(a SAMPLE's slices hold rows/1024 rows below 262,144 partitions: on 44,000 rows a slice fits one
100-row page either way, so the sample needs a bigger table to show anything). Readers:
- workers: `COMPRESSION STATS JSON PARALLEL 2 CONFIRM SELECT data FROM orders`;
- sample: `COMPRESSION STATS JSON SAMPLE 20 PERCENT SEED 3 SELECT data FROM orders` (the same
  slices every run);
- one: `COMPRESSION STATS JSON CONFIRM SELECT data FROM orders` in this process (as bench/phases.py).

Each run is `cqlsh_ext.cli.main(['-e', ...])` in a child process; measured in it around the shell's
statement (ExtShell.handle_statement: start-up and connection left out): client CPU (getrusage, user
+ sys, the process and its reaped children: the worker processes), wall time, and the pages (every
page with rows a Scanner yields, in any process: one byte each appended to a file, as
tests/scanning/test_first_pages.py counts them). CPU a row is the statement's CPU less the median of
the same statement on bench_pages.tiny (10 rows in one partition: its fixed costs, forking and
connecting the workers, the sample's partition count and its empty slices; shown as `fixed ms`),
over the rows the report says it read; the spread is each round's (less the same median). The
reports are compared with their timings taken out (elapsed, rates): the variants must print the
same figures. Prints medians over the rounds with the lowest and highest round, and the load
average at the start and the end.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tools"))

from readers import KEYSPACE, ROWS_A_PARTITION, bare, load, session_for  # noqa: E402

SAMPLE_KEYSPACE = "bench_pages"
#: The variant: every range's first page at FIRST_PAGE rows (STATS before sized_first).
SMALL_FIRST = " (small first pages)"
#: reader -> (its table, statement): {t} the table (or TINY, for the statement's fixed costs).
READERS: dict[str, tuple[str, str]] = {
    "workers": (f"{KEYSPACE}.orders", "COMPRESSION STATS JSON PARALLEL 2 CONFIRM SELECT data FROM {t}"),
    "sample": (f"{SAMPLE_KEYSPACE}.orders",
               "COMPRESSION STATS JSON SAMPLE 20 PERCENT SEED 3 SELECT data FROM {t}"),
    "one": (f"{KEYSPACE}.orders", "COMPRESSION STATS JSON CONFIRM SELECT data FROM {t}"),
}
#: The same documents, TINY_ROWS of them in one partition: each statement on it is its fixed costs.
TINY, TINY_ROWS = f"{SAMPLE_KEYSPACE}.tiny", 10
#: Report keys that are timings, not figures.
VOLATILE = {"elapsed_s", "elapsed", "rows_per_s", "seconds", "rate"}


def process_cpu() -> float:
    """The process's CPU, user + sys, its threads and reaped children (worker processes) included."""
    usage = [resource.getrusage(who) for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)]
    return sum(u.ru_utime + u.ru_stime for u in usage)


# ----------------------------------------------------------------------------- the child

def child(out: str, small_first: bool, argv: list[str]) -> int:
    from cqlsh_ext import cli
    from cqlsh_ext.insight.stats import Stats
    from cqlsh_ext.scanning.scan import Scanner
    from cqlsh_ext.shell.ext_shell import ExtShell

    if small_first:
        Stats.answers_at_end = False  # type: ignore[misc]
    counted = out + ".pages"
    fd = os.open(counted, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    pages = Scanner.pages

    def counting(self: Scanner) -> Iterator[Any]:
        inner = pages(self)
        try:
            for page in inner:
                if page[2]:
                    os.write(fd, b".")  # a worker process's pages too (the descriptor is inherited)
                yield page
        finally:
            inner.close()

    Scanner.pages = counting  # type: ignore[assignment,method-assign]
    window: dict[str, float] = {}
    statement = ExtShell.handle_statement

    def measured(*args: Any, **kwargs: Any) -> Any:
        cpu, wall = process_cpu(), time.perf_counter()
        try:
            return statement(*args, **kwargs)
        finally:
            window["cpu"] = process_cpu() - cpu
            window["wall"] = time.perf_counter() - wall

    ExtShell.handle_statement = measured  # type: ignore[method-assign]
    code = 0
    try:
        code = cli.main(argv)
    except SystemExit as exit_:
        code = exit_.code if isinstance(exit_.code, int) else 1
    sys.stdout.flush()
    os.close(fd)
    Path(out).write_text(json.dumps({"code": code, **window, "pages": os.path.getsize(counted)}))
    return 0


# ----------------------------------------------------------------------------- the parent

def run(host: str, port: int, statement: str, home: str, small_first: bool) -> dict[str, Any]:
    with tempfile.NamedTemporaryFile(suffix=".json", dir=home) as out:
        env = {**os.environ, "HOME": home, "PAGER": ""}
        for name in ("CQLSH_EXT_NATIVE", "CQLSH_EXT_PAGES_IN", "CQLSH_EXT_SCAN_WORKERS"):
            env.pop(name, None)
        argv = [host, str(port), "-u", "cassandra", "-p", "cassandra",
                "--request-timeout", "120", "-e", statement]
        proc = subprocess.run([sys.executable, __file__, "--child", out.name, str(int(small_first)), "--",
                               *argv], env=env, capture_output=True, text=True)
        doc: dict[str, Any] = json.loads(Path(out.name).read_text()) if proc.returncode == 0 else {}
        Path(out.name + ".pages").unlink(missing_ok=True)
    if proc.returncode != 0 or doc.get("code") != 0:
        raise RuntimeError(f"{statement!r} failed: {proc.stdout[-500:]} {proc.stderr[-2000:]}")
    doc["report"] = json.loads(proc.stdout[proc.stdout.index("{"):])
    return doc


def rows_of(doc: dict[str, Any]) -> int:
    """The rows the run's report says it read."""
    return int(doc["report"]["rows"])


def figures(report: Any) -> Any:
    """The report less its timings."""
    if isinstance(report, dict):
        return {k: figures(v) for k, v in report.items() if k not in VOLATILE}
    if isinstance(report, list):
        return [figures(v) for v in report]
    return report


def load_table(host: str, port: int, table: str, rows: int, partitions: int) -> None:
    """bench_pages.`table`: the orders documents at `rows` rows over `partitions` partitions."""
    from cassandra.concurrent import execute_concurrent_with_args
    from orders import SCHEMA_CQL
    from orders import rows as order_rows

    session = session_for(host, port)
    session.execute(f"CREATE KEYSPACE IF NOT EXISTS {SAMPLE_KEYSPACE} WITH replication = "
                    "{'class': 'SimpleStrategy', 'replication_factor': 1}")
    session.execute(f"CREATE TABLE IF NOT EXISTS {SAMPLE_KEYSPACE}.loaded (name text PRIMARY KEY, rows int)")
    done = session.execute(f"SELECT rows FROM {SAMPLE_KEYSPACE}.loaded WHERE name = %s", (table,)).one()
    if done is None or done.rows != rows:
        session.execute(f"DROP TABLE IF EXISTS {SAMPLE_KEYSPACE}.{table}")
        session.execute(f"CREATE TABLE {SAMPLE_KEYSPACE}.{table} {SCHEMA_CQL}")
        insert = session.prepare(f"INSERT INTO {SAMPLE_KEYSPACE}.{table} (pk, ck, data) VALUES (?, ?, ?)")
        made = [(r["pk"], r["ck"], r["data"]) for r, _doc in order_rows(rows, partitions=partitions)]
        for start in range(0, len(made), 5000):
            execute_concurrent_with_args(session, insert, made[start:start + 5000], concurrency=64,
                                         raise_on_first_error=True)
        session.execute(f"INSERT INTO {SAMPLE_KEYSPACE}.loaded (name, rows) VALUES (%s, %s)", (table, rows))
    session.cluster.shutdown()


def main() -> int:
    if len(sys.argv) > 3 and sys.argv[1] == "--child":
        return child(sys.argv[2], sys.argv[3] == "1", sys.argv[5:])
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=9042)
    p.add_argument("--rows", type=int, default=44_000)
    p.add_argument("--sample-rows", type=int, default=200_000)
    p.add_argument("--repeat", type=int, default=5)
    p.add_argument("--readers", nargs="*", default=["workers", "sample"], choices=list(READERS))
    args = p.parse_args()

    session = session_for(args.host, args.port)
    load(session, "orders", args.rows)
    session.cluster.shutdown()
    load_table(args.host, args.port, "tiny", TINY_ROWS, 1)
    if "sample" in args.readers:
        load_table(args.host, args.port, "orders", args.sample_rows, args.sample_rows // ROWS_A_PARTITION)

    load_before = os.getloadavg()
    bare_cpu: list[float] = []
    runs: dict[tuple[str, bool], list[dict[str, Any]]] = {
        (r, s): [] for r in args.readers for s in (False, True)}
    fixed: dict[tuple[str, bool], list[float]] = {key: [] for key in runs}
    bare_rows = 0
    with tempfile.TemporaryDirectory() as home:
        for round_ in range(args.repeat):
            bare_rows, anchor = bare(args.host, args.port, "orders")
            bare_cpu.append(anchor.cpu)
            for reader in args.readers:
                table, statement = READERS[reader]
                for small_first in (False, True) if round_ % 2 == 0 else (True, False):
                    runs[reader, small_first].append(run(args.host, args.port, statement.format(t=table),
                                                         home, small_first))
                    tiny = run(args.host, args.port, statement.format(t=TINY), home, small_first)
                    fixed[reader, small_first].append(tiny["cpu"])
            print(f"round {round_ + 1} of {args.repeat} done", file=sys.stderr, flush=True)
    load_after = os.getloadavg()

    bare_us = statistics.median(bare_cpu) / bare_rows * 1e6
    print(f"\n{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; load average (1, 5, 15 min) "
          f"{load_before[0]:.1f} {load_before[1]:.1f} {load_before[2]:.1f} at the start, "
          f"{load_after[0]:.1f} {load_after[1]:.1f} {load_after[2]:.1f} at the end; "
          f"bare scan of {KEYSPACE}.orders ({bare_rows:,} rows) {bare_us:.2f} us a row; "
          f"medians of {args.repeat} rounds (lowest-highest); CPU a row: each run's statement less "
          f"the median of the same on {TINY} ({TINY_ROWS} rows: its fixed costs, shown)")
    print(f"{'reader':<34}{'rows':>9}{'pages':>7}{'CPU us/row':>12}  {'spread':<12}{'x bare':>7}"
          f"{'fixed ms':>9}{'wall s':>8}  same report")
    for reader in args.readers:
        reports = {json.dumps(figures(r["report"]), sort_keys=True)
                   for s in (False, True) for r in runs[reader, s]}
        same = "yes" if len(reports) == 1 else f"NO ({len(reports)} different)"
        for small_first in (False, True):
            done = runs[reader, small_first]
            base = statistics.median(fixed[reader, small_first])
            per_row = sorted((r["cpu"] - base) / rows_of(r) * 1e6 for r in done)
            median = statistics.median(per_row)
            name = reader + (SMALL_FIRST if small_first else "")
            spread = f"{per_row[0]:.2f}-{per_row[-1]:.2f}"
            wall = statistics.median(r["wall"] for r in done)
            print(f"{name:<34}{statistics.median(rows_of(r) for r in done):>9,.0f}"
                  f"{statistics.median(r['pages'] for r in done):>7.0f}{median:>12.2f}  {spread:<12}"
                  f"{median / bare_us:>7.2f}{base * 1e3:>9.0f}{wall:>8.2f}  {same}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
