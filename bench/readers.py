"""Every bulk reader against a bare driver scan of the same table, in one run: client CPU a row and
rows/s, on both value engines.

    .venv/bin/python bench/readers.py --host 127.0.0.1 --port 9042
        [--skewed-rows 300000] [--orders-rows 44000] [--repeat 3] [--readers stats filter ...]
        [--engines native python] [--default-parallelism] [--before OTHER/.venv/bin/cqlsh-ext]

The tables (keyspace bench_readers, loaded once; ten rows a partition):
- `skewed`: order documents of skewed sizes (100 B to 1 MB before compression, a Pareto tail:
  most values small, most bytes in a few large ones); those past 4 KB gzip JSON (the tail: most
  of the table's bytes), the others in turn raw snappy JSON, zstd JSON and plain JSON: the
  300,000-row table;
- `orders`: tools/orders.py's small order documents in six encodings (snappy JSON, zstd
  MessagePack, plain JSON, gzip JSON, LZ4-frame CBOR, random bytes): the 44,000-row table.

The sides, each a whole process:
- bare: the driver alone, `SELECT pk, ck, data` with `tuple_factory` and fetch_size 5000, every
  value's length taken; its CPU and wall time measured around the scan inside the process;
- floor: the same scan, every value decompressed with the producers' C libraries (its container
  told by its first bytes, as bench/query_scan.py's magic-byte script does: zlib, zstandard,
  lz4, python-snappy), nothing parsed;
- script: the floor, then each payload parsed (orjson, msgpack, cbor2): the user's script;
- each reader, the real binary `cqlsh-ext -e STATEMENT` in one process (CQLSH_EXT_SCAN_WORKERS=1),
  its CPU (user + sys, worker processes included: os.wait4) and wall time less those of the same
  statement on one partition (start-up, connection, imports, the first values);
- with --default-parallelism, the filter and STATS again at the shell's default parallelism (wall);
- with --engines python, every reader again with CQLSH_EXT_NATIVE=0;
- with --before BIN, the same readers of another cqlsh-ext (a checkout before a change).

Prints per reader and engine: CPU microseconds a row and its ratio to the bare scan's, the
floor's and the script's, rows/s and its ratio to the bare scan's, and the peak memory of the
process. Medians of --repeat interleaved
rounds. Figures only: nothing is asserted but that every run succeeds with the same answer.
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import random
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))
sys.path.insert(0, str(ROOT / "bench"))

CQLSH_EXT = str(Path(sys.executable).parent / "cqlsh-ext")
KEYSPACE = "bench_readers"
ROWS_A_PARTITION = 10
SKEW_MIN, SKEW_MAX, SKEW_ALPHA = 100, 1 << 20, 1.1
SKEW_ENCODINGS = ("snappy", "zstd", "json")
#: The skewed table's documents past this size are gzip JSON (the tail holding most bytes).
TAIL_FROM = 4096
#: What the loaded marker records of a table's shape (a table of another shape is loaded again).
SHAPES = {"skewed": "gzip tail", "orders": "orders"}
#: The skewed table's statuses: a filter on the rare one keeps about 2 % of the rows.
STATUSES, STATUS_WEIGHTS = ("NEW", "PAID", "SHIPPED", "FAILED"), (40, 30, 28, 2)

#: reader -> (statement, the same on one partition): {t} is the table, {f} a file, {p} the first
#: partition's key (0 in `skewed`, 'p0' in `orders`). The one list of the bulk readers' statements:
#: bench/phases.py and bench/goals.py read these too.
STATEMENTS: dict[str, tuple[str, str]] = {
    "stats": ("COMPRESSION STATS CONFIRM SELECT data FROM {t}",
              "COMPRESSION STATS SELECT data FROM {t} WHERE pk = {p}"),
    "stats-decode-all": ("COMPRESSION STATS DECODE ALL CONFIRM SELECT data FROM {t}",
                         "COMPRESSION STATS DECODE ALL SELECT data FROM {t} WHERE pk = {p}"),
    "filter": ("SELECT pk, ck FROM {t} WHERE data.status = 'FAILED' ALLOW FILTERING",
               "SELECT pk, ck FROM {t} WHERE pk = {p} AND data.status = 'FAILED' ALLOW FILTERING"),
    "group": ("SELECT data.status, count(*), min(data.n), max(data.n), avg(data.n) FROM {t} "
              "GROUP BY data.status ALLOW FILTERING",
              "SELECT data.status, count(*), min(data.n), max(data.n), avg(data.n) FROM {t} "
              "WHERE pk = {p} GROUP BY data.status ALLOW FILTERING"),
    # paths only (Parquet)
    "copy": ("COPY (SELECT pk, ck, data.status, data.n FROM {t}) TO '{f}.parquet'",
             "COPY (SELECT pk, ck, data.status, data.n FROM {t} WHERE pk = {p}) TO '{f}.parquet'"),
    # the whole blob and two paths, to Parquet and to JSON Lines
    "copy-parquet": ("COPY (SELECT pk, ck, data.status, data.n, data FROM {t}) TO '{f}.parquet'",
                     "COPY (SELECT pk, ck, data.status, data.n, data FROM {t} WHERE pk = {p}) "
                     "TO '{f}.parquet'"),
    "copy-jsonl": ("COPY (SELECT pk, ck, data.status, data.n, data FROM {t}) TO '{f}.jsonl'",
                   "COPY (SELECT pk, ck, data.status, data.n, data FROM {t} WHERE pk = {p}) "
                   "TO '{f}.jsonl'"),
    # the whole blob and no path (the statement users type), to Parquet and to JSON Lines
    "copy-parquet-blob": ("COPY (SELECT pk, ck, data FROM {t}) TO '{f}.parquet'",
                          "COPY (SELECT pk, ck, data FROM {t} WHERE pk = {p}) TO '{f}.parquet'"),
    "copy-jsonl-blob": ("COPY (SELECT pk, ck, data FROM {t}) TO '{f}.jsonl'",
                        "COPY (SELECT pk, ck, data FROM {t} WHERE pk = {p}) TO '{f}.jsonl'"),
    "describe": ("DESCRIBE PAYLOAD {t}.data ALL CONFIRM",
                 "DESCRIBE PAYLOAD {t}.data WHERE pk = {p} ALL CONFIRM"),
}
#: The first partition's key of each table, as the one-partition statements spell it.
FIRST_PARTITION = {"skewed": "0", "orders": "'p0'"}
#: The files a statement's {f} may name (removed after each run).
SUFFIXES = (".parquet", ".jsonl")


def statement(name: str, table: str, whole: bool, target: str) -> str:
    """A reader's statement on `table` (`whole`: the full table, else its first partition)."""
    full, one = STATEMENTS[name]
    return (full if whole else one).format(t=table, f=target, p=FIRST_PARTITION[table])


#: reader -> (table, statement name): every statement on the skewed table by its name, on the
#: orders table as orders-NAME.
READERS: dict[str, tuple[str, str]] = {
    **{name: ("skewed", name) for name in STATEMENTS},
    **{f"orders-{name}": ("orders", name) for name in STATEMENTS},
}
#: The readers measured when --readers is not given (what this bench measured before the list grew).
DEFAULT_READERS = ("stats", "stats-decode-all", "filter", "group", "copy", "orders-filter", "orders-group",
                   "orders-copy-parquet", "orders-describe")
#: The readers also measured at the default parallelism (wall time).
PARALLEL_READERS = ("stats", "filter")


# ----------------------------------------------------------------------------- tables

def skewed_document(rng: random.Random, i: int, size: int, text: str) -> bytes:
    status = rng.choices(STATUSES, STATUS_WEIGHTS)[0]
    doc: dict[str, Any] = {"order-id": f"ORD-{i:08d}", "status": status,
                           "n": rng.randrange(1000), "customer": {"name": f"C{i % 97}", "tier": "gold"},
                           "items": [{"sku": f"S{j}", "qty": j + 1} for j in range(rng.randrange(4))]}
    room = size - len(json.dumps(doc)) - 12
    if room > 0:
        start = rng.randrange(0, len(text) - room)
        doc["note"] = text[start:start + room]
    return json.dumps(doc).encode()


def skewed_values(count: int, seed: int = 7) -> list[bytes]:
    """`count` distinct stored values (cycled over the table), each encoding in turn."""
    import gzip

    import snappy
    import zstandard

    from cqlsh_ext.demo.records import documents

    rng = random.Random(seed)
    text = "".join(documents(400, seed=11))
    while len(text) < SKEW_MAX:
        text += text
    zstd = zstandard.ZstdCompressor(level=3)
    out = []
    for i in range(count):
        size = min(SKEW_MAX, int(SKEW_MIN / (1.0 - rng.random()) ** (1.0 / SKEW_ALPHA)))
        raw = skewed_document(rng, i, size, text)
        how = "gzip" if len(raw) > TAIL_FROM else SKEW_ENCODINGS[i % len(SKEW_ENCODINGS)]
        out.append(snappy.compress(raw) if how == "snappy" else zstd.compress(raw) if how == "zstd"
                   else gzip.compress(raw, mtime=0) if how == "gzip" else raw)
    return out


def session_for(host: str, port: int) -> Any:
    from cassandra.auth import PlainTextAuthProvider
    from cassandra.cluster import Cluster

    cluster = Cluster([host], port=port, auth_provider=PlainTextAuthProvider("cassandra", "cassandra"),
                      protocol_version=5)
    return cluster.connect()


def load_marker(table: str) -> str:
    """The name of the row in {KEYSPACE}.loaded that a completed load of `table` writes."""
    return f"{table} ({SHAPES[table]})"


def loaded_rows(session: Any, table: str) -> int | None:
    """The rows a completed load left in `table` (its marker row), None where none completed."""
    done = session.execute(f"SELECT rows FROM {KEYSPACE}.loaded WHERE name = %s", (load_marker(table),)).one()
    return None if done is None else done.rows


def load(session: Any, table: str, rows: int) -> None:
    """Create and fill a table unless a previous run left it complete (a marker row says so)."""
    from cassandra.concurrent import execute_concurrent_with_args

    session.execute(f"CREATE KEYSPACE IF NOT EXISTS {KEYSPACE} WITH replication = "
                    "{'class': 'SimpleStrategy', 'replication_factor': 1}")
    session.execute(f"CREATE TABLE IF NOT EXISTS {KEYSPACE}.loaded (name text PRIMARY KEY, rows int)")
    if loaded_rows(session, table) == rows and table in {r.table_name for r in session.execute(
            "SELECT table_name FROM system_schema.tables WHERE keyspace_name = %s", (KEYSPACE,))}:
        print(f"{KEYSPACE}.{table}: {rows:,} rows already loaded", flush=True)
        return
    session.execute(f"DROP TABLE IF EXISTS {KEYSPACE}.{table}")
    if table == "skewed":
        session.execute(f"CREATE TABLE {KEYSPACE}.skewed (pk int, ck int, data blob, PRIMARY KEY (pk, ck))")
        values = skewed_values(30_000)
        data = ((i // ROWS_A_PARTITION, i, values[i % len(values)]) for i in range(rows))
    else:
        from orders import SCHEMA_CQL
        from orders import rows as order_rows

        session.execute(f"CREATE TABLE {KEYSPACE}.orders {SCHEMA_CQL}")
        made = order_rows(rows, partitions=max(1, rows // ROWS_A_PARTITION))
        data = ((r["pk"], r["ck"], r["data"]) for r, _doc in made)
    insert = session.prepare(f"INSERT INTO {KEYSPACE}.{table} (pk, ck, data) VALUES (?, ?, ?)")
    started = time.perf_counter()
    batch: list[tuple[Any, ...]] = []
    done_rows = 0
    for args in data:
        batch.append(args)
        if len(batch) == 5000:
            execute_concurrent_with_args(session, insert, batch, concurrency=64, raise_on_first_error=True)
            done_rows += len(batch)
            batch = []
            print(f"\rloading {KEYSPACE}.{table}: {done_rows:,}/{rows:,} rows", end="", flush=True)
    if batch:
        execute_concurrent_with_args(session, insert, batch, concurrency=64, raise_on_first_error=True)
    print(f"\rloaded {KEYSPACE}.{table}: {rows:,} rows in {time.perf_counter() - started:.0f} s", flush=True)
    session.execute(f"INSERT INTO {KEYSPACE}.loaded (name, rows) VALUES (%s, %s)", (load_marker(table), rows))


# ----------------------------------------------------------------------------- runs

BARE = r'''
import json, resource, sys, time
from cassandra.auth import PlainTextAuthProvider
from cassandra.cluster import Cluster
from cassandra.query import SimpleStatement, tuple_factory
host, port, table = sys.argv[1], int(sys.argv[2]), sys.argv[3]
# Generous connection timeouts: under callgrind (bench/goals_instructions.py) on a loaded machine the
# driver's 5 s and 2 s defaults expire before the connection is up; the scan is measured after it.
cluster = Cluster([host], port=port, auth_provider=PlainTextAuthProvider("cassandra", "cassandra"),
                  protocol_version=5, connect_timeout=120, control_connection_timeout=120)
session = cluster.connect()
session.row_factory = tuple_factory
def cpu():
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime
c0, w0 = cpu(), time.perf_counter()
n = total = 0
for row in session.execute(SimpleStatement(f"SELECT pk, ck, data FROM {table}", fetch_size=5000)):
    total += len(row[2])
    n += 1
print(json.dumps({"rows": n, "cpu": cpu() - c0, "wall": time.perf_counter() - w0}))
cluster.shutdown()
'''


#: The floor and the script: the bare scan with each value decompressed (and parsed), as
#: bench/query_scan.py's magic-byte script reads a value.
ANCHOR = BARE.replace('''n = total = 0
for row in session.execute(SimpleStatement(f"SELECT pk, ck, data FROM {table}", fetch_size=5000)):
    total += len(row[2])
    n += 1''', '''n = total = 0
parse = sys.argv[4] == "script"
DOCUMENT
for row in session.execute(SimpleStatement(f"SELECT pk, ck, data FROM {table}", fetch_size=5000)):
    value = row[2]
    try:
        data = decompress(value)
        if parse:
            payload(data)
    except Exception:
        pass
    n += 1''')


def anchor_script() -> str:
    from query_scan import MAGIC_DOCUMENT

    # decompress(): the container by its first bytes, nothing parsed; payload() parses.
    decompress = '''
def decompress(value):
    if value[:4] == b"\\x28\\xb5\\x2f\\xfd":
        return zstd.decompress(value)
    if value[:4] == b"\\x04\\x22\\x4d\\x18":
        return lz4.frame.decompress(value)
    if value[:2] == b"\\x1f\\x8b":
        return zlib.decompress(value, 31)
    if value[:1] == b"{":
        return value
    return snappy.decompress(value)
'''
    return ANCHOR.replace("DOCUMENT", MAGIC_DOCUMENT + decompress)


@dataclass
class Run:
    cpu: float
    wall: float
    rss_kb: int
    out: str = ""


def _die_with_parent() -> None:
    """In the child, before exec: the kernel kills it if the bench is killed (a killed callgrind
    run left its readers reading the server for half an hour)."""
    import ctypes

    pr_set_pdeathsig = 1
    ctypes.CDLL(None, use_errno=True).prctl(pr_set_pdeathsig, signal.SIGKILL)


def run_process(cmd: list[str], env: dict[str, str]) -> Run:
    """A whole process: its CPU (user + sys, its reaped children included) and peak memory from
    wait4, its wall time."""
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        started = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=out, stderr=err, env=env, preexec_fn=_die_with_parent)
        try:
            _pid, status, usage = os.wait4(proc.pid, 0)
        except BaseException:  # Ctrl-C: a measured process (minutes under callgrind) stops with us
            proc.kill()
            proc.wait()
            raise
        wall = time.perf_counter() - started
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        text, errors = out.read(), err.read()
    if proc.returncode != 0:
        raise RuntimeError(f"{cmd[-1]!r} failed ({proc.returncode}): {errors[-2000:]}")
    return Run(usage.ru_utime + usage.ru_stime, wall, usage.ru_maxrss, text + errors)


#: A tree's cqlsh-ext run by this interpreter (binary_of, a tree without .venv): -P, so the working
#: directory's tree is not put before PYTHONPATH's.
RUN_TREE = """#!/bin/sh
PYTHONPATH={path} exec {python} -P -c 'import sys; from cqlsh_ext.cli import run; sys.argv[0] = "cqlsh-ext"; \
sys.exit(run())' "$@"
"""


def binary_of(before: str, pythonpath: str | None = None) -> str:
    """--before: a checkout (its .venv/bin/cqlsh-ext), a binary, or a tree without .venv (a `git
    archive` tree): then a script that runs it with this interpreter, `pythonpath` (default: the
    tree) as its PYTHONPATH (a directory its native core was built into first: pip install --target)."""
    import atexit
    import shlex
    import shutil

    path = Path(before)
    if not path.is_dir():
        return str(path)
    if (path / ".venv" / "bin" / "cqlsh-ext").exists():
        return str(path / ".venv" / "bin" / "cqlsh-ext")
    scratch = tempfile.mkdtemp(prefix="bench-tree-")
    atexit.register(shutil.rmtree, scratch, True)
    resolved = tree_pythonpath(path, pythonpath or before)
    script = Path(scratch) / "cqlsh-ext"
    script.write_text(RUN_TREE.format(path=shlex.quote(resolved), python=shlex.quote(sys.executable)))
    script.chmod(0o755)
    return str(script)


def tree_pythonpath(tree: Path, pythonpath: str) -> str:
    """`pythonpath` made absolute; for a `git archive` tree (a pyproject.toml, no .venv) with the
    tree's own dist-info first (tree_metadata), once."""
    resolved = os.pathsep.join(str(Path(part).resolve()) for part in pythonpath.split(os.pathsep))
    if not (tree / "pyproject.toml").is_file() or (tree / ".venv").exists():
        return resolved
    metadata = tree_metadata(tree.resolve())
    return resolved if resolved.split(os.pathsep)[0] == metadata else os.pathsep.join([metadata, resolved])


@functools.cache
def tree_metadata(tree: Path) -> str:
    """A directory holding a dist-info of `tree`'s package made from its pyproject.toml (one a tree,
    removed at exit): first on PYTHONPATH, it is the distribution importlib.metadata finds (the
    first of a name wins), so the tree's registry reads the tree's own entry points, not those
    this .venv installed."""
    import atexit
    import shutil

    import tomllib

    project = tomllib.loads((tree / "pyproject.toml").read_text())["project"]
    scratch = tempfile.mkdtemp(prefix="bench-tree-metadata-")
    atexit.register(shutil.rmtree, scratch, True)
    info = Path(scratch) / f"{project['name'].replace('-', '_')}-{project.get('version', '0')}.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {project['name']}\n"
                                   f"Version: {project.get('version', '0')}\n")
    groups = dict(project.get("entry-points", {}))
    if "scripts" in project:
        groups["console_scripts"] = project["scripts"]
    (info / "entry_points.txt").write_text("".join(
        f"[{group}]\n" + "".join(f"{name} = {target}\n" for name, target in entries.items()) + "\n"
        for group, entries in groups.items()))
    return scratch


def anchor_code(side: str) -> str:
    """The script of an anchor side: "bare", "floor" or "script" (argv[4] tells the last two apart)."""
    return BARE if side == "bare" else anchor_script()


def bare(host: str, port: int, table: str, side: str = "bare") -> tuple[int, Run]:
    proc = subprocess.run([sys.executable, "-c", anchor_code(side), host, str(port), f"{KEYSPACE}.{table}",
                           side], capture_output=True, text=True, check=True)
    doc = json.loads(proc.stdout.strip().splitlines()[-1])
    return doc["rows"], Run(doc["cpu"], doc["wall"], 0)


def shell_env(home: str, engine: str, workers: str | None) -> dict[str, str]:
    """The shell's environment in a run: its own HOME, no pager, the engine and the scan's workers."""
    env = {**os.environ, "HOME": home, "PAGER": ""}
    env.pop("CQLSH_EXT_SCAN_WORKERS", None)
    if workers is not None:
        env["CQLSH_EXT_SCAN_WORKERS"] = workers
    if engine == "python":
        env["CQLSH_EXT_NATIVE"] = "0"
    else:
        env.pop("CQLSH_EXT_NATIVE", None)
    return env


def shell_command(binary: str, host: str, port: int, statement: str, timeout: int = 120) -> list[str]:
    """`binary -e statement` against the bench's keyspace (`timeout`: each request's and the
    connection's, in seconds: a process under callgrind on a loaded machine connects slowly)."""
    return [binary, host, str(port), "-u", "cassandra", "-p", "cassandra", "-k", KEYSPACE,
            "--request-timeout", str(timeout), "--connect-timeout", str(timeout), "-e", statement]


def shell_run(binary: str, host: str, port: int, statement: str, engine: str, workers: str | None,
              home: str) -> Run:
    return run_process(shell_command(binary, host, port, statement), shell_env(home, engine, workers))


@dataclass
class Side:
    name: str
    reader: str
    binary: str
    engine: str
    workers: str | None
    full: list[Run] = field(default_factory=list)
    one: list[Run] = field(default_factory=list)

    def cpu(self) -> float:
        return statistics.median(r.cpu for r in self.full) - statistics.median(r.cpu for r in self.one)

    def wall(self) -> float:
        return statistics.median(r.wall for r in self.full) - statistics.median(r.wall for r in self.one)

    def rss_mb(self) -> float:
        return max(r.rss_kb for r in self.full) / 1024


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=9042)
    p.add_argument("--skewed-rows", type=int, default=300_000)
    p.add_argument("--orders-rows", type=int, default=44_000)
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--readers", nargs="*", default=list(DEFAULT_READERS), choices=list(READERS))
    p.add_argument("--engines", nargs="*", default=["native", "python"], choices=["native", "python"])
    p.add_argument("--default-parallelism", action="store_true")
    p.add_argument("--before", help="another cqlsh-ext binary, measured alongside")
    args = p.parse_args()

    session = session_for(args.host, args.port)
    tables = {READERS[r][0] for r in args.readers}
    rows_of = {"skewed": args.skewed_rows, "orders": args.orders_rows}
    for table in sorted(tables):
        load(session, table, rows_of[table])
    session.cluster.shutdown()

    binaries = {"": CQLSH_EXT, **({"before ": args.before} if args.before else {})}
    sides: list[Side] = []
    for reader in args.readers:
        for label, binary in binaries.items():
            for engine in args.engines:
                sides.append(Side(f"{label}{engine}", reader, binary, engine, "1"))
            if args.default_parallelism and reader in PARALLEL_READERS:
                sides.append(Side(f"{label}default parallelism", reader, binary, args.engines[0], None))
    anchors = ("bare", "floor", "script")
    bare_runs: dict[tuple[str, str], list[tuple[int, Run]]] = {(t, a): [] for t in tables for a in anchors}
    with tempfile.TemporaryDirectory() as home:
        target = str(Path(home) / "out")
        for round_ in range(args.repeat):
            for table in sorted(tables):
                for anchor in anchors:
                    bare_runs[(table, anchor)].append(bare(args.host, args.port, table, anchor))
            for side in sides:
                table, name = READERS[side.reader]
                for whole, runs in ((True, side.full), (False, side.one)):
                    text = statement(name, table, whole, target)
                    runs.append(shell_run(side.binary, args.host, args.port, text, side.engine, side.workers,
                                          home))
                    for suffix in SUFFIXES:
                        Path(target + suffix).unlink(missing_ok=True)
            print(f"round {round_ + 1} of {args.repeat} done", file=sys.stderr, flush=True)

    print()
    print(f"{'reader':<18} {'side':<22} {'CPU us/row':>10} {'x bare':>7} {'x floor':>8} {'x script':>9} "
          f"{'wall s':>7} {'rows/s':>10} {'of bare':>8} {'peak MB':>8}")
    figures: dict[tuple[str, str], tuple[int, float, float]] = {}
    for (table, anchor), runs in bare_runs.items():
        figures[(table, anchor)] = (runs[0][0], statistics.median(r.cpu for _n, r in runs),
                                    statistics.median(r.wall for _n, r in runs))
    for (table, anchor), (n, cpu, wall) in sorted(figures.items()):
        _n, bare_cpu, bare_wall = figures[(table, "bare")]
        _n, floor_cpu, _w = figures[(table, "floor")]
        _n, script_cpu, _w = figures[(table, "script")]
        print(f"{anchor + ' ' + table:<18} {'driver, tuple_factory':<22} {cpu / n * 1e6:>10.2f} "
              f"{cpu / bare_cpu:>7.2f} {cpu / floor_cpu:>8.2f} {cpu / script_cpu:>9.2f} {wall:>7.2f} "
              f"{n / wall:>10,.0f} {bare_wall / wall:>8.2f}")
    for side in sides:
        table = READERS[side.reader][0]
        n, bare_cpu, bare_wall = figures[(table, "bare")]
        floor_cpu, script_cpu = figures[(table, "floor")][1], figures[(table, "script")][1]
        cpu, wall = side.cpu(), side.wall()
        print(f"{side.reader:<18} {side.name:<22} {cpu / n * 1e6:>10.2f} {cpu / bare_cpu:>7.2f} "
              f"{cpu / floor_cpu:>8.2f} {cpu / script_cpu:>9.2f} {wall:>7.2f} {n / wall:>10,.0f} "
              f"{bare_wall / wall:>8.2f} {side.rss_mb():>8.0f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
