"""The writers' reading, a row at a time: CPU and instructions a row of an edit with a payload WHERE
and of COMPRESSION REWRITE, as their readings read a page (writing.cell_reads.PageCells) and each
value is re-encoded (edit.rewrite, rewrite.recode), nothing written; no server (the rows as the
driver, or the pages-in handler for a rewrite, hands them over).

    .venv/bin/python bench/writers_once.py [--rows 6000] [--repeat 5] [--before OTHER_TREE] [--after TREE]
                                           [--roads edit rewrite already] [--instructions]

Roads, over tools/orders.py's order table (snappy JSON, zstd MessagePack, plain JSON, gzip JSON,
LZ4-frame CBOR, random bytes): `edit`, UPDATE t SET data.n = 0 WHERE data.status = 'PAID' ALLOW
FILTERING (about a row in six kept); `edit-most`, the same WHERE data.n >= 0 (every document);
`rewrite`, COMPRESSION REWRITE AS 'gzip:6' (every value in another chain); `already`, AS 'zstd'
over zstd JSON documents (every value left as it is: the settle alone). Each round runs
each road in a process of its own (`python -P`, the tree first on PYTHONPATH), this tree's and
--before's interleaved; CPU (user + sys, getrusage) of the road alone after a warm-up page, a row:
the median of --repeat rounds with the lowest and highest. --instructions: callgrind's count
instead, of the road with --rows rows less with none, once per tree. Nothing is asserted.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import shutil
import statistics
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
PAGE = 1000
#: Rows read first, to warm up (imports, the engines' first use), not measured.
WARM = 200
ROADS = ("edit", "edit-most", "rewrite", "already")
#: The edits' WHEREs: a few rows kept (about one in six), and most (every document).
WHERES = {"edit": "data.status = 'PAID' ALLOW FILTERING", "edit-most": "data.n >= 0 ALLOW FILTERING"}


def _values(road: str, count: int) -> list[bytes]:
    sys.path.insert(0, str(ROOT / "tools"))
    if road == "already":
        import zstandard

        compressor = zstandard.ZstdCompressor(level=3)
        docs = ({"order": i, "status": ("NEW", "PAID")[i % 2], "n": i % 997, "items": [{"sku": f"S{i % 50}"}]}
                for i in range(count))
        return [compressor.compress(json.dumps(doc).encode()) for doc in docs]
    from orders import rows  # (tools/orders.py)

    return [row["data"] for row, _doc in rows(count, seed=7)]


def _names() -> list[str]:
    from cqlsh_ext.writing.cell_reads import TTL_ALIAS, WRITETIME_ALIAS

    return ["pk", "ck", "data", WRITETIME_ALIAS, TTL_ALIAS]


def _reading(where: str) -> tuple[Any, Any, list[str], Any]:
    from types import SimpleNamespace

    from cqlsh_ext.cql.lexer import Lexed
    from cqlsh_ext.cql.types import parse as cql_type
    from cqlsh_ext.edit.parse import parse
    from cqlsh_ext.query.grammar import Schema
    from cqlsh_ext.writing.blob_target import BlobTarget
    from cqlsh_ext.writing.cell_reads import plan_for
    from cqlsh_ext.writing.mechanism import TIMESTAMP, Mechanism

    table = {"pk": "text", "ck": "int", "data": "blob"}
    schema = Schema(table, ["pk"], {})
    columns = {name: cql_type(text, {}) for name, text in table.items()}
    edit = parse(Lexed(f"UPDATE t SET data.n = 0 WHERE {where}"), lambda _ks, _t: columns, lambda: schema)
    assert edit is not None
    blob, keys = BlobTarget("data"), ["pk", "ck"]
    plan = plan_for("ks", SimpleNamespace(name="t"), schema, blob, keys, edit.where, edit.allow_filtering,
                    False, Mechanism(TIMESTAMP))
    return edit, blob, keys, plan


def _server_page(rows: list[tuple[Any, ...]]) -> Any:
    """The rows as a server's page (payload.server_rows.ServerRows), as a rewrite's scan hands it over."""
    from cassandra import cqltypes

    from cqlsh_ext.payload.server_rows import ServerRows

    types = [cqltypes.UTF8Type, cqltypes.Int32Type, cqltypes.BytesType, cqltypes.LongType, cqltypes.Int32Type]
    body = bytearray()
    for row in rows:
        for value, cqltype in zip(row, types, strict=True):
            if value is None:
                body += (-1).to_bytes(4, "big", signed=True)
            else:
                cell = cqltype.to_binary(value, 5)
                body += len(cell).to_bytes(4, "big") + cell
    return ServerRows(bytes(body), len(rows), types, 5)


def _edit(pages: list[list[tuple[Any, ...]]], where: str) -> int:
    from types import SimpleNamespace

    from cqlsh_ext.edit.run import _outcome
    from cqlsh_ext.payload.places import Decoding
    from cqlsh_ext.writing.cell_reads import PageCells
    from cqlsh_ext.writing.mechanism import TIMESTAMP, Mechanism

    edit, blob, keys, plan = _reading(where)
    cells = PageCells(plan, "ks", keys, blob, Mechanism(TIMESTAMP), Decoding())
    found = (cells.page(_names(), page, 0.0) for page in pages)
    return len(_outcome(edit, blob, "ks", SimpleNamespace(name="t"), found, Decoding()).rows)


def _rewrite(pages: list[list[tuple[Any, ...]]], spec: str) -> int:
    from types import SimpleNamespace

    from cqlsh_ext.payload.places import Decoding
    from cqlsh_ext.rewrite.job import Examiner
    from cqlsh_ext.rewrite.recode import target_of
    from cqlsh_ext.writing.cell_reads import LeftAlone, PageCells
    from cqlsh_ext.writing.mechanism import TIMESTAMP, Mechanism

    _edit_, blob, keys, plan = _reading("pk = 'p'")
    decoding = Decoding()
    work = SimpleNamespace(keyspace="ks", table="t", keys=tuple(keys), blob=blob, decoding=decoding)
    examiner = Examiner(SimpleNamespace(work=work, target=target_of(spec, decoding.cap)), lambda key: 8)  # type: ignore[arg-type]
    cells = PageCells(plan, "ks", keys, blob, Mechanism(TIMESTAMP), decoding)
    for page in pages:
        for found in cells.page_in(_names(), _server_page(page), 0.0, examiner):
            if isinstance(found, LeftAlone):
                examiner.leave(found.stored, found.key_sizes)
            else:
                examiner.examine(found)
    return examiner.counts.change


def child(road: str, count: int) -> None:
    """The road over a warm-up page, then over `count` rows: prints its CPU seconds and what it did."""
    values = _values(road, WARM + count)
    rows = [("p", k, value, 1, None) for k, value in enumerate(values)]
    pages = [rows[:WARM], *(rows[at:at + PAGE] for at in range(WARM, len(rows), PAGE))]

    def run(pages: list[list[tuple[Any, ...]]]) -> int:
        if road in WHERES:
            return _edit(pages, WHERES[road])
        return _rewrite(pages, "zstd" if road == "already" else "gzip:6")

    run(pages[:1])
    usage = resource.getrusage(resource.RUSAGE_SELF)
    started = usage.ru_utime + usage.ru_stime
    done = run(pages[1:])
    usage = resource.getrusage(resource.RUSAGE_SELF)
    print(json.dumps({"cpu": usage.ru_utime + usage.ru_stime - started, "done": done}))


def _command(tree: Path, road: str, count: int) -> tuple[list[str], dict[str, str]]:
    env = {**os.environ, "PYTHONPATH": str(tree)}
    return [sys.executable, "-P", __file__, "--child", road, str(count)], env


def cpu_a_row(tree: Path, road: str, count: int) -> tuple[float, int]:
    command, env = _command(tree, road, count)
    out = subprocess.run(command, capture_output=True, text=True, env=env, check=True)
    found = json.loads(out.stdout.strip().splitlines()[-1])
    return found["cpu"] / count * 1e6, int(found["done"])


def instructions(tree: Path, road: str, count: int) -> int:
    command, env = _command(tree, road, count)
    out = subprocess.run(["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", *command],
                         capture_output=True, text=True, env=env, check=True)
    found = re.search(r"Collected : (\d+)", out.stderr)
    if found is None:
        raise RuntimeError(f"no count from callgrind: {out.stderr[-500:]}")
    return int(found.group(1))


def spread(figures: list[float]) -> str:
    figures = sorted(figures)
    return f"{statistics.median(figures):8.1f} ({figures[0]:.1f}-{figures[-1]:.1f})"


def main() -> int:
    if len(sys.argv) == 4 and sys.argv[1] == "--child":
        child(sys.argv[2], int(sys.argv[3]))
        return 0
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, default=6000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--before", type=Path)
    parser.add_argument("--after", type=Path, default=ROOT, help="the tree measured as after (this one)")
    parser.add_argument("--roads", nargs="+", default=list(ROADS), choices=ROADS)
    parser.add_argument("--instructions", action="store_true")
    args = parser.parse_args()
    trees = {"after": args.after.resolve(), **({"before": args.before.resolve()} if args.before else {})}
    if args.instructions:
        if shutil.which("valgrind") is None:
            print("valgrind is not installed", file=sys.stderr)
            return 1
        print(f"instructions a row (callgrind, {args.rows:,} rows less none)")
        for road in args.roads:
            figures = {name: (instructions(tree, road, args.rows) - instructions(tree, road, 0)) / args.rows
                       for name, tree in trees.items()}
            print(f"  {road:<9} " + "   ".join(f"{name} {n:10,.0f}" for name, n in figures.items()),
                  flush=True)
        return 0
    cpu: dict[tuple[str, str], list[float]] = {}
    done: dict[tuple[str, str], int] = {}
    load = os.getloadavg()[0]
    for _ in range(args.repeat):
        for road in args.roads:
            for name, tree in trees.items():
                spent, done[name, road] = cpu_a_row(tree, road, args.rows)
                cpu.setdefault((name, road), []).append(spent)
    print(f"CPU us a row, {args.rows:,} rows, median of {args.repeat} (lowest-highest); load average "
          f"{load:.1f} at the start, {os.getloadavg()[0]:.1f} at the end")
    for road in args.roads:
        said = [f"{name} {spread(cpu[name, road])} [{done[name, road]:,} re-encoded]" for name in trees]
        print(f"  {road:<9} " + "   ".join(said))
    return 0


if __name__ == "__main__":
    sys.exit(main())
