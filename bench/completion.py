#!/usr/bin/env python3
"""How long the interactive shell's completion takes on a schema of 100 tables.

    .venv/bin/python bench/completion.py [--host H] [--port P] [-u USER] [-p PASSWORD] [--tables N]

Creates keyspace `bench_completion` with N tables of 12 columns (once; kept for later runs),
connects a cqlsh-ext Shell as the interactive shell does, and times the completer prompt_toolkit
calls (cqlsh_ext.repl.completer.CqlCompleter) for typical inputs: median, 95th percentile and
maximum in milliseconds. The target is 50 ms per completion.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

KEYSPACE = "bench_completion"
TARGET_MS = 50.0

INPUTS = [
    "sel",
    "SELECT * FROM ",
    f"SELECT * FROM {KEYSPACE}.",
    f"SELECT * FROM {KEYSPACE}.t_0",
    f"SELECT * FROM {KEYSPACE}.t_042 WHERE ",
    f"SELECT * FROM {KEYSPACE}.t_042 WHERE col_0",
    f"SELECT col_ FROM {KEYSPACE}.t_042",  # cursor after 'col_' is handled below
    f"INSERT INTO {KEYSPACE}.t_099 (",
    f"UPDATE {KEYSPACE}.t_010 SET ",
    f"DESCRIBE TABLE {KEYSPACE}.",
    "USE ",
    "SELECT * FROM t_05",  # the current keyspace's tables (the shell is USE-ing it)
    "CREATE TABLE x (a ",
    "DECOMPRESS ",
    "OUTPUT FORMAT ",
]


def ensure_schema(session: object, tables: int) -> None:
    session.execute(f"CREATE KEYSPACE IF NOT EXISTS {KEYSPACE} WITH replication = "  # type: ignore[attr-defined]
                    "{'class': 'SimpleStrategy', 'replication_factor': 1}")
    existing = {row.table_name for row in session.execute(  # type: ignore[attr-defined]
        "SELECT table_name FROM system_schema.tables WHERE keyspace_name = %s", (KEYSPACE,))}
    columns = ", ".join(f"col_{i} text" for i in range(10))
    for n in range(tables):
        name = f"t_{n:03d}"
        if name not in existing:
            session.execute(f"CREATE TABLE {KEYSPACE}.{name} (id int, ts timestamp, {columns}, "  # type: ignore[attr-defined]
                            "PRIMARY KEY (id, ts))")


def make_shell(host: str, port: int, user: str, password: str) -> object:
    from cassandra.auth import PlainTextAuthProvider

    from cqlsh_ext import seams

    cqlshmain = seams.import_cqlshmain(None)
    from cqlsh_ext import shell

    shell.register_commands()
    from cqlshlib import cql3handling

    cqlshmain.setup_cqlruleset(cql3handling)
    from cqlsh_ext.settings import Settings

    return shell.shell_class(Settings())(host, port, tty=False, encoding="utf-8",
                                         auth_provider=PlainTextAuthProvider(user, password))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=9042)
    parser.add_argument("-u", "--user", default="cassandra")
    parser.add_argument("-p", "--password", default="cassandra")
    parser.add_argument("--tables", type=int, default=100)
    parser.add_argument("--repeat", type=int, default=30)
    args = parser.parse_args()

    from cassandra.auth import PlainTextAuthProvider
    from cassandra.cluster import Cluster

    auth = PlainTextAuthProvider(args.user, args.password)
    cluster = Cluster([args.host], port=args.port, auth_provider=auth)
    ensure_schema(cluster.connect(), args.tables)
    cluster.shutdown()

    sh = make_shell(args.host, args.port, args.user, args.password)
    from cqlshlib import cqlshmain
    from prompt_toolkit.completion import CompleteEvent
    from prompt_toolkit.document import Document

    from cqlsh_ext.repl.completer import CqlCompleter

    sh.current_keyspace = KEYSPACE  # type: ignore[attr-defined]  # as after USE
    completer = CqlCompleter(sh, cqlshmain.cqlruleset)
    tables = len(sh.get_columnfamily_names(KEYSPACE))  # type: ignore[attr-defined]
    print(f"schema: {KEYSPACE} with {tables} tables; {args.repeat} runs per input (Tab: all candidates)")
    print(f"{'input':<52} {'found':>5} {'median':>8} {'p95':>8} {'max':>8}  (ms)")
    worst = 0.0
    for text in INPUTS:
        cursor = text.index("col_") + 4 if text.startswith("SELECT col_") else len(text)
        document = Document(text, cursor)
        event = CompleteEvent(completion_requested=True)
        times = []
        found = 0
        for _ in range(args.repeat):
            t0 = time.perf_counter()
            found = len(list(completer.get_completions(document, event)))
            times.append((time.perf_counter() - t0) * 1000)
        times.sort()
        p95 = times[min(len(times) - 1, int(len(times) * 0.95))]
        worst = max(worst, times[-1])
        shown = text[:cursor] + ("|" if cursor < len(text) else "")
        print(f"{shown:<52} {found:>5} {statistics.median(times):>8.2f} {p95:>8.2f} {times[-1]:>8.2f}")
    verdict = "OK" if worst <= TARGET_MS else "OVER"
    print(f"worst single completion: {worst:.2f} ms (target {TARGET_MS:.0f} ms): {verdict}")
    sh.conn.shutdown()  # type: ignore[attr-defined]
    return 0 if worst <= TARGET_MS else 1


if __name__ == "__main__":
    sys.exit(main())
