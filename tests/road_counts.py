"""The one road's counters (tests/test_one_engine.py): every container's decode and trial, every
JSON reading of a payload, every record format detected, every BSON document decoded (pymongo's
bson.decode) and every call of the native core, counted value by value.

Installed in the test's own process by monkeypatch (`install(monkeypatch.setattr, ...)`), and in
the processes of a program the test runs (`cqlsh-ext spark`: its driver and Spark's Python workers,
where the executors' tasks run) by tests/road_site/sitecustomize.py when ROAD_COUNTS names a folder
(`program_env`): each process then appends its counts there as they happen, a JSON line each, to
<pid>.jsonl, and `read_events` brings them back."""

from __future__ import annotations

import json
import os
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

#: The environment variable naming the folder a program's processes write their counts to.
ROAD_COUNTS = "CQLSH_EXT_TEST_ROAD_COUNTS"
#: The folder whose sitecustomize.py installs the counters in every Python process that has it on
#: its PYTHONPATH (Spark's Python workers inherit the driver's).
SITE = Path(__file__).resolve().parent / "road_site"

Setter = Callable[[Any, str, Any], None]
#: A program's process's record of one count: its kind and the bytes it is about (or None).
Log = Callable[[str, "bytes | None", int], None]


class Counts:
    def __init__(self, log: Log | None = None) -> None:
        self.decodes = 0
        self.parses = 0
        self._depth = 0
        self.log = log
        #: The stored values the Python engine decoded (each outermost decode's input, by its bytes).
        self.decoded: Counter[bytes] = Counter()
        #: The payloads the Python engine read as a record format (detection's finds, by their bytes).
        self.records: Counter[bytes] = Counter()
        #: The BSON documents decoded (pymongo's bson.decode: its input is the payload).
        self.bson: Counter[bytes] = Counter()

    def note(self, kind: str, data: bytes | None = None, n: int = 1) -> None:
        if self.log is not None:
            self.log(kind, data, n)


class CoreCalls:
    """The core's page calls, counting the values each is handed (rows x places for a page of
    places) and keeping those a value page's calls hand it (decode_page, hold_page)."""

    def __init__(self, real: Any = None, counts: Counts | None = None) -> None:
        self.real = real
        self.counts = counts
        self.handed = 0
        self.values: Counter[bytes] = Counter()

    def _handed(self, n: int, values: Any = ()) -> None:
        self.handed += n
        named = [bytes(v) for v in values if isinstance(v, bytes)]
        self.values.update(named)
        if self.counts is not None:
            self.counts.note("core", None, n)
            for value in named:
                self.counts.note("core_value", value, 1)

    def module(self) -> Any:
        real, calls = self.real, self

        class Counting:
            def __getattr__(self, name: str) -> Any:
                return getattr(real, name)

            def decode_page(self, request: Any) -> Any:
                calls._handed(len(request.values), request.values)
                return real.decode_page(request)

            def describe_page(self, request: Any) -> Any:
                values = request.values  # (the server's page: its rows, its cells unnamed here)
                calls._handed(values.rows if isinstance(values, real.RowsPage) else len(values))
                return real.describe_page(request)

            def measure_page(self, request: Any) -> Any:
                calls._handed(request.rows * len(request.places))
                return real.measure_page(request)

            def query_page(self, request: Any) -> Any:
                calls._handed(request.rows * len(request.places))
                return real.query_page(request)

            def hold_page(self, values: Any, *args: Any) -> Any:
                calls._handed(len(values), values)
                return real.hold_page(values, *args)

        return Counting()


def install(setattr_: Setter, counts: Counts, core: CoreCalls | None = None) -> None:
    """Wrap the containers' decode and trial, the JSON readings, record detection and bson.decode
    with `counts`; with `core`, the native core's module with its counting stand-in."""
    import bson

    from cqlsh_ext.codecs import registry
    from cqlsh_ext.payload import engine as engine_module
    from cqlsh_ext.payload import formats, json_text, native, pages

    def wrap(method: Callable[..., Any]) -> Callable[..., Any]:
        def counting(self: Any, *args: Any, **kwargs: Any) -> Any:
            outermost = counts._depth == 0
            counts._depth += 1
            try:
                found = method(self, *args, **kwargs)
            finally:
                counts._depth -= 1
            if outermost and found is not None:  # a trial that finds another format decoded nothing
                counts.decodes += 1
                counts.decoded[bytes(args[0])] += 1
                counts.note("decode", bytes(args[0]))
            return found
        return counting

    for cls in {type(fmt) for fmt in registry.all_containers()}:
        for name in ("decode", "trial"):
            if name in vars(cls):
                setattr_(cls, name, wrap(vars(cls)[name]))
    real = json_text.json_container

    def parsing(text: str) -> Any:
        counts.parses += 1
        counts.note("parse")
        return real(text)

    for module in (json_text, engine_module, pages):
        setattr_(module, "json_container", parsing)
    detect = formats.detect

    def detecting(data: bytes) -> Any:
        found = detect(data)
        if found is not None:
            counts.records[bytes(data)] += 1
            counts.note("record", bytes(data))
        return found

    setattr_(formats, "detect", detecting)
    real_decode = bson.decode

    def decoding(data: Any, *args: Any, **kwargs: Any) -> Any:
        counts.bson[bytes(data)] += 1
        counts.note("bson", bytes(data))
        return real_decode(data, *args, **kwargs)

    setattr_(bson, "decode", decoding)
    if core is not None:
        setattr_(native, "module", core.module)


# ------------------------------------------------------------------ in a program's processes

def program_env(folder: Path, pythonpath: str | None) -> dict[str, str]:
    """What a program's environment adds for its processes to count into `folder`: ROAD_COUNTS,
    and SITE first on its PYTHONPATH (`pythonpath`, the program's own, after it)."""
    return {ROAD_COUNTS: str(folder), "PYTHONPATH": os.pathsep.join([str(SITE), *filter(None, [pythonpath])])}


def install_in_process(folder: str) -> None:
    """sitecustomize.py's: the counters in this process, each count appended to <pid>.jsonl in
    `folder` as it happens (a forked worker writes its own file); and, in `cqlsh-ext spark`'s
    driver, a mark where each statement starts (its jobs run one after another)."""
    def log(kind: str, data: bytes | None, n: int) -> None:
        line = json.dumps({"t": time.monotonic_ns(), "pid": os.getpid(), "e": kind,
                           "v": None if data is None else data.hex(), "n": n})
        with open(Path(folder) / f"{os.getpid()}.jsonl", "a") as out:
            out.write(line + "\n")

    counts = Counts(log)
    from cqlsh_ext.payload import native

    # The core counted where it runs (CQLSH_EXT_NATIVE=0 turns it off: nothing to count then).
    install(setattr, counts, CoreCalls(native.module(), counts) if native.available() else None)
    from cqlsh_ext.spark import cli

    one = cli._one

    def marked(spark: Any, db: Any, conn: Any, stmt: Any) -> None:
        log("statement", None, 1)
        one(spark, db, conn, stmt)

    cli._one = marked  # type: ignore[assignment]


@dataclass
class ProgramCounts:
    """One statement's counts in a program's processes (`read_events`), as Counts and CoreCalls
    keep them, and the processes they were counted in."""

    counts: Counts = field(default_factory=Counts)
    core: CoreCalls = field(default_factory=CoreCalls)
    pids: set[int] = field(default_factory=set)


def read_events(folder: Path) -> list[ProgramCounts]:
    """The counts the program's processes wrote to `folder`, split at its statements' marks (in
    order of time: the machine's monotonic clock, the same in every process): one ProgramCounts a
    statement, the first's holding what was counted before its mark too (the driver's start)."""
    events = sorted((json.loads(line) for path in folder.glob("*.jsonl")
                     for line in path.read_text().splitlines()), key=lambda e: e["t"])
    statements, marked = [ProgramCounts()], False
    for event in events:
        kind, value, n = event["e"], None if event["v"] is None else bytes.fromhex(event["v"]), event["n"]
        if kind == "statement":
            if marked:
                statements.append(ProgramCounts())
            marked = True
        found = statements[-1]
        found.pids.add(event["pid"])
        if kind == "decode":
            found.counts.decodes += 1
            found.counts.decoded[value] += 1
        elif kind == "parse":
            found.counts.parses += 1
        elif kind == "record":
            found.counts.records[value] += 1
        elif kind == "bson":
            found.counts.bson[value] += 1
        elif kind == "core":
            found.core.handed += n
        elif kind == "core_value":
            found.core.values[value] += 1
    return statements
