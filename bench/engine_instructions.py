"""Instructions per value of the value engine's readers, counted by valgrind (callgrind): a figure
that does not move with the machine's load, for steering work on the value engine where wall times
spread by a quarter from run to run.

    .venv/bin/python bench/engine_instructions.py [--values 3000]
                                                  [--statements filter group paths stats display export]
                                                  [--encodings mixed json random ... skewed]
                                                  [--before OTHER_CHECKOUT]

Per reader and encoding, over pages of tools/orders.py's order table (no server: the values as
the driver hands them over), at the default 4 MiB output cap: the query evaluator on a statement
(`filter`, `group`, `paths`: `Evaluator.evaluate_page`), COMPRESSION STATS (`stats`:
`Stats.add_rows`, every value decoded; `stats-headers`: the default STATS, sizes from headers),
the display (`display`: a page prepared and every cell formatted, as -e prints it) and the
export's sink (`export`: the paths statement's answer split into Parquet's columns, the blob
decoded). Each runs in a process twice under callgrind, once with --values values and once with
none; the difference over --values is the figure. The encoding `skewed` is bench/readers.py's
skewed table's documents instead (a third each raw snappy, zstd and plain JSON, a gzip tail), in
their order. "magic" is the magic-byte + orjson script's loop of bench/query_scan.py on the same
values, the floor a user's script sets. With --before, the same count of another checkout (its
cqlsh_ext first on sys.path) beside each figure. Needs valgrind on PATH.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
STATEMENTS = {
    "filter": "SELECT ck FROM t WHERE data.status = 'FAILED' AND data.n > 900 ALLOW FILTERING",
    # The number rule's share (docs/queries.md, "Numbers"): decimal literals against the numbers.
    "numbers": "SELECT ck FROM t WHERE data.n <= 737.26 AND data.n IN (3.7, 7.4, 900.5) ALLOW FILTERING",
    "group": "SELECT data.status, count(*) FROM t GROUP BY data.status ALLOW FILTERING",
    "paths": "SELECT ck, data.status, data.n, data.customer.name, data.items FROM t "
             "WHERE data.\"order-id\" IS NOT NULL ALLOW FILTERING",
}
#: The readers that are not a statement of the evaluator's.
READERS = ("stats", "stats-headers", "display", "export")
EXPORT = ("SELECT ck, data, data.status, data.n FROM t WHERE data.\"order-id\" IS NOT NULL "
          "ALLOW FILTERING")
WARM = 600


def measured(statement: str, encoding: str, count: int, made: int) -> None:
    """The child: make `made` values (as many in both runs: making them is not counted), warm the
    evaluator on WARM of them, then evaluate `count` more."""
    sys.path.insert(0, str(ROOT / "tools"))
    from orders import ENCODINGS, rows

    if encoding == "skewed":
        from readers import skewed_values

        data = skewed_values(made)
    else:
        data = [r["data"] for r, _doc in rows(made)]
    if encoding not in ("mixed", "skewed"):
        data = data[ENCODINGS.index(encoding)::len(ENCODINGS)] * len(ENCODINGS)
    warm, values = data[:WARM], data[WARM:WARM + count]
    if statement == "magic":
        run = _magic()
        run(warm)
        run(values)
        return
    if statement in READERS:
        reader = _reader(statement)
        reader(warm)
        reader(values)
        return
    from cqlsh_ext.query import evaluate
    from cqlsh_ext.query.grammar import Schema, parse

    schema = Schema({"pk": "text", "ck": "int", "data": "blob"}, ["pk"], {})
    plan = parse(STATEMENTS[statement], schema)
    assert plan is not None
    # The decoding defaults (named Settings before the one-engine change, which --before counts).
    decoding = getattr(evaluate, "Decoding", None) or getattr(evaluate, "Settings")  # noqa: B009
    evaluator = evaluate.Evaluator(plan, decoding())
    for page in (warm, values):
        if page:
            evaluator.evaluate_page(["ck", "data"], list(enumerate(page)))
            evaluator.walked()


def _reader(name: str) -> Callable[[list[bytes]], None]:
    """A page of values through COMPRESSION STATS, the display or the export's sink."""
    from cassandra import cqltypes

    from cqlsh_ext.settings import DisplaySettings

    if name in ("stats", "stats-headers"):
        from cqlsh_ext.insight.stats import Stats

        stats = Stats("q", from_headers=name == "stats-headers")
        stats.set_columns(["data"], [cqltypes.BytesType])
        return lambda values: stats.add_rows([(v,) for v in values])
    if name == "display":
        from cqlshlib import formatting

        from cqlsh_ext.output.display import BlobDisplay

        display = BlobDisplay(DisplaySettings(), False, False)

        def show(values: list[bytes]) -> None:
            display.prepare("data", values)
            for value in values:
                display(value, formatting.empty_colormap, place="data")

        return show
    from cqlsh_ext.render.parquet_columns import BLOB, CQL, PATH, Splitter

    from cqlsh_ext.query import evaluate
    from cqlsh_ext.query.grammar import Schema, parse

    plan = parse(EXPORT, Schema({"pk": "text", "ck": "int", "data": "blob"}, ["pk"], {}))
    assert plan is not None
    decoding = getattr(evaluate, "Decoding", None) or getattr(evaluate, "Settings")  # noqa: B009
    evaluator = evaluate.Evaluator(plan, decoding())
    splitter = Splitter([CQL, BLOB, PATH, PATH], DisplaySettings(), [None] * 4, 4 << 20)

    def export(values: list[bytes]) -> None:
        found, _, _ = evaluator.evaluate_page(["ck", "data"], list(enumerate(values)))
        splitter.split([result.values for _k, result in found])
        evaluator.walked()

    return export


def _magic() -> Callable[[list[bytes]], int]:
    from query_scan import magic_document  # the script's own text: the same reading

    document = magic_document()

    def run(values: list[bytes]) -> int:
        found = 0
        for value in values:
            doc = document(value)
            doc = doc if isinstance(doc, dict) else None
            n = doc.get("n") if doc else None
            if doc and doc.get("status") == "FAILED" and isinstance(n, (int, float)) \
                    and not isinstance(n, bool) and n > 900:
                found += 1
        return found

    return run


def instructions(checkout: Path, statement: str, encoding: str, count: int, made: int) -> int:
    env = {**os.environ, "PYTHONPATH": str(checkout)}
    command = ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", sys.executable, __file__,
               "--child", statement, encoding, str(count), str(made)]
    out = subprocess.run(command,
                         capture_output=True, text=True, env=env, check=True)
    found = re.search(r"Collected : (\d+)", out.stderr)
    if found is None:
        raise RuntimeError(f"no count from callgrind: {out.stderr[-500:]}")
    return int(found.group(1))


def per_value(checkout: Path, statement: str, encoding: str, count: int) -> float:
    made = 6 * (WARM + count)  # enough for one encoding's share too
    full = instructions(checkout, statement, encoding, count, made)
    return (full - instructions(checkout, statement, encoding, 0, made)) / count


def main() -> int:
    if len(sys.argv) == 6 and sys.argv[1] == "--child":
        measured(sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5]))
        return 0
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--values", type=int, default=3000)
    parser.add_argument("--statements", nargs="+", default=["magic", *STATEMENTS, *READERS],
                        choices=["magic", *STATEMENTS, *READERS])
    parser.add_argument("--encodings", nargs="+", default=["mixed"])
    parser.add_argument("--before", type=Path, help="another checkout to count beside this one")
    args = parser.parse_args()
    if shutil.which("valgrind") is None:
        print("valgrind is not installed", file=sys.stderr)
        return 1
    print(f"instructions per value (callgrind, {args.values:,} values less none, after {WARM} to warm up)")
    for statement in args.statements:
        for encoding in args.encodings:
            after = per_value(ROOT, statement, encoding, args.values)
            line = f"  {statement:<8} {encoding:<13} {after:10,.0f}"
            if args.before is not None and statement != "magic":
                before = per_value(args.before.resolve(), statement, encoding, args.values)
                line += f"   before {before:10,.0f}   after / before {after / before:.2f}"
            print(line, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
