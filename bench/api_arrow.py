"""The Python API's `db.query(...).to_arrow()` against the shell's `COPY (SELECT ...) TO 'x.parquet'`
of the same statement, in one run: client CPU a row of each, on bench/readers.py's orders table.

    .venv/bin/python bench/api_arrow.py --host 127.0.0.1 --port 9042 [--orders-rows 44000] [--repeat 3]

Each side is a whole process (its CPU, user + sys, its reaped children included: wait4), less that
of the same statement on one partition (the start-up: Python, the driver, the connection), as
bench/export_floor.py measures an export; one worker process (CQLSH_EXT_SCAN_WORKERS=1) for both.
A third process measures `to_arrow()` alone, warm (after the one-partition statement: its imports
and first uses not counted), with getrusage (self and children) around the call. The
statements: `whole` (two paths and the payload column: the blob's five columns) and `paths` (two
paths only). Prints CPU microseconds a row, medians of --repeat interleaved rounds, the rows, and
the load average at the start and the end. Nothing is asserted but that every run succeeds and
both sides give the same number of rows.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from readers import CQLSH_EXT, KEYSPACE, Run, load, run_process, session_for  # noqa: E402

STATEMENTS = {
    "whole": ("SELECT pk, ck, data.status, data.n, data FROM orders",
              "SELECT pk, ck, data.status, data.n, data FROM orders WHERE pk = 'p0'"),
    "paths": ("SELECT pk, ck, data.status, data.n FROM orders",
              "SELECT pk, ck, data.status, data.n FROM orders WHERE pk = 'p0'"),
}

#: The API's side: connect, to_arrow(), its rows and the CPU of to_arrow() alone, as JSON.
API = r'''
import json, resource, sys
import cqlsh_ext
def cpu():
    own, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime
host, port, keyspace, statement, warm, cqlshrc = sys.argv[1:7]
with cqlsh_ext.connect(host, int(port), username="cassandra", password="cassandra", keyspace=keyspace,
                       cqlshrc=cqlshrc) as db:
    if warm:  # the one-partition statement first: imports and first uses are not counted below
        db.query(warm).to_arrow()
    started = cpu()
    table = db.query(statement).to_arrow()
    print(json.dumps({"rows": table.num_rows, "to_arrow_cpu": cpu() - started}))
'''


def api_run(host: str, port: int, statement: str, warm: str, env: dict[str, str],
            cqlshrc: str) -> tuple[Run, dict[str, float]]:
    run = run_process([sys.executable, "-c", API, host, str(port), KEYSPACE, statement, warm, cqlshrc], env)
    return run, json.loads(run.out.strip().splitlines()[-1])


def shell_copy(host: str, port: int, statement: str, env: dict[str, str], target: str) -> Run:
    cmd = [CQLSH_EXT, host, str(port), "-u", "cassandra", "-p", "cassandra", "-k", KEYSPACE,
           "--request-timeout", "120", "-e", f"COPY ({statement}) TO '{target}'"]
    return run_process(cmd, env)


def parquet_rows(path: str) -> int:
    import pyarrow.parquet as pq

    return int(pq.ParquetFile(path).metadata.num_rows)


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=9042)
    p.add_argument("--orders-rows", type=int, default=44_000)
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--statements", nargs="*", default=list(STATEMENTS), choices=list(STATEMENTS))
    args = p.parse_args()

    session = session_for(args.host, args.port)
    load(session, "orders", args.orders_rows)
    session.cluster.shutdown()

    runs: dict[tuple[str, str], tuple[list[float], list[float]]] = {}
    alone: dict[str, list[float]] = {name: [] for name in args.statements}
    rows: dict[tuple[str, str], int] = {}
    load_before = os.getloadavg()
    with tempfile.TemporaryDirectory() as home:
        cqlshrc = str(Path(home) / "cqlshrc")
        Path(cqlshrc).write_text("")
        env = {**os.environ, "HOME": home, "PAGER": "", "CQLSH_EXT_SCAN_WORKERS": "1"}
        env.pop("CQLSH_EXT_NATIVE", None)
        target = str(Path(home) / "out.parquet")
        for round_ in range(args.repeat):
            for name in args.statements:
                for statement, kept in zip(STATEMENTS[name], ("full", "one"), strict=True):
                    copy = shell_copy(args.host, args.port, statement, env, target)
                    if kept == "full":
                        rows[(name, "COPY TO")] = parquet_rows(target)
                    Path(target).unlink(missing_ok=True)
                    api, said = api_run(args.host, args.port, statement, "", env, cqlshrc)
                    if kept == "full":
                        rows[(name, "to_arrow")] = int(said["rows"])
                    for side, run in (("COPY TO", copy), ("to_arrow", api)):
                        full, one = runs.setdefault((name, side), ([], []))
                        (full if kept == "full" else one).append(run.cpu)
                whole_statement, one_partition = STATEMENTS[name]
                _run, said = api_run(args.host, args.port, whole_statement, one_partition, env, cqlshrc)
                alone[name].append(said["to_arrow_cpu"])
            print(f"round {round_ + 1} of {args.repeat} done", file=sys.stderr, flush=True)
    load_after = os.getloadavg()

    print(f"\nload average (1, 5, 15 min): {load_before[0]:.2f} {load_before[1]:.2f} {load_before[2]:.2f} "
          f"at the start, {load_after[0]:.2f} {load_after[1]:.2f} {load_after[2]:.2f} at the end")
    print(f"{'statement':<10} {'side':<9} {'rows':>7} {'CPU us/row':>10} {'x COPY TO':>9}")
    for name in args.statements:
        per_row = {}
        for side in ("COPY TO", "to_arrow"):
            full, one = runs[(name, side)]
            per_row[side] = (statistics.median(full) - statistics.median(one)) / rows[(name, side)] * 1e6
        for side in ("COPY TO", "to_arrow"):
            print(f"{name:<10} {side:<9} {rows[(name, side)]:>7,} {per_row[side]:>10.2f} "
                  f"{per_row[side] / per_row['COPY TO']:>9.2f}")
        inner = statistics.median(alone[name]) / rows[(name, "to_arrow")] * 1e6
        print(f"{name:<10} {'to_arrow() alone, warm (its process)':<36} {inner:>9.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
