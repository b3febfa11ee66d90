"""The driver's side of a scan alone: the same whole-table scan with the driver's rows and with
pages in (scanning/pages_in.py: the RESULT page kept as the server sent it), in one process,
interleaved, on bench/readers.py's `orders` table.

    .venv/bin/python bench/pages_in.py --host 127.0.0.1 --port 9042 [--rows 44000] [--repeat 15]

Each scan is `scan.execute_tuples` at fetch 5,000, one stream, its pages only counted (no reader):
what the driver costs a row (its I/O thread reading the frames and decoding the RESULT message,
the main thread paging), with and without the rows it makes. For each column list: client CPU a
row (getrusage of the process, user + sys, every thread), the median of --repeat rounds and the
lowest and highest. Nothing is asserted.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from readers import KEYSPACE, load, session_for  # noqa: E402

from cqlsh_ext.scanning.scan import execute_tuples  # noqa: E402

COLUMNS = ("data", "pk, ck, data")


def cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def scan(session: Any, columns: str, pages_in: bool) -> tuple[int, float]:
    from cassandra.query import SimpleStatement

    statement = SimpleStatement(f"SELECT {columns} FROM {KEYSPACE}.orders", fetch_size=5000)
    started = cpu()
    fut = execute_tuples(session, statement, pages_in=pages_in)
    rows = 0
    while True:
        rows += len(fut.result().current_rows)
        if not fut.has_more_pages:
            return rows, cpu() - started
        fut.start_fetching_next_page()


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=9042)
    p.add_argument("--rows", type=int, default=44_000)
    p.add_argument("--repeat", type=int, default=15)
    args = p.parse_args()
    session = session_for(args.host, args.port)
    load(session, "orders", args.rows)
    load_before = os.getloadavg()
    runs: dict[tuple[str, bool], list[float]] = {(c, p): [] for c in COLUMNS for p in (False, True)}
    for _ in range(args.repeat):
        for key in runs:
            rows, spent = scan(session, *key)
            runs[key].append(spent / rows * 1e6)
    load_after = os.getloadavg()
    session.cluster.shutdown()
    print(f"{KEYSPACE}.orders, {rows:,} rows; {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; load "
          f"average {load_before[0]:.1f} at the start, {load_after[0]:.1f} at the end; CPU us a row, "
          f"median of {args.repeat} (lowest-highest)")
    for columns in COLUMNS:
        cells = []
        for pages_in in (False, True):
            figures = sorted(runs[(columns, pages_in)])
            cells.append(f"{'pages in' if pages_in else 'driver rows'} {statistics.median(figures):.2f} "
                         f"({figures[0]:.2f}-{figures[-1]:.2f})")
        print(f"SELECT {columns:<13} " + "   ".join(cells))
    return 0


if __name__ == "__main__":
    sys.exit(main())
