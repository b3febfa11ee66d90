"""Where a row's client CPU goes, per bulk reader: the reader run in-process with per-page timers
around the existing functions, on bench/readers.py's `orders` table (and its `skewed` one with
--tables; bench/goals.py runs both).

    .venv/bin/python bench/phases.py --host 127.0.0.1 --port 9042 [--rows 44000] [--repeat 3]
        [--tables orders skewed] [--skewed-rows 300000]
        [--readers filter group stats stats-decode-all describe copy copy-parquet copy-jsonl
                   'stats (driver rows)' ...]

Each reader is the real shell's statement (`cqlsh_ext.cli.main(['-e', ...])`, one worker:
CQLSH_EXT_SCAN_WORKERS=1) in a child process that first wraps, inside that process only (the
product is not changed), the functions each phase is made of with a timer (the main thread's CPU,
time.thread_time; a wrapped call inside another wrapped call is counted once, to the inner one's
phase). The functions are called a page at a time, so the timers cost nothing that shows:
- core: the native core's page calls (decode_page, measure_page, query_page, describe_page,
  hold_page): decompression (the default STATS: the headers read), parsing and evaluation in
  Rust, in one call a page, split after the statement by replaying the same calls in the same
  process twice: with no record format configured (containers unwrapped, nothing parsed: its
  share of the replay is `decompress`) and with the shell's registry (`parse+eval`, the rest);
- hand-over: building what the core is given and reading what it hands back (payload/native.py's
  page functions, the core's request constructors, query/evaluate.py's PlanProgram._query), and
  the ordinary columns the core lays out from the page's cells (`cql_columns`: an export's pk and
  ck; without it they were the driver's phase's);
- evaluation: the Python above the core's answer (query/answer.py's pages and final answer,
  insight/stats.py's and describe/description.py's add_rows);
- rendering and writing: the rows printed (output/pipeline.py's print_page, a payload query's
  pages and a stock page with blobs, and print_static_result: cqlsh's formatting) and the export
  sinks (render/parquet.py, export/json_csv.py: the blob columns' splitting, the core's
  held_array and contents_arrays spelling the file's Arrow columns: also shown apart, pyarrow's
  writing);
- driver and frames: the rest of the process's CPU in the statement (getrusage, user + sys,
  children included): the driver's I/O thread reading frames, its rows made on the main thread,
  the scan's paging and the shell around it. Its threads' part (the event loop: frames read,
  decompressed and checked, a RESULT's rows made or kept as bytes) is printed apart, from each
  thread's own CPU clock (a thread that ends inside the statement is not in it);
The window is the shell's statement (ExtShell.handle_statement: start-up and connection left out);
every phase is the full table's statement less the same statement on one partition (the imports a
statement makes the first time, the first values), as bench/readers.py measures a reader; medians
of --repeat interleaved rounds. In the same run: the bare scan (`tuple_factory`, fetch 5,000,
bench/readers.py's) and the floor (the bare scan decompressing every value with the producers' C
libraries, bench/readers.py's), and, after the rounds, those C libraries called from Python on the
table's values alone, no scan (`decompression (C libs)`): what decompressing costs a user's script,
to set beside the core's whole page call.

Prints reader x phase: CPU microseconds a row and per cent of the reader's total, and the load
average at the start and the end (a shared machine: say it beside every figure). Nothing is
asserted but that every run succeeds.
"""

from __future__ import annotations

import argparse
import importlib
import inspect
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from readers import KEYSPACE, STATEMENTS, SUFFIXES, bare, load, session_for, statement  # noqa: E402

PHASES = ("driver and frames", "hand-over", "core", "evaluation", "rendering and writing",
          "arrow columns (core)")
#: The columns printed: the core's figure split in two by its calls replayed.
SHOWN = ("driver and frames", "hand-over", "decompression (core)", "parsing and evaluation (core)",
         "evaluation", "rendering and writing")
#: After a reader's name: the same reader on the driver's rows (CQLSH_EXT_PAGES_IN=0), as before
#: pages in (scanning/pages_in.py), in the same rounds.
DRIVER_ROWS = " (driver rows)"
#: After a reader's name: every token range's first page at FIRST_PAGE rows (the child sets
#: Stats.answers_at_end False: STATS as before ScanSpec.sized_first), in the same rounds.
SMALL_FIRST = " (small first pages)"
#: suffix -> the child's environment for it (read by the bench's child only, and CQLSH_EXT_PAGES_IN).
VARIANTS = {DRIVER_ROWS: {"CQLSH_EXT_PAGES_IN": "0"}, SMALL_FIRST: {"PHASES_SMALL_FIRST": "1"}}
#: The readers: bench/readers.py's statements (the default STATS, DECODE ALL, the filter, GROUP BY,
#: COPY paths only to Parquet, the whole blob to Parquet and to JSON Lines, DESCRIBE PAYLOAD ALL).
READERS = ("filter", "group", "stats", "stats-decode-all", "describe", "copy", "copy-parquet", "copy-jsonl")


#: phase -> "module:attribute" (a class's method as "module:Class.method") wrapped with its timer.
TARGETS: dict[str, tuple[str, ...]] = {
    "hand-over": tuple(f"cqlsh_ext.payload.native:{name}" for name in (
        "decode_page", "measure_rows", "CoreProgram.answer", "describe_page", "page_cells", "read_page",
        "cql_columns")) + (
            "cqlsh_ext.query.evaluate:PlanProgram._query",) + tuple(
            f"CORE:{name}" for name in (
                "DecodeRequest", "QueryRequest", "MeasureRequest", "MeasurePlace", "DescribeRequest",
                "RowsPage")),
    "core": tuple(f"CORE:{name}" for name in (
        "decode_page", "measure_page", "query_page", "describe_page", "hold_page")),
    "evaluation": ("cqlsh_ext.query.answer:Answer.add_page", "cqlsh_ext.query.answer:Answer.add_page_columns",
                   "cqlsh_ext.query.answer:Answer.final", "cqlsh_ext.insight.stats:Stats.add_rows",
                   "cqlsh_ext.describe.description:Description.add_rows"),
    "rendering and writing": ("cqlsh_ext.output.pipeline:ResultPipeline.print_static_result",
                              "cqlsh_ext.output.pipeline:ResultPipeline.print_page",
                              "cqlsh_ext.render.parquet:ParquetSink.write",
                              "cqlsh_ext.render.parquet:ParquetSink.finish",
                              "cqlsh_ext.export.json_csv:TextSink.write",
                              "cqlsh_ext.export.json_csv:TextSink.finish",
                              ),
    # the core spelling the held values as the file's Arrow columns: part of the writing, shown apart
    "arrow columns (core)": ("CORE:held_array", "CORE:contents_arrays"),
}


# ----------------------------------------------------------------------------- the child

class Timers:
    """Exclusive CPU time of the main thread per phase: a wrapped call's time goes to its phase,
    less that of the wrapped calls inside it; the rest of the main thread's to the residual (the
    first of `phases`: the readers' PHASES by default, bench/load.py --parts gives a load's)."""

    def __init__(self, phases: tuple[str, ...] = PHASES) -> None:
        self.main = threading.get_ident()
        self.names = phases
        self.spent: dict[str, float] = dict.fromkeys(phases, 0.0)
        self.stack = [phases[0]]
        self.last = time.thread_time()
        self.started = self.total = self.threads = 0.0
        self.calls: list[tuple[Callable[..., Any], tuple[Any, ...], dict[str, Any]]] = []
        self.phases = dict(self.spent)

    def wrap(self, fn: Callable[..., Any], phase: str) -> Callable[..., Any]:
        def timed(*args: Any, **kwargs: Any) -> Any:
            if threading.get_ident() != self.main:
                return fn(*args, **kwargs)
            now = time.thread_time()
            self.spent[self.stack[-1]] += now - self.last
            self.last = now
            self.stack.append(phase)
            if phase == "core":
                self.calls.append((fn, args, kwargs))
            try:
                return fn(*args, **kwargs)
            finally:
                now = time.thread_time()
                self.spent[self.stack.pop()] += now - self.last
                self.last = now
        return timed

    def close(self) -> None:
        now = time.thread_time()
        self.spent[self.stack[-1]] += now - self.last
        self.last = now

    def statement(self, fn: Callable[..., Any]) -> Callable[..., Any]:
        """The window measured: the shell's statement (start-up, connection and the imports
        before it are left out; the process's CPU in it is taken from getrusage)."""
        def measured(*args: Any, **kwargs: Any) -> Any:
            self.close()
            self.spent = dict.fromkeys(self.names, 0.0)
            self.calls = []
            threads = other_threads_cpu()
            self.started = process_cpu()
            try:
                return fn(*args, **kwargs)
            finally:
                self.close()
                self.total = process_cpu() - self.started
                after = other_threads_cpu()
                self.threads = sum(cpu - threads.get(ident, 0.0) for ident, cpu in after.items())
                self.phases = dict(self.spent)
        return measured


def other_threads_cpu() -> dict[int, float]:
    """Each live thread's CPU but the main thread's (the driver's event loop reading frames, the
    scan's threads): a thread that ends inside the statement is not counted."""
    out: dict[int, float] = {}
    for thread in threading.enumerate():
        if thread.ident is None or thread is threading.main_thread():
            continue
        try:
            out[thread.ident] = time.clock_gettime(time.pthread_getcpuclockid(thread.ident))
        except (OSError, ProcessLookupError):
            continue
    return out


def process_cpu() -> float:
    """The process's CPU, user + sys, its threads and reaped children included."""
    usage = [resource.getrusage(who) for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)]
    return sum(u.ru_utime + u.ru_stime for u in usage)


#: The modules imported before the wrapping (their names bound to a wrapped function are rebound).
MODULES = ("cqlsh_ext.cli", "cqlsh_ext.query.evaluate", "cqlsh_ext.query.answer", "cqlsh_ext.insight.stats",
           "cqlsh_ext.describe.description", "cqlsh_ext.render.parquet", "cqlsh_ext.export.json_csv",
           "cqlsh_ext.export.run", "cqlsh_ext.payload.engine", "cqlsh_ext.output.display",
           "cqlsh_ext.output.pipeline")


def install(timers: Timers, targets: dict[str, tuple[str, ...]] = TARGETS,
            modules: tuple[str, ...] = MODULES) -> None:
    """Wrap every target (the readers' by default), and every module-level name bound to a wrapped
    function, `modules` imported first."""
    from cqlsh_ext.payload import native

    core = importlib.import_module(native.MODULE)
    for name in modules:
        importlib.import_module(name)
    from cqlsh_ext.shell.ext_shell import ExtShell

    ExtShell.handle_statement = timers.statement(ExtShell.handle_statement)  # type: ignore[method-assign]
    swapped: dict[int, Callable[..., Any]] = {}
    for phase, named in targets.items():
        for target in named:
            where, _, attribute = target.partition(":")
            owner: Any = core if where == "CORE" else importlib.import_module(where)
            *classes, name = attribute.split(".")
            for cls in classes:
                owner = getattr(owner, cls)
            fn = getattr(owner, name)
            if inspect.isgeneratorfunction(fn):
                raise SystemExit(f"{target} is a generator: its timer would count only its creation")
            timed = timers.wrap(fn, phase)
            setattr(owner, name, timed)
            swapped[id(fn)] = timed
    for module in list(sys.modules.values()):
        if getattr(module, "__name__", "").startswith("cqlsh_ext"):
            for key, value in list(vars(module).items()):
                if id(value) in swapped and callable(value):
                    setattr(module, key, swapped[id(value)])


def replay(calls: list[tuple[Callable[..., Any], tuple[Any, ...], dict[str, Any]]]) -> tuple[float, float]:
    """The statement's core calls again, as they were made (CPU s, least of two): with no record
    format configured (containers unwrapped, nothing parsed), then with the shell's registry."""
    from cqlsh_ext.payload import native

    core: Any = native.module()
    registry = native._config()

    def timed() -> float:
        started = time.thread_time()
        for fn, args, kwargs in calls:
            fn(*args, **kwargs)
        return time.thread_time() - started

    try:
        core.configure({**registry, "records": []})
        unwrapped = min(timed() for _ in range(2))
    finally:
        core.configure(registry)
    return unwrapped, min(timed() for _ in range(2))


def run_shell(argv: list[str]) -> int:
    """The shell's statement run in this process (`cqlsh_ext.cli.main`): its exit code."""
    from cqlsh_ext import cli

    try:
        return cli.main(argv)
    except SystemExit as exit_:
        return exit_.code if isinstance(exit_.code, int) else 1


def child(out: str, argv: list[str]) -> int:
    timers = Timers()
    install(timers)
    if os.environ.get("PHASES_SMALL_FIRST") == "1":
        from cqlsh_ext.insight.stats import Stats

        Stats.answers_at_end = False  # type: ignore[misc]
    sys.stdout.flush()
    code = run_shell(argv)
    spent = dict(timers.phases)
    main_thread = sum(spent.values())
    # The driver's I/O thread and any other thread or child: frames read, sockets served.
    spent["driver and frames"] += timers.total - main_thread
    # The core's figure split by its calls replayed: the share that is unwrapping (decompression).
    unwrapped, whole = replay(timers.calls)
    share = min(1.0, unwrapped / whole) if whole > 0 else 0.0
    spent["decompression (core)"] = spent["core"] * share
    spent["parsing and evaluation (core)"] = spent.pop("core") - spent["decompression (core)"]
    spent["rendering and writing"] += spent["arrow columns (core)"]
    # The core's page calls: one a page read (one payload column, as every reader here asks).
    pages = len(timers.calls)
    # Of the driver and frames: the other threads' CPU (the driver's event loop: frames off the socket).
    spent["driver threads"] = timers.threads
    Path(out).write_text(json.dumps({"code": code, "total": timers.total, "phases": spent, "pages": pages}))
    return 0


# ----------------------------------------------------------------------------- the parent

def reader_run(host: str, port: int, statement: str, home: str, variant: str = "") -> dict[str, Any]:
    with tempfile.NamedTemporaryFile(suffix=".json", dir=home) as out:
        env = {**os.environ, "HOME": home, "PAGER": "", "CQLSH_EXT_SCAN_WORKERS": "1"}
        env.pop("CQLSH_EXT_NATIVE", None)
        env.pop("CQLSH_EXT_PAGES_IN", None)
        env.pop("PHASES_SMALL_FIRST", None)
        env.update(VARIANTS.get(variant, {}))  # the reader as it was before a change
        argv = [host, str(port), "-u", "cassandra", "-p", "cassandra", "-k", KEYSPACE,
                "--request-timeout", "120", "-e", statement]
        proc = subprocess.run([sys.executable, __file__, "--child", out.name, "--", *argv], env=env,
                              capture_output=True, text=True)
        if proc.returncode != 0:
            raise RuntimeError(f"{statement!r} failed ({proc.returncode}): {proc.stderr[-2000:]}")
        doc: dict[str, Any] = json.loads(Path(out.name).read_text())
    if doc["code"] != 0:
        raise RuntimeError(f"{statement!r} failed ({doc['code']}): {proc.stdout[-500:]} "
                           f"{proc.stderr[-2000:]}")
    return doc


def table_values(host: str, port: int, table: str) -> list[bytes]:
    from cassandra.query import SimpleStatement, tuple_factory

    session = session_for(host, port)
    session.row_factory = tuple_factory
    scan = SimpleStatement(f"SELECT data FROM {table}", fetch_size=5000)
    values = [row[0] for row in session.execute(scan)]
    session.cluster.shutdown()
    return values


def decompression_alone(values: list[bytes]) -> float:
    """The producers' C libraries called from Python on every value, in this process: CPU s."""
    from export_floor import FLOOR

    scope: dict[str, Any] = {}
    # FLOOR's decompressed() (its imports and definitions, not its scan).
    imports = "\n".join(line for line in FLOOR.splitlines() if line.startswith("import "))
    exec(imports + "\n" + FLOOR[FLOOR.index("zstd = zstandard"):FLOOR.index("c0, w0 = cpu()")], scope)  # noqa: S102
    decompressed = scope["decompressed"]
    started = time.thread_time()
    for value in values:
        decompressed(value)
    return time.thread_time() - started


@dataclass
class ReaderPhases:
    """One reader's figures on one table: CPU seconds per phase and in all (full table less its first
    partition, medians), the rounds' totals (each less the one-partition median), pages."""

    phases: dict[str, float]
    total: float
    rounds: list[float]
    pages: float
    arrow: float
    #: Of the driver and frames: the driver's threads (its event loop reading the frames).
    threads: float = 0.0


@dataclass
class TablePhases:
    table: str
    rows: int
    bare: float
    floor: float
    alone: float
    values: int
    readers: dict[str, ReaderPhases] = field(default_factory=dict)


def measure(host: str, port: int, table: str, readers: list[str], repeat: int, home: str) -> TablePhases:
    """Every reader's phases on `table` (bench/readers.py's, loaded), --repeat interleaved rounds with
    the bare scan and the floor, then the C libraries alone on the table's values."""
    anchors: dict[str, list[float]] = {"bare": [], "floor": []}
    full: dict[str, list[dict[str, Any]]] = {r: [] for r in readers}
    one: dict[str, list[dict[str, Any]]] = {r: [] for r in readers}
    rows = 0
    target = str(Path(home) / "out")
    for round_ in range(repeat):
        for anchor in anchors:
            rows, run = bare(host, port, table, anchor)
            anchors[anchor].append(run.cpu)
        for reader in readers:
            variant = next((v for v in VARIANTS if reader.endswith(v)), "")
            base = reader.removesuffix(variant) if variant else reader
            for whole, kept in ((True, full[reader]), (False, one[reader])):
                kept.append(reader_run(host, port, statement(base, table, whole, target), home, variant))
                for suffix in SUFFIXES:
                    Path(target + suffix).unlink(missing_ok=True)
        print(f"phases {table}: round {round_ + 1} of {repeat} done", file=sys.stderr, flush=True)
    values = table_values(host, port, f"{KEYSPACE}.{table}")
    found = TablePhases(table, rows, statistics.median(anchors["bare"]), statistics.median(anchors["floor"]),
                        decompression_alone(values), len(values))
    del values
    for reader in readers:
        def median(key: str, runs: list[dict[str, Any]]) -> float:
            return statistics.median(r["phases"][key] for r in runs)

        partition = statistics.median(o["total"] for o in one[reader])
        found.readers[reader] = ReaderPhases(
            phases={ph: median(ph, full[reader]) - median(ph, one[reader]) for ph in SHOWN},
            total=statistics.median(r["total"] for r in full[reader]) - partition,
            rounds=sorted(r["total"] - partition for r in full[reader]),
            pages=statistics.median(r.get("pages", 0) for r in full[reader]),
            arrow=median("arrow columns (core)", full[reader]) - median("arrow columns (core)", one[reader]),
            threads=median("driver threads", full[reader]) - median("driver threads", one[reader]))
    return found


def report(found: TablePhases, repeat: int) -> None:
    """The table of reader x phase: CPU us a row (% of the reader's), x floor, x bare, spread."""
    def us(seconds: float) -> float:
        return seconds / found.rows * 1e6

    print(f"\n{KEYSPACE}.{found.table}, {found.rows:,} rows: bare scan {us(found.bare):.2f} us a row, floor "
          f"{us(found.floor):.2f} us a row, decompression (C libs) alone "
          f"{found.alone / max(1, found.values) * 1e6:.2f} us a row; medians of {repeat} rounds, "
          "CPU us a row (% of the reader's)")
    short = dict(zip(SHOWN, ("driver", "hand-over", "decompress", "parse+eval", "eval (Py)", "render/write"),
                     strict=True))
    print(f"{'reader':<32}" + "".join(f"{short[ph]:>15}" for ph in SHOWN)
          + f"{'total':>8}{'x floor':>8}{'x bare':>8}{'pages':>7}  spread")
    for reader, got in found.readers.items():
        cells = "".join(f"{us(got.phases[ph]):>8.2f} ({got.phases[ph] / got.total * 100:>3.0f}%)"
                        for ph in SHOWN)
        print(f"{reader:<32}{cells}{us(got.total):>8.2f}{got.total / found.floor:>8.2f}"
              f"{got.total / found.bare:>8.2f}{got.pages:>7.0f}  "
              f"{us(got.rounds[0]):.2f}-{us(got.rounds[-1]):.2f}")
    print("of the driver and frames, the driver's threads (its event loop: frames off the socket, "
          "decompressed, checked, a RESULT's rows or bytes): " + ", ".join(
              f"{reader} {us(got.threads):.2f}" for reader, got in found.readers.items()) + " us a row")
    for reader, got in found.readers.items():
        if reader.startswith("copy"):
            print(f"{reader}: of its rendering and writing, the core's Arrow columns (held_array, "
                  f"contents_arrays) {us(got.arrow):.2f} us a row")


def main() -> int:
    if len(sys.argv) > 2 and sys.argv[1] == "--child":
        return child(sys.argv[2], sys.argv[4:])
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=9042)
    p.add_argument("--rows", type=int, default=44_000,
                   help="the orders table's rows (reloaded when it changes); 5000 for a quick run that "
                   "checks the bench, its figures a row then carrying each statement's fixed costs")
    p.add_argument("--skewed-rows", type=int, default=300_000, help="the skewed table's rows")
    p.add_argument("--tables", nargs="*", default=["orders"], choices=["orders", "skewed"])
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--readers", nargs="*", default=list(READERS),
                   choices=[*STATEMENTS, *(r + v for r in STATEMENTS for v in VARIANTS)],
                   help=f"a reader's name with '{DRIVER_ROWS}' after it: run with CQLSH_EXT_PAGES_IN=0 "
                   f"(the driver's rows, as before pages in); with '{SMALL_FIRST}': every token range "
                   "starting at a 100-row page (STATS before ScanSpec.sized_first); in the same rounds")
    args = p.parse_args()

    session = session_for(args.host, args.port)
    rows_of = {"orders": args.rows, "skewed": args.skewed_rows}
    for table in args.tables:
        load(session, table, rows_of[table])
    session.cluster.shutdown()

    load_before = os.getloadavg()
    with tempfile.TemporaryDirectory() as home:
        found = [measure(args.host, args.port, table, args.readers, args.repeat, home)
                 for table in args.tables]
    load_after = os.getloadavg()
    print(f"\n{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; load average (1, 5, 15 min) "
          f"{load_before[0]:.1f} {load_before[1]:.1f} {load_before[2]:.1f} at the start, "
          f"{load_after[0]:.1f} {load_after[1]:.1f} {load_after[2]:.1f} at the end")
    for table in found:
        report(table, args.repeat)
    return 0


if __name__ == "__main__":
    sys.exit(main())
