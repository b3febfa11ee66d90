"""A load (COPY ... FROM decoded documents and db.write, docs/load.md) and its UNDO, through both
doors, against a hand-written script that writes the same documents, in one run: client CPU a row,
whole processes.

    .venv/bin/python bench/load.py --host 127.0.0.1 --port 9042 [--rows 44000] [--repeat 3]
        [--engines native python] [--before DIR] [--existing]

--existing: a load over existing rows (issue 111: a fix over 10,000 rows, `--rows 10000`): before
each run the table holds the file's keys with other values (written by the hand script, not
measured), so every row is overwritten and each UNDO puts those back; a second hand script,
"hand, reading first", reads each row by its key (a prepared SELECT, sent with execute_async) and
writes it when the read answers, the fair line of a load that must read the stored rows (ours do:
the journal, the one rule). The loads are asked at most 1.0x that one, 1.2x the plain hand script.
--parts: after the rounds, where COPY FROM's row goes (over existing rows with --existing), by
part: its process run again --repeat times on the whole file and on its first row, each time with
bench/phases.py's timers around the functions each part is made of (the main thread's CPU, a
timed call inside another counted to the inner one): the stored rows read (RowLoads.read: the
reads sent, waited for, their rows made), the encode-and-verify of each value (Pass._ready,
Columns.stored_views and settle, RowLoads.cell_bytes: the keys and values made, encoded by the
one rule and verified, settled against the stored documents), the journal's sealed lines
(Pass._journaled, Journal.append: the lines made, sealed, written, fsync'd), the writes
(RowLoads.statement and batch, Pass._fire and _drain: the requests bound and sent, their
outcomes taken), the driver's threads (the event loop: the reads' and writes' frames), and the
rest of the main thread (the file's rows read, the pass around them); each in us a row (the whole
file's run less the first row's, over the rows less one) and its share, beside the hand loaders'.
--figures-json PATH: each side's CPU a row, round by round, written to PATH as JSON too (bench/goals.py
reads it: {"rows": N, "sides": {side: [us a row, ...]}, "parts": {part: [us a row, ...]}}).

--callgrind: each side counted in instructions (valgrind's callgrind, every process it starts:
the machine's load does not move them) instead of CPU time; use few rows (--rows 1000 --repeat 1).
--before DIR: the load and UNDO sides also run on another checkout's package, DIR holding its
`cqlsh_ext` (`git archive main cqlsh_ext | tar -x -C DIR`), put first on PYTHONPATH: before and
after in one run, on the same documents.

The documents: tools/orders.py's order table (bench/readers.py's `orders`, ten rows a partition, in
six encodings: snappy JSON, zstd MessagePack, plain JSON, gzip JSON, LZ4-frame CBOR, random bytes),
exported once to JSON Lines and to Parquet with `COPY (SELECT * FROM bench_readers.orders) TO ...`
(each value its label and its document), then loaded into an empty twin table, truncated before
every run, by:

- hand: the script a person writes for it: each line read with orjson, each document written as its
  label says with the producers' libraries (orjson, python-snappy, zstandard with msgpack, gzip,
  lz4 with cbor2; random bytes as they are), each row a prepared INSERT sent with execute_async, at
  most 32 in flight (the load's own); nothing read first, nothing verified, nothing journaled;
- COPY FROM: the real binary, `cqlsh-ext -e "COPY twin FROM 'orders.jsonl' CONFIRM"`: each value
  encoded by encode()'s writers and decoded back by the display's reading before it is sent, the
  rows read first (their old cells: what UNDO writes back), every row journaled (sealed, fsync'd), a
  partition's rows a request, at most 32 in flight;
- db.write: a program on the API, the Parquet export read by pyarrow and handed to
  `db.write(twin, table, confirm=True)` (the same work as COPY FROM);
- UNDO and db.undo: each load above undone, `cqlsh-ext -e "UNDO 'journal' CONFIRM"` and
  `db.undo(journal, confirm=True)`: every cell read, compared, written back, journaled.

Each side's CPU is user + sys of its whole process, its reaped children included (os.wait4's
getrusage), less the same side's run on the file's first row (start-up: imports, the connection);
a row's CPU is that over the rows less one. Medians of --repeat interleaved rounds, with the spread
(lowest to highest of the rounds' figures). Prints CPU a row for each side, against the hand script
(asked: the loads at most 1.0) and an UNDO's against its load's (asked: at most 1.5), wall time and
rows/s. Figures only: nothing is asserted but that every run succeeds, every load writes every row
and every UNDO leaves the table empty.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))
sys.path.insert(0, str(ROOT / "bench"))
import phases  # noqa: E402  (--parts: its timers)
from readers import CQLSH_EXT, Run, run_process, session_for  # noqa: E402  (one way to run and time a process)

KEYSPACE = "bench_load"
#: The hand loader that reads each row by its key before writing it (--existing): the fair line of a
#: load over existing rows, which ours reads first (the journal, the one rule).
HAND_READING = "hand, reading first"
#: Requests in flight at most: the load's (cqlsh_ext.load.load_job.IN_FLIGHT), the hand script's too.
IN_FLIGHT = 32

HAND = r'''
import gzip, json, resource, sys, threading, time
import cbor2, lz4.frame, msgpack, orjson, snappy, zstandard
from cassandra.auth import PlainTextAuthProvider
from cassandra.cluster import Cluster
host, port, path, table, in_flight = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4], int(sys.argv[5])
cluster = Cluster([host], port=port, auth_provider=PlainTextAuthProvider("cassandra", "cassandra"),
                  protocol_version=5)
session = cluster.connect()
insert = session.prepare(f"INSERT INTO {table} (pk, ck, data) VALUES (?, ?, ?)")
zstd = zstandard.ZstdCompressor(level=3)
def encode(value):
    if value is None:
        return None
    if isinstance(value, str):  # "0x...": bytes in no known format
        return bytes.fromhex(value[2:])
    label, payload = value["label"], value["payload"]
    if label == "zstd>msgpack":
        return zstd.compress(msgpack.packb(payload))
    if label == "lz4/frame>cbor":
        return lz4.frame.compress(cbor2.dumps(payload))
    text = orjson.dumps(payload)
    if label == "snappy>json":
        return snappy.compress(text)
    if label == "gzip>json":
        return gzip.compress(text, mtime=0)
    return text
slots = threading.Semaphore(in_flight)
failed = []
def done(_rows):
    slots.release()
def error(err):
    failed.append(err)
    slots.release()
MODE = sys.argv[6] if len(sys.argv) > 6 else "write"
if MODE == "read":  # each row read by its key first, written when its read answered
    select = session.prepare(f"SELECT data FROM {table} WHERE pk = ? AND ck = ?")
    def read_then_write(stored, values):
        future = session.execute_async(insert, values)
        future.add_callbacks(done, error)
def stale(value):  # MODE "stale": other values under the same keys (the rows a load then overwrites)
    if isinstance(value, str):
        return "0x" + value[2:][::-1]
    return {**value, "payload": {"stale": True}}
n = 0
with open(path, "rb") as f:
    for line in f:
        row = orjson.loads(line)
        slots.acquire()
        data = row["data"] if MODE != "stale" or row["data"] is None else stale(row["data"])
        values = (row["pk"], row["ck"], encode(data))
        if MODE == "read":
            future = session.execute_async(select, values[:2])
            future.add_callbacks(read_then_write, error, callback_args=(values,))
        else:
            future = session.execute_async(insert, values)
            future.add_callbacks(done, error)
        n += 1
for _ in range(in_flight):
    slots.acquire()
if failed:
    raise SystemExit(f"{len(failed)} writes failed: {failed[0]}")
print(json.dumps({"rows": n}))
cluster.shutdown()
'''


#: --parts: a load's parts, the first the main thread's residual (phases.Timers), each with the
#: functions (bench/phases.py's "module:Class.method") whose CPU is counted to it.
PARTS = ("the rest (the file's rows, the pass)", "stored rows read", "encode and verify", "journal", "writes")
PART_TARGETS: dict[str, tuple[str, ...]] = {
    "stored rows read": ("cqlsh_ext.writing.row_loads:RowLoads.read",),
    "encode and verify": ("cqlsh_ext.load.load_job:Pass._ready",
                          "cqlsh_ext.load.encoded_values:Columns.stored_views",
                          "cqlsh_ext.load.encoded_values:Columns.settle",
                          "cqlsh_ext.writing.row_loads:RowLoads.cell_bytes"),
    "journal": ("cqlsh_ext.load.load_job:Pass._journaled", "cqlsh_ext.writing.journal:Journal.append"),
    "writes": ("cqlsh_ext.writing.row_loads:RowLoads.statement", "cqlsh_ext.writing.row_loads:RowLoads.batch",
               "cqlsh_ext.load.load_job:Pass._fire", "cqlsh_ext.load.load_job:Pass._drain"),
}
PART_MODULES = ("cqlsh_ext.cli", "cqlsh_ext.load.load_job", "cqlsh_ext.load.encoded_values",
                "cqlsh_ext.writing.row_loads", "cqlsh_ext.writing.journal")
#: The other threads' CPU (the driver's event loop), and whatever else the process spent.
DRIVER_THREADS = "driver threads (frames)"


def parts_child(out: str, argv: list[str]) -> int:
    """--parts' child: the shell's statement run with the timers around PART_TARGETS; its parts'
    CPU (seconds) written to `out`."""
    timers = phases.Timers(PARTS)
    phases.install(timers, PART_TARGETS, PART_MODULES)
    code = phases.run_shell(argv)
    spent = dict(timers.phases)
    # the other threads (the driver's event loop) and anything the main thread's clock missed
    spent[DRIVER_THREADS] = timers.total - sum(spent.values())
    Path(out).write_text(json.dumps({"code": code, "total": timers.total, "parts": spent}))
    return 0


def parts_run(args: Any, session: Any, files: dict[str, Path], size: str,
              env: dict[str, str]) -> dict[str, float]:
    """COPY FROM of the `size` file ("full" or "one") in --parts' child, into the table emptied (and
    with --existing filled with the stale rows); its parts' CPU (seconds)."""
    session.execute(f"TRUNCATE {KEYSPACE}.loaded", timeout=120)
    if args.existing:
        run_process([sys.executable, "-c", HAND, args.host, str(args.port), str(files["jsonl-full"]),
                     f"{KEYSPACE}.loaded", str(IN_FLIGHT), "stale"], env)
    with tempfile.NamedTemporaryFile(suffix=".json") as out:
        argv = [args.host, str(args.port), "-u", "cassandra", "-p", "cassandra", "--request-timeout", "120",
                "-e", f"COPY {KEYSPACE}.loaded FROM '{files[f'jsonl-{size}']}' CONFIRM"]
        run_process([sys.executable, __file__, "--parts-child", out.name, "--", *argv], env)
        doc = json.loads(Path(out.name).read_text())
    if doc["code"] != 0:
        raise RuntimeError(f"COPY FROM with the parts' timers exited {doc['code']}")
    return {part: float(cpu) for part, cpu in doc["parts"].items()}


def parts_report(per_row: dict[str, list[float]], sides: dict[str, Side], rows: int) -> None:
    """The parts' us a row (median of the rounds, spread) and share of the load's row, beside the
    hand loaders' whole row."""
    whole = sum(statistics.median(values) for values in per_row.values())
    print(f"\nwhere COPY FROM's row goes (--parts: the timers' run, {rows:,} rows, medians of "
          f"{len(next(iter(per_row.values())))} rounds; us a row (spread), share of its row)")
    for part, values in per_row.items():
        median = statistics.median(values)
        print(f"  {part:<38} {median:>8.1f} ({min(values):.1f}-{max(values):.1f}) {median / whole:>6.0%}")
    print(f"  {'the whole row, with the timers':<38} {whole:>8.1f}")
    for name in ("hand", HAND_READING):
        if name in sides:
            print(f"  {name + ' (the rounds)':<38} {sides[name].cpu_a_row(rows) * 1e6:>8.1f}")


API_WRITE = r"""
import json, sys
import cqlsh_ext, pyarrow.parquet as pq
host, port, path, table = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
data = pq.read_table(path)
with cqlsh_ext.connect(host, port, username="cassandra", password="cassandra") as db:
    result = db.write(table, data, confirm=True)
print(json.dumps({"journal": result.journal, "written": result.written}))
"""

API_UNDO = r"""
import json, sys
import cqlsh_ext
host, port, journal = sys.argv[1], int(sys.argv[2]), sys.argv[3]
with cqlsh_ext.connect(host, port, username="cassandra", password="cassandra") as db:
    result = db.undo(journal, confirm=True)
print(json.dumps({"written": result.written}))
"""


@dataclass
class Side:
    name: str
    full: list[Run] = field(default_factory=list)
    one: list[Run] = field(default_factory=list)

    def cpu_rows(self, rows: int) -> list[float]:
        """Each round's CPU a row (its full run less its one-row run)."""
        return [(f.cpu - o.cpu) / (rows - 1) for f, o in zip(self.full, self.one, strict=True)]

    def cpu_a_row(self, rows: int) -> float:
        return statistics.median(self.cpu_rows(rows))

    def wall(self) -> float:
        return statistics.median(r.wall for r in self.full)


def count(session: Any, table: str) -> int:
    return int(session.execute(f"SELECT count(*) FROM {KEYSPACE}.{table}", timeout=120).one()[0])


def journal_of(out: str) -> str:
    """The journal an answer names: the shell's Undo line, or the API program's JSON."""
    found = re.search(r'"journal": ("[^"]+")', out)
    if found is not None:
        return str(json.loads(found.group(1)))
    found = re.search(r"Undo: UNDO '([^']+)' CONFIRM", out)
    if found is None:
        raise RuntimeError(f"no Undo line in:\n{out[-2000:]}")
    return found.group(1)


def measured(args: Any, cmd: list[str], env: dict[str, str]) -> Run:
    """`cmd` run: its CPU (seconds), or with --callgrind its instructions (every process it starts)."""
    if not args.callgrind:
        return run_process(cmd, env)
    from goals_instructions import COLLECTED

    with tempfile.TemporaryDirectory() as out_dir:
        run = run_process(["valgrind", "--tool=callgrind", "--trace-children=yes",
                           f"--callgrind-out-file={out_dir}/callgrind.%p.out", *cmd], env)
    counts = [int(n) for _pid, n in COLLECTED.findall(run.out)]
    if not counts:
        raise RuntimeError(f"no callgrind total in the output of {cmd[-1]!r}")
    return Run(float(sum(counts)), run.wall, run.rss_kb, run.out)


def one_round(args: Any, sides: dict[str, Side], session: Any, files: dict[str, Path], rows: int,
              env: dict[str, str]) -> None:
    """Each side once on the whole file and once on its first row; each load then undone."""
    shell = [CQLSH_EXT, args.host, str(args.port), "-u", "cassandra", "-p", "cassandra",
             "--request-timeout", "120"]
    for name, side in sides.items():
        if name.startswith(("UNDO", "db.undo")):
            continue
        table = "hand" if name.startswith("hand") else "loaded"
        for size, runs in (("full", side.full), ("one", side.one)):
            session.execute(f"TRUNCATE {KEYSPACE}.{table}", timeout=120)
            if args.existing:  # the file's keys stored with other values: every row overwritten
                run_process([sys.executable, "-c", HAND, args.host, str(args.port), str(files["jsonl-full"]),
                             f"{KEYSPACE}.{table}", str(IN_FLIGHT), "stale"], env)
            engine_env = dict(env)
            if "python" in name:
                engine_env["CQLSH_EXT_NATIVE"] = "0"
            if "before" in name:
                engine_env["PYTHONPATH"] = args.before
            if name.startswith("hand"):
                cmd = [sys.executable, "-c", HAND, args.host, str(args.port), str(files[f"jsonl-{size}"]),
                       f"{KEYSPACE}.{table}", str(IN_FLIGHT), "read" if name == HAND_READING else "write"]
            elif name.startswith("db.write"):
                cmd = [sys.executable, "-c", API_WRITE, args.host, str(args.port),
                       str(files[f"parquet-{size}"]), f"{KEYSPACE}.{table}"]
            else:
                cmd = [*shell, "-e", f"COPY {KEYSPACE}.{table} FROM '{files[f'jsonl-{size}']}' CONFIRM"]
            runs.append(measured(args, cmd, engine_env))
            expected = rows if size == "full" or args.existing else 1
            if count(session, table) != expected:
                raise RuntimeError(f"{name}: {count(session, table)} rows in the table, not {expected}")
            if name.startswith("hand"):
                continue
            journal = journal_of(runs[-1].out)
            undo = sides[name.replace("COPY FROM", "UNDO").replace("db.write", "db.undo")]
            if name.startswith("db.write"):
                cmd = [sys.executable, "-c", API_UNDO, args.host, str(args.port), journal]
            else:
                cmd = [*shell, "-e", f"UNDO '{journal}' CONFIRM"]
            (undo.full if size == "full" else undo.one).append(measured(args, cmd, engine_env))
            left = rows if args.existing else 0  # (the stale rows back, or none)
            if count(session, table) != left:
                raise RuntimeError(f"{undo.name}: {count(session, table)} rows after the UNDO, not {left}")


def report(sides: dict[str, Side], rows: int, repeat: int, callgrind: bool, existing: bool) -> None:
    hand_cpu = sides["hand"].cpu_a_row(rows)
    reading = sides.get(HAND_READING)
    scale, unit = (1.0, "instr/row") if callgrind else (1e6, "CPU us/row")
    print()
    print(f"{rows:,} documents (tools/orders.py's six encodings) "
          f"{'over as many existing rows (every row overwritten)' if existing else 'into an empty table'}, "
          f"medians of {repeat} rounds (spread: the rounds' lowest to highest); load average "
          f"{os.getloadavg()[0]:.1f}")
    print(f"{'side':<22} {unit:>10} {'spread':>15} {'x hand':>7} {'x read':>7} {'x load':>7} {'wall s':>7} "
          f"{'rows/s':>8}")
    for name, side in sides.items():
        per_row = side.cpu_rows(rows)
        cpu = statistics.median(per_row)
        spread = f"{min(per_row) * scale:.0f}-{max(per_row) * scale:.0f}"
        load = name.replace("UNDO", "COPY FROM").replace("db.undo", "db.write")
        against = f"{cpu / sides[load].cpu_a_row(rows):>7.2f}" if load != name else f"{'':>7}"
        read = f"{cpu / reading.cpu_a_row(rows):>7.2f}" if reading is not None else f"{'':>7}"
        print(f"{name:<22} {cpu * scale:>10.1f} {spread:>15} {cpu / hand_cpu:>7.2f} {read} {against} "
              f"{side.wall():>7.1f} {rows / side.wall():>8,.0f}")
    if existing:
        print("asked (issue 111): a load at most 1.00 x the hand loader reading each row first (x read) "
              "and at most 1.20 x the plain one (x hand); an UNDO at most 1.50 x its load")
    else:
        print("asked: a load at most 1.00 x hand; an UNDO at most 1.50 x its load")


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=9042)
    p.add_argument("--rows", type=int, default=44_000)
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--engines", nargs="*", default=["native"], choices=["native", "python"])
    p.add_argument("--before", help="a directory holding another checkout's cqlsh_ext package (or a "
                   "PYTHONPATH of several: a `git archive` tree, then its native core's directory)")
    p.add_argument("--callgrind", action="store_true", help="instructions a row (valgrind) instead of CPU")
    p.add_argument("--parts", action="store_true",
                   help="after the rounds, COPY FROM's row split by part (the module doc), --repeat runs")
    p.add_argument("--figures-json", help="also write each side's CPU a row, round by round, to this file")
    p.add_argument("--existing", action="store_true",
                   help="over existing rows: before each run the file's keys are stored with other values, "
                        "so every row is overwritten; the hand loader reading each row first measured too")
    if len(sys.argv) > 2 and sys.argv[1] == "--parts-child":
        return parts_child(sys.argv[2], sys.argv[4:])
    args = p.parse_args()
    if args.before:
        args.engines = [*args.engines, "before"]

    import readers

    session = session_for(args.host, args.port)
    readers.load(session, "orders", args.rows)
    session.execute(f"CREATE KEYSPACE IF NOT EXISTS {KEYSPACE} WITH replication = "
                    "{'class': 'SimpleStrategy', 'replication_factor': 1}")
    from orders import SCHEMA_CQL

    for table in ("hand", "loaded"):
        session.execute(f"CREATE TABLE IF NOT EXISTS {KEYSPACE}.{table} {SCHEMA_CQL}")
    names = ["hand", *([HAND_READING] if args.existing else [])]
    for engine in args.engines:
        names += [f"COPY FROM ({engine})", f"db.write ({engine})", f"UNDO ({engine})", f"db.undo ({engine})"]
    sides = {name: Side(name) for name in names}
    with tempfile.TemporaryDirectory() as home:
        # PYTHONSAFEPATH: `python -c` puts no working directory first on sys.path (a checkout's
        # cqlsh_ext there would be imported instead of the one installed or --before's).
        env = {**os.environ, "HOME": home, "PAGER": "", "PYTHONSAFEPATH": "1"}
        shell = [CQLSH_EXT, args.host, str(args.port), "-u", "cassandra", "-p", "cassandra",
                 "--request-timeout", "120"]
        files = {f"{kind}-full": Path(home) / f"orders.{kind}" for kind in ("jsonl", "parquet")}
        for path in files.values():
            run_process([*shell, "-e", f"COPY (SELECT * FROM {readers.KEYSPACE}.orders) TO '{path}'"], env)
        rows = sum(1 for _ in files["jsonl-full"].open())
        files["jsonl-one"] = Path(home) / "one.jsonl"
        files["jsonl-one"].write_text(files["jsonl-full"].open().readline())
        import pyarrow.parquet as pq

        files["parquet-one"] = Path(home) / "one.parquet"
        pq.write_table(pq.read_table(files["parquet-full"]).slice(0, 1), files["parquet-one"])
        for round_ in range(args.repeat):
            one_round(args, sides, session, files, rows, env)
            print(f"round {round_ + 1} of {args.repeat} done", file=sys.stderr, flush=True)
        parts: dict[str, list[float]] = {}
        try:
            for _ in range(args.repeat if args.parts else 0):
                full, one = (parts_run(args, session, files, size, env) for size in ("full", "one"))
                for part in full:
                    parts.setdefault(part, []).append((full[part] - one[part]) / (rows - 1) * 1e6)
        except RuntimeError as error:  # (a part's function renamed: the rounds' figures still stand)
            print(f"--parts failed, no split: {str(error)[-600:]}", flush=True)
            parts = {}
    session.cluster.shutdown()
    report(sides, rows, args.repeat, args.callgrind, args.existing)
    if parts:
        parts_report(parts, sides, rows)
    if args.figures_json:
        per_row = {name: [cpu * 1e6 for cpu in side.cpu_rows(rows)] for name, side in sides.items()}
        Path(args.figures_json).write_text(json.dumps({"rows": rows, "sides": per_row, "parts": parts}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
