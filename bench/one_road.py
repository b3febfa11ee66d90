"""A page the native core does not read (BSON documents under zstd), read by the display, an
answer's blob column and a payload query's paths: CPU per value and values per second, with the
core handing back what it decompressed (`after`: the Python engine reads the payload alone) and
without (`before`: ValueEngine.take_peeled and keep_peeled made no-ops, so the Python engine
decompresses the stored bytes again, as main did), in one run, rounds alternating.

    .venv/bin/python bench/one_road.py [--values 2000] [--rounds 5] [--size 40] [--callgrind]

CPU is getrusage's (user + system, children included), the median round of each; wall beside it.
`--callgrind`: instructions per value instead (valgrind --tool=callgrind, which the machine's load
does not move), each reader and mode in a process of its own, less the same process over no
values. Needs the native core (bin/setup builds it).
"""

from __future__ import annotations

import argparse
import os
import random
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from contextlib import contextmanager
from typing import Any

import bson
import zstandard
from cqlshlib import formatting

from cqlsh_ext.payload import native
from cqlsh_ext.payload.engine import ValueEngine


def documents(n: int, items: int, seed: int = 7) -> list[bytes]:
    """`n` BSON documents of about `items` line items each, zstd-compressed (level 3)."""
    rng = random.Random(seed)
    compressor = zstandard.ZstdCompressor(level=3)
    out = []
    for i in range(n):
        lines = [{"sku": f"S{rng.randrange(10_000)}", "qty": rng.randrange(1, 9),
                  "price": rng.randrange(100, 99_999) / 100} for _ in range(rng.randrange(items // 2, items))]
        doc = {"id": i, "status": rng.choice(["PAID", "NEW", "FAILED"]), "customer": {"name": f"c{i}"},
               "items": lines}
        out.append(compressor.compress(bson.encode(doc)))
    return out


def display(values: list[bytes]) -> None:
    from cqlsh_ext.output.display import BlobDisplay
    from cqlsh_ext.settings import DisplaySettings

    shown = BlobDisplay(DisplaySettings(), interactive=False, expanded=False)
    shown.prepare("data", values)
    for value in values:
        shown(value, formatting.empty_colormap, place="data")


def answer_blobs(values: list[bytes]) -> None:
    from cqlsh_ext.payload.columns import BlobReading, ValueColumn
    from cqlsh_ext.payload.places import Decoding, ValuePlace

    BlobReading(Decoding()).read(ValueColumn(values), ValuePlace("ks", "t", "data")).values()


def query_paths(values: list[bytes]) -> None:
    from cqlsh_ext.payload.places import Decoding
    from cqlsh_ext.query.answer import Answer
    from cqlsh_ext.query.evaluate import Evaluator
    from cqlsh_ext.query.grammar import Schema, parse

    plan = parse("SELECT ck, data.status, data.customer.name FROM t",
                 Schema({"pk": "text", "ck": "int", "data": "blob"}, ["pk"], {}))
    assert plan is not None
    Answer(plan, ()).add_page(Evaluator(plan, Decoding()), ["pk", "ck", "data"],
                              [("p", k, v) for k, v in enumerate(values)])


READERS: dict[str, Callable[[list[bytes]], None]] = {
    "display": display, "answer's blob column": answer_blobs, "query paths": query_paths}


@contextmanager
def before() -> Any:
    """The Python engine ignores what the core peeled: it decodes the stored bytes again (main)."""
    take, keep = ValueEngine.take_peeled, ValueEngine.keep_peeled
    ValueEngine.take_peeled = lambda self, values, peeled: None  # type: ignore[method-assign]
    ValueEngine.keep_peeled = lambda self, *args: None  # type: ignore[method-assign]
    try:
        yield
    finally:
        ValueEngine.take_peeled, ValueEngine.keep_peeled = take, keep  # type: ignore[method-assign]


def cpu() -> float:
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def measure(read: Callable[[list[bytes]], None], values: list[bytes], old: bool) -> tuple[float, float]:
    start_cpu, start = cpu(), time.perf_counter()
    if old:
        with before():
            read(values)
    else:
        read(values)
    return cpu() - start_cpu, time.perf_counter() - start


def instructions(name: str, old: bool, values: int, size: int) -> int:
    """Instructions callgrind counts for one process reading `values` documents with `name`."""
    with tempfile.TemporaryDirectory() as folder:
        out = os.path.join(folder, "callgrind.out")
        subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", sys.executable,
                        __file__, "--one", name, "--mode", "before" if old else "after",
                        "--values", str(values), "--size", str(size)], check=True, capture_output=True,
                       env={**os.environ, "PYTHONHASHSEED": "0"})  # the same work in every process
        with open(out, encoding="utf-8") as counted:
            found = re.search(r"^(?:summary|totals): (\d+)", counted.read(), re.M)
        assert found is not None
        return int(found.group(1))


def one(name: str, old: bool, values: int, size: int) -> None:
    """One reader over the page in this process (--callgrind's child)."""
    page = documents(values, size)
    read = READERS[name]
    read(documents(1, size))  # imports and first-use work, as in the empty run
    if old:
        with before():
            read(page)
    else:
        read(page)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--values", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--size", type=int, default=40, help="line items a document holds at the most")
    parser.add_argument("--callgrind", action="store_true")
    parser.add_argument("--readers", nargs="+", choices=list(READERS), default=list(READERS))
    parser.add_argument("--one", choices=list(READERS), help=argparse.SUPPRESS)
    parser.add_argument("--mode", choices=["before", "after"], help=argparse.SUPPRESS)
    args = parser.parse_args()
    if not native.available():
        raise SystemExit(f"the native core does not run ({native.refusal()})")
    if args.one:
        return one(args.one, args.mode == "before", args.values, args.size)
    if args.callgrind:
        print(f"instructions per value, {args.values:,} zstd>bson values ({args.size} items at the most)")
        print(f"{'reader':24} {'before':>12} {'after':>12} {'ratio':>7}")
        for name in args.readers:
            base = {old: instructions(name, old, 0, args.size) for old in (True, False)}
            per = {old: (instructions(name, old, args.values, args.size) - base[old]) / args.values
                   for old in (True, False)}
            print(f"{name:24} {per[True]:12,.0f} {per[False]:12,.0f} {per[True] / per[False]:6.2f}x")
        return None
    values = documents(args.values, args.size)
    page = native.decode_page(values, ValueEngine().cap)
    print(f"{len(values):,} zstd>bson values, {sum(map(len, values)) / len(values):,.0f} bytes stored "
          f"on average; the core hands back {len(page.handed_back):,}, peeled {len(page.peeled):,}")
    print(f"{'reader':24} {'before us/value':>16} {'after us/value':>15} {'CPU ratio':>10} "
          f"{'before values/s':>16} {'after values/s':>15}")
    for name in args.readers:
        read = READERS[name]
        read(values[:50])  # imports and first-use work out of the rounds
        runs: dict[bool, list[tuple[float, float]]] = {True: [], False: []}
        for _ in range(args.rounds):
            for old in (True, False):
                runs[old].append(measure(read, values, old))
        cpu_of = {old: statistics.median(c for c, _w in runs[old]) for old in runs}
        wall_of = {old: statistics.median(w for _c, w in runs[old]) for old in runs}
        n = len(values)
        print(f"{name:24} {cpu_of[True] / n * 1e6:16.1f} {cpu_of[False] / n * 1e6:15.1f} "
              f"{cpu_of[True] / cpu_of[False]:9.2f}x {n / wall_of[True]:16,.0f} {n / wall_of[False]:15,.0f}")


if __name__ == "__main__":
    main()
