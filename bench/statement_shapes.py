"""The shell's time on each shape of a long statement, by size: the CPU (user + system) of the
shell's process from its start to its end, less that of the same run on an empty script (its
start-up and connection), and what became of the statement (answered, or refused with its line).
The curve is linear where the shell measures a statement as its lines come
(shell/statement_bounds.py); before, cqlsh's loop lexed all of a statement again at every line
(an unclosed comment of 100,000 lines took 123 s, a payload condition chain of 20,000 ANDs 113 s).

    .venv/bin/python bench/statement_shapes.py [--host H] [--port P] [-u USER] [-p PASSWORD]
        [--keyspace KS] [--stdin] [--max-lines N] [--max-bytes N] [--shapes a,b] [--seconds S]
        [--repeat N] [--before PROGRAM]

Each run is a child of a small wrapper that reads its CPU from getrusage(RUSAGE_CHILDREN), under a
time limit (--seconds, default 300): a run past it is said to be stopped there. Each is run
--repeat times (default 3), the least CPU said (the run the machine's other work disturbed least).
The shapes (a table of their own, KS.shapes, one partition of 3 rows; each script ends with a SELECT
count(*) the shell answers after the shape, unless the shape leaves the rest of the script inside
it):

- comment-lines: `/*`, then N lines of `x;` (the comment never closed);
- string-lines: a SELECT whose string is never closed, then N lines of `x;`;
- semicolons: N lines of `;` (statements of nothing);
- in-lines: an IN list a key a line, N lines;
- in-bytes: an IN list of the key 1 on one line, N bytes (a token a byte: the lexers' worst);
- chain-bytes: a payload condition chain, `data.k1 = 1 AND data.k2 = 1 ...`, N bytes;
- literal-bytes: a string literal of N bytes.

Line shapes go from 1,024 lines to --max-lines (default 1,048,576) by fours, byte shapes from
16 KiB to --max-bytes (default 1 MiB) by twos. --stdin pipes the script to the shell instead of -f.
--before PROGRAM runs another build (a checkout's .venv/bin/cqlsh-ext, or stock cqlsh) beside it.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

BIN = Path(sys.executable).parent
#: Runs argv[2:] with stdin from the file argv[1] ("-": none) under a time limit of argv[0]... : its
#: CPU seconds, exit status and the first line of stderr that is not cqlsh's password warning.
WRAPPER = """
import resource, subprocess, sys
seconds, given = float(sys.argv[1]), sys.argv[2]
stdin = open(given, "rb") if given != "-" else subprocess.DEVNULL
proc = subprocess.Popen(sys.argv[3:], stdin=stdin, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
try:
    _, err = proc.communicate(timeout=seconds)
    code = str(proc.returncode)
except subprocess.TimeoutExpired:
    proc.kill()
    _, err = proc.communicate()
    code = "timeout"
usage = resource.getrusage(resource.RUSAGE_CHILDREN)
said = [line for line in err.decode(errors="replace").splitlines()
        if line.strip() and not line.startswith(("Warning: Using a password", "Recommendation: "))]
sys.stderr.write("%s\\n%.2f %s\\n" % ((said or [""])[0][:300], usage.ru_utime + usage.ru_stime, code))
"""

Shape = Callable[[str, int], str]


def server_arguments(parser: argparse.ArgumentParser, keyspace: str) -> None:
    """The test server's address and login, and the keyspace the bench makes there."""
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", default="9042")
    parser.add_argument("-u", "--username", default="cassandra")
    parser.add_argument("-p", "--password", default="cassandra")
    parser.add_argument("--keyspace", default=keyspace)


def shapes(ks: str) -> dict[str, tuple[str, Shape]]:
    """name -> (unit, the script of that size)."""
    count = f"SELECT count(*) FROM {ks}.shapes WHERE pk = 0;\n"
    select = f"SELECT * FROM {ks}.shapes WHERE pk = 0"

    def in_bytes(_: str, size: int) -> str:
        head = f"{select} AND ck IN ("
        return head + ",".join(["1"] * max(1, (size - len(head) - 2) // 2)) + ");\n" + count

    def chain_bytes(_: str, size: int) -> str:
        conditions = [f"data.k{i} = 1" for i in range(size // 14)]
        text = f"{select} AND " + " AND ".join(conditions)
        return text[:max(len(select), size - 20)].rpartition(" AND ")[0] + " ALLOW FILTERING;\n" + count

    return {
        "comment-lines": ("lines", lambda _, n: "/*\n" + "x;\n" * n),
        "string-lines": ("lines", lambda _, n: f"{select} AND v = '\n" + "x;\n" * n),
        "semicolons": ("lines", lambda _, n: ";\n" * n + count),
        "in-lines": ("lines", lambda _, n: f"{select} AND ck IN (\n" + "1,\n" * n + "1);\n" + count),
        "in-bytes": ("bytes", in_bytes),
        "chain-bytes": ("bytes", chain_bytes),
        "literal-bytes": ("bytes", lambda _, n: f"{select} AND v = '" + "x" * max(1, n - 80)
                          + "' ALLOW FILTERING;\n" + count),
    }


def measure(program: list[str], script: Path, stdin: bool, seconds: float) -> tuple[float, str, str]:
    """(CPU seconds, exit status or "timeout", the first line said) of one run of `script`."""
    args = [*program] if stdin else [*program, "-f", str(script)]
    proc = subprocess.run([sys.executable, "-c", WRAPPER, str(seconds), str(script) if stdin else "-", *args],
                          capture_output=True, text=True)
    said, figures = proc.stderr.rstrip("\n").rsplit("\n", 1) if "\n" in proc.stderr.strip() \
        else ("", proc.stderr.strip())
    cpu, code = figures.split()
    return float(cpu), code, said


def outcome(code: str, said: str, seconds: float) -> str:
    if code == "timeout":
        return f"stopped at {seconds:g} s"
    if code == "0":
        return "answered" + (f" ({said[:60]}...)" if said else "")
    line = said.split(":", 2)[-1] if said.count(":") >= 2 and said.split(":", 2)[1].isdigit() else said
    return f"said (exit {code}): {line[:110]}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    server_arguments(parser, "shapes_bench")
    parser.add_argument("--stdin", action="store_true", help="pipe each script to the shell (not -f)")
    parser.add_argument("--max-lines", type=int, default=1 << 20)
    parser.add_argument("--max-bytes", type=int, default=1 << 20)
    parser.add_argument("--shapes", default="", help="comma-separated names (default: all)")
    parser.add_argument("--seconds", type=float, default=300.0)
    parser.add_argument("--repeat", type=int, default=3, help="runs of each; the least CPU is said")
    parser.add_argument("--before", help="another shell to run beside (a checkout's cqlsh-ext, stock cqlsh)")
    args = parser.parse_args()
    conn = [args.host, args.port, "-u", args.username, "-p", args.password]
    ks = args.keyspace
    setup = (f"CREATE KEYSPACE IF NOT EXISTS {ks} WITH replication = {{'class': 'SimpleStrategy', "
             f"'replication_factor': 1}}; CREATE TABLE IF NOT EXISTS {ks}.shapes (pk int, ck int, v text, "
             f"data text, PRIMARY KEY (pk, ck)); "
             f"INSERT INTO {ks}.shapes (pk, ck, v, data) VALUES (0, 1, 'one', '{{\"k1\": 1}}'); "
             f"INSERT INTO {ks}.shapes (pk, ck, v, data) VALUES (0, 2, 'two', '{{\"k2\": 1}}'); "
             f"INSERT INTO {ks}.shapes (pk, ck, v) VALUES (0, 3, 'three');")
    subprocess.run([str(BIN / "cqlsh-ext"), *conn, "-e", setup], check=True, capture_output=True)
    programs = {"cqlsh-ext": [str(BIN / "cqlsh-ext"), *conn]}
    if args.before:
        programs["before"] = [args.before, *conn]
    chosen = [name for name in args.shapes.split(",") if name]
    print(f"CPU (user + system) of the shell's process less its start-up, by shape and size "
          f"({'stdin' if args.stdin else '-f'}; time limit {args.seconds:g} s)", flush=True)
    with tempfile.TemporaryDirectory() as directory:
        empty = Path(directory) / "empty.cql"
        empty.write_text("")
        start_up = {name: min(measure(program, empty, args.stdin, args.seconds)[0] for _ in range(3))
                    for name, program in programs.items()}
        print("start-up: " + ", ".join(f"{name} {cpu:.2f} s" for name, cpu in start_up.items()), flush=True)
        script = Path(directory) / "shape.cql"
        for name, (unit, make) in shapes(ks).items():
            if chosen and name not in chosen:
                continue
            sizes = []
            size = 1 << 10 if unit == "lines" else 16 << 10
            top = args.max_lines if unit == "lines" else args.max_bytes
            while size < top:
                sizes.append(size)
                size *= 4 if unit == "lines" else 2
            sizes.append(top)
            stopped: set[str] = set()
            for size in sizes:
                script.write_text(make(ks, size))
                for program, argv in programs.items():
                    if program in stopped:
                        continue
                    runs = []
                    for _ in range(args.repeat):
                        runs.append(measure(argv, script, args.stdin, args.seconds))
                        if runs[-1][1] == "timeout":
                            stopped.add(program)  # larger sizes would stop there too
                            break
                    cpu = min(run[0] for run in runs) - start_up[program]
                    print(f"{name:14} {size:>9,} {unit:5} {program:9} CPU {max(0.0, cpu):7.2f} s  "
                          f"{outcome(runs[-1][1], runs[-1][2], args.seconds)}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
