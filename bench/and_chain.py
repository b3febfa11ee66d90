"""Issue 83's AND chain through the shell's reading: `SELECT * FROM KS.chain WHERE pk = 0 AND
data.a = 1 AND data.a = 1 ... ALLOW FILTERING`, 20,000 terms (300 KB) in a -f script, and beside it
the chain of as many distinct terms (`data.k0 = 0 AND data.k1 = 1 ...`), where no condition is
another's. Each is read as every statement is (the shell's measure of its text, cqlsh's
lexer, the shell's lexer, the payload-query parser, the plan, its answer of the table's 2 rows).

    .venv/bin/python bench/and_chain.py --port P [--host H] [-u USER] [-p PASSWORD] [--terms N]
        [--repeat N] [--program PROGRAM] [--before PROGRAM]

Figures: the CPU (user + system) of the shell's process from getrusage(RUSAGE_CHILDREN) around it
(bench/statement_shapes.py's wrapper), whole and less that of the same run on an empty script (its
start-up and connection); the least of --repeat runs (default 3), the run the machine's other work
disturbed least; a run that does not answer counts for nothing. --before PROGRAM runs another
build beside, interleaved in the same run (a checkout's .venv/bin/cqlsh-ext, or a script that runs
a copy of the package); --program measures another build than this checkout's cqlsh-ext (a copy
of it made at the same moment as --before's, when the checkout changes under the run).
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from statement_shapes import BIN, measure, outcome, server_arguments  # noqa: E402

#: What the table holds: two JSON documents long enough to read as text, one of which the chain keeps.
SETUP = ("CREATE KEYSPACE IF NOT EXISTS {ks} WITH replication = {{'class': 'SimpleStrategy', "
         "'replication_factor': 1}}; CREATE TABLE IF NOT EXISTS {ks}.chain (pk int, ck int, data text, "
         "PRIMARY KEY (pk, ck)); "
         "INSERT INTO {ks}.chain (pk, ck, data) VALUES (0, 1, '{{\"a\": 1, \"note\": \"the first\"}}'); "
         "INSERT INTO {ks}.chain (pk, ck, data) VALUES (0, 2, '{{\"a\": 2, \"note\": \"the second\"}}');")


def chains(ks: str, terms: int) -> dict[str, str]:
    select = f"SELECT * FROM {ks}.chain WHERE pk = 0 AND "
    end = " ALLOW FILTERING;\n"
    return {"same": select + " AND ".join(["data.a = 1"] * terms) + end,
            "distinct": select + " AND ".join(f"data.k{i} = {i}" for i in range(terms)) + end}


def answered(run: tuple[float, str, str], empty: bool) -> bool:
    """A run that did what it was given: exit status 0, and a chain's payload query answered."""
    _, code, said = run
    return code == "0" and (empty or said.startswith("payload query: 2 rows read"))


def least(runs: list[tuple[float, str, str]], empty: bool = False) -> float:
    """The least CPU of the runs that answered: one that failed says nothing of the reading."""
    cpus = [run[0] for run in runs if answered(run, empty)]
    return min(cpus) if cpus else float("nan")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    server_arguments(parser, "and_chain_bench")
    parser.add_argument("--terms", type=int, default=20_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--seconds", type=float, default=300.0)
    parser.add_argument("--program", default=str(BIN / "cqlsh-ext"), help="the shell measured")
    parser.add_argument("--before", help="another shell to run beside (a checkout's cqlsh-ext, a script)")
    args = parser.parse_args()
    conn = [args.host, args.port, "-u", args.username, "-p", args.password]
    subprocess.run([str(BIN / "cqlsh-ext"), *conn, "-e", SETUP.format(ks=args.keyspace)], check=True,
                   capture_output=True)
    programs = {"after": [args.program, *conn]}
    if args.before:
        programs["before"] = [args.before, *conn]
    print(f"CPU (user + system) of the shell's process, least of {args.repeat} runs; -f; "
          f"{args.terms:,} terms", flush=True)
    with tempfile.TemporaryDirectory() as directory:
        empty = Path(directory) / "empty.cql"
        empty.write_text("")
        scripts = {}
        for name, text in chains(args.keyspace, args.terms).items():
            scripts[name] = Path(directory) / f"{name}.cql"
            scripts[name].write_text(text)
        # Interleaved, a round of every run at a time: the machine's load falls on each alike.
        runs: dict[tuple[str, str], list[tuple[float, str, str]]] = {}
        for _ in range(args.repeat):
            for program, argv in programs.items():
                for name, script in {"empty": empty, **scripts}.items():
                    runs.setdefault((program, name), []).append(measure(argv, script, False, args.seconds))
        for program in programs:
            start_up = least(runs[(program, "empty")], empty=True)
            print(f"{program:9} start-up (an empty script): CPU {start_up:5.2f} s", flush=True)
            for name in scripts:
                done = runs[(program, name)]
                cpu = least(done)
                _, code, said = done[-1]
                every = ", ".join(f"{run[0]:.2f}" if answered(run, False) else f"{run[0]:.2f} (failed)"
                                  for run in done)
                print(f"{program:9} {name:8} chain: CPU {cpu:5.2f} s in all, {cpu - start_up:5.2f} s less "
                      f"the start-up (runs: {every})  {outcome(code, said, args.seconds)}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
