"""Per value in process: the native core's page call against the Python engine, on the order
table (tools/orders.py: snappy JSON, zstd MessagePack, plain JSON, gzip JSON, LZ4-frame CBOR,
random bytes), in pages of 100 as a scan hands them over.

    .venv/bin/python bench/native_values.py [--values 3000] [--callgrind] [--encodings mixed json ...]

Readers (each reads the paths data.status and data.n of every value):
  python   ValueEngine.read_page (the page API every query reader uses) on the Python engine alone
  engine   the same read_page on the native core (what a query, an export, Spark's tasks run)
  native   payload/native.py decode_page(values, cap, [status, n]) alone: the core's call
  native+  the same with want_tree (every value's tree built as Python objects)
  magic    the magic-byte + orjson script of bench/query_scan.py (the floor a user's script sets)
  stats-python, stats-engine   measure_rows (COMPRESSION STATS' page answer), Python alone / core

Wall time: the best of --repeat runs (µs per value). --callgrind: instructions per value instead
(valgrind, the count of a run with --values less one with none), steadier on a loaded machine.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))
sys.path.insert(0, str(ROOT / "bench"))
PAGE = 100
CAP = 4 << 20
READERS = ("python", "engine", "native", "native+", "magic", "stats-python", "stats-engine")


def _values(encoding: str, count: int) -> list[bytes]:
    from orders import ENCODINGS, rows

    data = [r["data"] for r, _doc in rows(6 * count + 600)]
    if encoding != "mixed":
        data = data[ENCODINGS.index(encoding)::len(ENCODINGS)] * len(ENCODINGS)
    return data[:count]


def reader(name: str) -> Callable[[list[bytes]], int]:
    """A function reading two paths of every value of a list, page by page."""
    if name == "magic":
        from query_scan import magic_document

        document = magic_document()

        def magic(values: list[bytes]) -> int:
            found = 0
            for value in values:
                doc = document(value)
                if isinstance(doc, dict) and doc.get("status") == "FAILED" and doc.get("n") is not None:
                    found += 1
            return found

        return magic
    if name in ("python", "engine", "stats-python", "stats-engine"):
        from cqlsh_ext.payload.engine import ValueEngine
        from cqlsh_ext.payload.pages import ReadRequest

        engine = ValueEngine("auto", CAP)
        if name.endswith("python"):
            engine.native = False
        elif not engine.on_core():
            raise SystemExit("the native core does not run")
        if name.startswith("stats"):
            from cqlsh_ext.insight.stats import SPEC
            from cqlsh_ext.payload.engine import measure_rows
            from cqlsh_ext.payload.measures import MeasuredPlace

            def stats(values: list[bytes]) -> int:
                return sum(measure_rows([(v,) for v in values[start:start + PAGE]], [MeasuredPlace(column=0)],
                                        [engine], SPEC).places[0].values
                           for start in range(0, len(values), PAGE))

            return stats
        ask = ReadRequest([("status",), ("n",)])

        def read(values: list[bytes]) -> int:
            found = 0
            for start in range(0, len(values), PAGE):
                page = engine.read_page(values[start:start + PAGE], ask)
                status, n = page.columns
                found += sum(1 for s, v in zip(status, n, strict=True) if s == "FAILED" and v is not None)
            return found

        return read
    from cqlsh_ext.payload import native

    if not native.available():
        raise SystemExit(f"the native core does not run: {native.refusal()}")
    want_tree = name == "native+"
    paths = [("status",), ("n",)]

    def native_reader(values: list[bytes]) -> int:
        found = 0
        for start in range(0, len(values), PAGE):
            page = native.decode_page(values[start:start + PAGE], CAP, paths, want_tree=want_tree)
            status, n = page.paths[0].values, page.paths[1].values
            found += sum(1 for s, v in zip(status, n, strict=True) if s == "FAILED" and v is not None)
        return found

    return native_reader


def child(name: str, encoding: str, count: int, made: int) -> None:
    """Make `made` values (as many in both runs: making them is not counted), warm the reader on
    600 of them, then read `count` more."""
    values = _values(encoding, made)
    run = reader(name)
    run(values[:600])  # warm: imports, contexts, configuration
    if count:
        run(values[600:600 + count])


def instructions(name: str, encoding: str, count: int, made: int) -> int:
    command = ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", sys.executable, __file__,
               "--child", name, encoding, str(count), str(made)]
    out = subprocess.run(command, capture_output=True, text=True, check=True, env=os.environ.copy())
    found = re.search(r"Collected : (\d+)", out.stderr)
    if found is None:
        raise RuntimeError(f"no count from callgrind: {out.stderr[-500:]}")
    return int(found.group(1))


def main() -> int:
    if len(sys.argv) == 6 and sys.argv[1] == "--child":
        child(sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5]))
        return 0
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--values", type=int, default=3000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--readers", nargs="+", default=list(READERS), choices=READERS)
    parser.add_argument("--encodings", nargs="+", default=["mixed"])
    parser.add_argument("--callgrind", action="store_true")
    args = parser.parse_args()
    unit = "instructions" if args.callgrind else "µs"
    print(f"per value, {args.values:,} values of the order table in pages of {PAGE} ({unit})")
    for encoding in args.encodings:
        figures: dict[str, float] = {}
        for name in args.readers:
            if args.callgrind:
                made = args.values + 600
                full = instructions(name, encoding, args.values, made)
                figures[name] = (full - instructions(name, encoding, 0, made)) / args.values
            else:
                values = _values(encoding, args.values + 600)
                run = reader(name)
                run(values[:600])
                values = values[600:]
                best = min(_timed(run, values) for _ in range(args.repeat))
                figures[name] = best / len(values) * 1e6
        line = "  ".join(f"{name} {value:,.2f}" if not args.callgrind else f"{name} {value:,.0f}"
                         for name, value in figures.items())
        ratios = ""
        if "engine" in figures and "python" in figures:
            ratios += f"  engine/python {figures['engine'] / figures['python']:.3f}"
        if "engine" in figures and "magic" in figures:
            ratios += f"  engine/magic {figures['engine'] / figures['magic']:.2f}"
        if "stats-engine" in figures and "stats-python" in figures:
            ratios += f"  stats engine/python {figures['stats-engine'] / figures['stats-python']:.3f}"
        if "native" in figures and "magic" in figures:
            ratios += f"  native/magic {figures['native'] / figures['magic']:.2f}"
        print(f"  {encoding:<13} {line}{ratios}", flush=True)
    return 0


def _timed(run: Callable[[list[bytes]], int], values: list[bytes]) -> float:
    start = time.perf_counter()
    run(values)
    return time.perf_counter() - start


if __name__ == "__main__":
    sys.exit(main())
