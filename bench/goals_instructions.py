"""Issue 63's CPU goals counted in instructions: each goal's reader and the anchor it is measured
against, whole processes under valgrind (callgrind), on tables bench/goals.py has loaded.

    .venv/bin/python bench/goals_instructions.py --host 127.0.0.1 --port 9042
        [--tables skewed orders] [--goals copy copy-parquet ...]

Why: on a shared 2-core machine the CPU figures of bench/goals.py swing by more than some goals'
margins (the orders' rows by up to 1 us a row between runs). An instruction count does not move
with the load. It is not CPU time either (a cache miss costs more than an add; pyarrow's and the
C libraries' code runs at other rates than the interpreter's), so it stands beside the CPU medians,
never in place of them.

Per side, two processes run under callgrind: the full table and its first partition (start-up,
connection, imports: taken out as bench/goals.py takes them out). The figure is their difference
over the table's rows: every thread of the process, the driver's event loop included, client side
only. The sides:
- a goal's reader: `cqlsh-ext -e STATEMENT` (bench/readers.py's STATEMENTS, one process:
  CQLSH_EXT_SCAN_WORKERS=1, the native engine);
- its anchor: the bare scan (bench/readers.py's BARE), the floor (its anchor script, every value
  decompressed by the producers' C libraries) or the user's export script (bench/export_floor.py's
  USER_EXPORT, to Parquet or to JSON Lines).
Prints instructions a row per side and the ratio the goal names. About 50 times each process's
CPU time (the skewed table's Parquet script: about 8 minutes). Needs valgrind on PATH.
"""

from __future__ import annotations

import argparse
import re
import shutil
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from export_floor import user_export_code  # noqa: E402
from goals import ANCHORS, GOALS  # noqa: E402
from readers import (  # noqa: E402
    CQLSH_EXT,
    FIRST_PARTITION,
    KEYSPACE,
    SUFFIXES,
    anchor_code,
    loaded_rows,
    run_process,
    session_for,
    shell_command,
    shell_env,
    statement,
)

#: The tables bench/goals.py loads (their rows: what its load left, by its marker).
TABLES = ("skewed", "orders")
#: One line a process when it ends: "==PID== Collected : N".
COLLECTED = re.compile(r"^==(\d+)== Collected : (\d+)$", re.MULTILINE)
#: The goals against an anchor (one reader against another, the blob alone against the blob with
#: paths, is bench/goals.py's alone): each reader counted once, however many goals name it.
CPU_GOALS = tuple(goal for goal in GOALS if not goal.wall and goal.against in ANCHORS)


def counted(cmd: list[str], env: dict[str, str], out_dir: str) -> int:
    """The instructions of `cmd` and every process it starts, under callgrind."""
    wrap = ["valgrind", "--tool=callgrind", "--trace-children=yes",
            f"--callgrind-out-file={out_dir}/callgrind.%p.out"]
    run = run_process([*wrap, *cmd], env)
    per_process = {int(pid): int(n) for pid, n in COLLECTED.findall(run.out)}
    if not per_process:
        raise RuntimeError(f"no callgrind total in the output of {cmd[-1]!r}")
    return sum(per_process.values())


def first_partition(code: str, table: str) -> str:
    """An anchor script (its SELECT of the whole table) on the table's first partition."""
    scan = 'FROM {table}"'
    if scan not in code:
        raise RuntimeError("the anchor script's SELECT changed: update first_partition")
    return code.replace(scan, f'FROM {{table}} WHERE pk = {FIRST_PARTITION[table]}"')


def anchor_cmds(anchor: str, host: str, port: int, table: str, target: str) -> tuple[list[str], list[str]]:
    """The anchor's processes on the full table and on its first partition."""
    args = [host, str(port), f"{KEYSPACE}.{table}"]
    if anchor in ("bare", "floor"):
        code = anchor_code(anchor)
        return ([sys.executable, "-c", code, *args, anchor],
                [sys.executable, "-c", first_partition(code, table), *args, anchor])
    fmt = anchor.removeprefix("script ")
    script = [sys.executable, "-c", user_export_code(), *args, fmt, f"{target}.{fmt}"]
    return [*script, ""], [*script, f" WHERE pk = {FIRST_PARTITION[table]}"]


def shell_cmd(host: str, port: int, text: str) -> list[str]:
    # a process under callgrind reads its pages 50 times slower: each request may take that long
    return shell_command(CQLSH_EXT, host, port, text, timeout=600)


def per_row(full: list[str], one: list[str], env: dict[str, str], out_dir: str, rows: int,
            target: str) -> float:
    """Instructions a row: the full table's process less the first partition's."""
    counts = []
    for cmd in (full, one):
        counts.append(counted(cmd, env, out_dir))
        for suffix in SUFFIXES:  # a file a run wrote: the next run would refuse to overwrite it
            Path(target + suffix).unlink(missing_ok=True)
    return (counts[0] - counts[1]) / rows


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=9042)
    p.add_argument("--tables", nargs="+", default=list(TABLES), choices=TABLES)
    names = list(dict.fromkeys(goal.reader for goal in CPU_GOALS))
    p.add_argument("--goals", nargs="+", default=names, choices=names, help="the goals' readers")
    args = p.parse_args()
    if shutil.which("valgrind") is None:
        print("valgrind is not on PATH", file=sys.stderr)
        return 2
    goals = [goal for goal in CPU_GOALS if goal.reader in args.goals]
    session = session_for(args.host, args.port)
    loaded = {table: loaded_rows(session, table) for table in args.tables}
    session.cluster.shutdown()
    table_rows = {table: rows for table, rows in loaded.items() if rows is not None}
    if len(table_rows) < len(loaded):
        missing = sorted(set(loaded) - set(table_rows))
        print(f"not loaded: {missing} (bench/goals.py loads them)", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory() as work:
        env = shell_env(work, "native", "1")
        target = f"{work}/out"
        print(f"{'goal':<22} {'table':<7} {'at most':<22} {'ours':>9} {'anchor':>9} {'x':>6}"
              "  instructions a row")
        for table in args.tables:
            rows = table_rows[table]
            anchors: dict[str, float] = {}
            readers: dict[str, float] = {}
            for goal in goals:
                if goal.against not in anchors:
                    full, one = anchor_cmds(goal.against, args.host, args.port, table, target)
                    anchors[goal.against] = per_row(full, one, env, work, rows, target)
                if goal.reader not in readers:
                    readers[goal.reader] = per_row(
                        shell_cmd(args.host, args.port, statement(goal.reader, table, True, target)),
                        shell_cmd(args.host, args.port, statement(goal.reader, table, False, target)),
                        env, work, rows, target)
                ours = readers[goal.reader]
                x = ours / anchors[goal.against]
                print(f"{goal.label:<22} {table:<7} {f'{goal.limit:.1f}x {goal.against}':<22} {ours:>9,.0f} "
                      f"{anchors[goal.against]:>9,.0f} {x:>6.2f}  {'met' if x <= goal.limit else 'not'}",
                      flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
