"""A payload condition's IN list of 20,000 bound Decimals through the API: the CPU of reading its
markers and binding them. On a4d3dd0 each marker's index was counted again over every token before
it and each bound value copied the list again (quadratic: 17.3 s of CPU on a 2-core machine, where
the shell read 60,000 literals in 2.6 s); now each once (query.grammar: read_marker, _bound).

    .venv/bin/python bench/bound_numbers.py [--host H] [--port P] [-u USER] [-p PASSWORD] [--repeat N]

Prints the least CPU of --repeat runs (default 3) of db.query(...).records() on a table of one row
(KS.t, made here), and fails (exit 1) when it is a tenth of a4d3dd0's or more ("under N s of CPU
where it took 10x that").
"""

from __future__ import annotations

import argparse
import resource
import sys
from decimal import Decimal
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from statement_shapes import server_arguments  # noqa: E402

KEYS = 20_000
#: What it cost on a4d3dd0 (CPU seconds).
BEFORE = 17.3


def cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def main() -> int:
    import cqlsh_ext

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    server_arguments(parser, "bound_numbers_bench")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    db = cqlsh_ext.connect(args.host, int(args.port), username=args.username, password=args.password)
    ks = args.keyspace
    db.session.execute(f"CREATE KEYSPACE IF NOT EXISTS {ks} WITH replication = "
                       "{'class': 'SimpleStrategy', 'replication_factor': 1}")
    db.session.execute(f"CREATE TABLE IF NOT EXISTS {ks}.t (k int PRIMARY KEY, data blob)")
    db.session.execute(f"INSERT INTO {ks}.t (k, data) VALUES (1, textAsBlob('{{\"n\": 0.25}}'))")
    keys = [Decimal(i) / 4 for i in range(KEYS)]
    statement = f"SELECT k FROM {ks}.t WHERE data.n IN ({', '.join(['?'] * KEYS)}) ALLOW FILTERING"
    spent = []
    for _ in range(args.repeat):
        began = cpu()
        rows = list(db.query(statement, keys).records())
        spent.append(cpu() - began)
        assert rows == [{"k": 1}], rows
    least = min(spent)
    bound = BEFORE / 10
    print(f"an IN list of {KEYS:,} bound Decimals: {least:.2f} s of CPU (runs: "
          f"{', '.join(f'{s:.2f}' for s in spent)}); a4d3dd0: {BEFORE} s; bound {bound:.2f} s")
    if least >= bound:
        print(f"FAILED: {least:.2f} s, not under {bound:.2f} s")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
