"""Instructions per statement of the shell's own handling, counted by valgrind (callgrind): what
`ExtShell.handle_statement` adds to cqlsh for each kind of statement, from cqlsh's tokens to the
point where the statement is sent (cqlsh's own handling, and a payload query's reading, are left
out: nothing here needs a server).

    .venv/bin/python bench/statement_instructions.py [--statements 2000] [--kinds plain payload ...]
                                                     [--before OTHER_CHECKOUT]

Per kind: one statement handled --statements times in a process run twice under callgrind, once
with --statements and once with none; the difference over --statements is the figure. The table's
metadata is the driver's shape held in memory (blob `data`, text `note`); cqlsh's handle_statement
returns at once, a payload query stops at its plan, COPY (SELECT ...) TO at its plan, encode() in an
INSERT runs whole (its value written and verified, the statement rewritten). With --before, the
same count of another checkout (its cqlsh_ext first on sys.path) beside each figure. Needs
valgrind on PATH.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
KINDS = {
    "plain": "SELECT pk, note FROM ks.docs WHERE pk = 1;",
    "unknown": "SELECT JSON pk, note FROM ks.docs WHERE pk = 2;",
    "payload": "SELECT pk, data.status FROM ks.docs WHERE pk = 2;",
    "refused": "SELECT data.status FROM ks.docs WHERE data.n > 1;",
    "copy": "COPY (SELECT pk, data.status FROM ks.docs) TO 'out.jsonl';",
    "encode": "INSERT INTO ks.docs (pk, data) VALUES (3, encode('gzip', '{\"status\": \"SENT\"}'));",
    "insert": "INSERT INTO ks.docs (pk, note) VALUES (1, 'a note');",
}
WARM = 50


def _shell() -> Any:
    """An ExtShell that never connected: the driver's metadata of one table, cqlsh's own handling
    a no-op, a payload query and an export stopped at their plans."""
    from cqlshlib import cql3handling

    from cqlsh_ext.export import run as export_run
    from cqlsh_ext.payload_select import command
    from cqlsh_ext.settings import Settings
    from cqlsh_ext.shell import ext_shell
    from cqlsh_ext.shell.completion import register_grammar
    from cqlsh_ext.upstream import seams

    cqlshmain = seams.import_cqlshmain(None)
    register_grammar()
    if cqlshmain.cqlruleset is None:
        cqlshmain.setup_cqlruleset(cql3handling)
    columns = {name: SimpleNamespace(name=name, cql_type=kind)
               for name, kind in (("pk", "int"), ("data", "blob"), ("note", "text"))}
    table = SimpleNamespace(name="docs", columns=columns, partition_key=[columns["pk"]])
    keyspace = SimpleNamespace(tables={"docs": table}, views={}, user_types={}, functions={})
    sh: Any = object.__new__(ext_shell.shell_class(Settings()))
    sh.conn = SimpleNamespace(metadata=SimpleNamespace(keyspaces={"ks": keyspace}))
    sh.current_keyspace = "ks"
    sh.printerr = lambda *args, **kwargs: None
    ext_shell.Stock.handle_statement = lambda self, tokens, srcstr: True
    command.run = lambda *args: None
    export_run.run = lambda sh, statement: export_run._plan(sh, statement)
    return sh


def measured(kind: str, count: int) -> None:
    import contextlib
    import io

    from cqlsh_ext.upstream import seams

    sh = _shell()
    text = KINDS[kind]
    tokens = seams.import_cqlshmain(None).cqlruleset.cql_split_statements(text)[0][0]  # cqlsh's
    with contextlib.redirect_stderr(io.StringIO()):  # encode()'s line per value
        for _ in range(WARM + count):
            assert sh.handle_statement(tokens, text)


def instructions(checkout: Path, kind: str, count: int) -> int:
    env = {**os.environ, "PYTHONPATH": str(checkout)}
    command = ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", sys.executable, __file__,
               "--child", kind, str(count)]
    out = subprocess.run(command, capture_output=True, text=True, env=env, check=True)
    found = re.search(r"Collected : (\d+)", out.stderr)
    if found is None:
        raise RuntimeError(f"no count from callgrind: {out.stderr[-500:]}")
    return int(found.group(1))


def per_statement(checkout: Path, kind: str, count: int) -> float:
    return (instructions(checkout, kind, count) - instructions(checkout, kind, 0)) / count


def main() -> int:
    if len(sys.argv) == 4 and sys.argv[1] == "--child":
        measured(sys.argv[2], int(sys.argv[3]))
        return 0
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--statements", type=int, default=2000)
    parser.add_argument("--kinds", nargs="+", default=list(KINDS), choices=list(KINDS))
    parser.add_argument("--before", type=Path, help="another checkout to count beside this one")
    args = parser.parse_args()
    if shutil.which("valgrind") is None:
        print("valgrind is not installed", file=sys.stderr)
        return 1
    print(f"instructions per statement handled (callgrind, {args.statements:,} statements less none)")
    for kind in args.kinds:
        after = per_statement(ROOT, kind, args.statements)
        line = f"  {kind:<8} {after:10,.0f}"
        if args.before is not None:
            before = per_statement(args.before.resolve(), kind, args.statements)
            line += f"   before {before:10,.0f}   after / before {after / before:.2f}"
        print(line, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
