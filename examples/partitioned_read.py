"""One statement's answer read by four processes at once, joined into one Arrow table.

    python3 examples/partitioned_read.py HOST PORT USER KEYSPACE "SELECT ..."   # asks the password

`db.partitions(statement, n)` cuts the answer into `n` parts along the table's token ring: plain,
picklable descriptors that carry the statement, its parameters and the answer's Arrow types, so
every part has one schema. Each process reads its part on a connection of its own
(`cqlsh_ext.read_partition`) and hands back its table and notes; the parts' rows together are the
whole answer's, and their notes' counts add up to the whole's (docs/api.md, "Partitions").
"""

from __future__ import annotations

import getpass
import sys
from collections import Counter
from concurrent.futures import ProcessPoolExecutor
from multiprocessing import get_context
from typing import Any

import pyarrow as pa

import cqlsh_ext

#: The notes' counts that add up over the parts.
COUNTS = ("rows_read", "matched", "undecodable", "cut")


def read_part(part: cqlsh_ext.Partition, connect_args: dict[str, Any]) -> tuple[pa.Table, dict[str, Any]]:
    """One part read in this process, on its own connection: its table and its notes."""
    with cqlsh_ext.read_partition(part, **connect_args) as answer:
        return answer.to_arrow(), answer.notes


def read_parallel(statement: str, connect_args: dict[str, Any], processes: int = 4,
                  params: Any = None) -> tuple[pa.Table, dict[str, Any]]:
    """The statement's answer read by `processes` processes: the joined table, the summed notes."""
    with cqlsh_ext.connect(**connect_args) as db:
        parts = db.partitions(statement, processes, params)
    # spawn: each worker starts clean (no copy of this process's driver threads).
    with ProcessPoolExecutor(len(parts), mp_context=get_context("spawn")) as pool:
        done = list(pool.map(read_part, parts, [connect_args] * len(parts)))
    table = pa.concat_tables([table for table, _notes in done])
    notes: dict[str, Any] = {name: sum(n[name] for _t, n in done) for name in COUNTS}
    kinds: Counter[str] = Counter()
    for _table, part_notes in done:
        kinds.update(part_notes["undecodable_by_kind"])
    notes["undecodable_by_kind"] = dict(kinds)
    notes["stopped"] = next((n["stopped"] for _t, n in done if n["stopped"]), None)
    return table, notes


def main(argv: list[str]) -> int:
    host, port, user, keyspace, statement = argv[1:6]
    args = {"host": host, "port": int(port), "username": user, "password": getpass.getpass(),
            "keyspace": keyspace}
    table, notes = read_parallel(statement, args)
    print(f"{table.num_rows:,} rows in {len(table.schema)} columns; {notes}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
