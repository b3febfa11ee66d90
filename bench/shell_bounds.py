"""The shell's work on a long statement before it is sent: peak memory and CPU of `cqlsh-ext` (and
`-d none`) for the statements cqlsh's grammar chokes on, against stock cqlsh, whose path (its grammar
on every SELECT, then again on the SELECT's text for the result's table) the shell took before its
bounds (shell/statement_bounds.py). Each run is a child of a small wrapper that reads the child's own peak
resident memory (ru_maxrss) and CPU (user + system) from getrusage(RUSAGE_CHILDREN), under an
address-space limit (--limit-gib, default 4) and a time limit (--seconds, default 300): a run that
passes either is reported as stopped there, not waited for.

    .venv/bin/python bench/shell_bounds.py [--host H] [--port P] [-u USER] [-p PASSWORD] [--repeat N]
                                           [--keyspace KS] [--limit-gib G] [--seconds S] [--no-stock]

The statements (a table of its own, KS.bounds_bench, one partition of 3 rows):
- in-e: SELECT ... WHERE pk = 0 AND ck IN (0,1,...,19999), 20,000 keys (108,889 bytes of them), -e;
- in-f: the same from -f, on one line; in-f-lines: one key a line (20,000 lines);
- and-chain: WHERE pk = 0 AND v = 'x' AND ... (4,000 terms, 48 KB), -e (the server refuses it: the
  figures are the shell's work up to that answer);
- in-3000: 3,000 keys, where stock cqlsh copes;
- worst-1mib: the shape that costs the lexers most within the shell's bound of 1 MiB a statement: an
  IN list of the key 1 written 524,228 times (a token every byte), -f (cqlsh-ext only: stock cqlsh
  with --stock-worst).
Figures: medians over --repeat runs (default 3) with their spread (min-max); stock cqlsh once when a
run of it reaches a limit.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from statement_shapes import server_arguments  # noqa: E402

BIN = Path(sys.executable).parent
#: The worst statement's size: the shell's bound on one (cql.grammar_bounds.STATEMENT_BYTES).
WORST_BYTES = 1 << 20
#: Runs argv[3:] under an address-space limit of argv[1] bytes and a time limit of argv[2] seconds;
#: writes its peak resident KiB, CPU seconds, exit status and wall seconds on stderr's last line.
WRAPPER = """
import resource, subprocess, sys, time
limit, seconds = int(sys.argv[1]), float(sys.argv[2])
def limits():
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
began = time.monotonic()
proc = subprocess.Popen(sys.argv[3:], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, preexec_fn=limits)
try:
    _, err = proc.communicate(timeout=seconds)
    code = proc.returncode
except subprocess.TimeoutExpired:
    proc.kill()
    _, err = proc.communicate()
    code = "timeout"
wall = time.monotonic() - began
usage = resource.getrusage(resource.RUSAGE_CHILDREN)
tail = err.decode(errors="replace").strip().splitlines()[-1:] or [""]
sys.stderr.write("%s\\n%d %.2f %s %.2f\\n" % (tail[0][:200], usage.ru_maxrss, usage.ru_utime + usage.ru_stime,
                                            code, wall))
"""


def statements(ks: str, directory: Path) -> dict[str, list[str]]:
    keys = ",".join(str(i) for i in range(20_000))
    select = f"SELECT pk, ck, v FROM {ks}.bounds_bench WHERE pk = 0 AND ck IN ({keys});"
    one_line, by_line = directory / "in.cql", directory / "in-lines.cql"
    one_line.write_text(select + "\n")
    by_line.write_text(select.replace(",", ",\n") + "\n")
    chain = (f"SELECT * FROM {ks}.bounds_bench WHERE pk = 0 AND "
             + " AND ".join("v = 'x'" for _ in range(4000)) + " ALLOW FILTERING;")
    few = ",".join(str(i) for i in range(3_000))
    worst = directory / "worst.cql"
    head = f"SELECT pk, ck, v FROM {ks}.bounds_bench WHERE pk = 0 AND ck IN ("
    worst.write_text(head + ",".join(["1"] * ((WORST_BYTES - len(head) - 3) // 2)) + ");\n")
    return {"in-e": ["-e", select], "in-f": ["-f", str(one_line)], "in-f-lines": ["-f", str(by_line)],
            "and-chain": ["-e", chain],
            "in-3000": ["-e", f"SELECT pk, ck, v FROM {ks}.bounds_bench WHERE pk = 0 AND ck IN ({few});"],
            "worst-1mib": ["-f", str(worst)]}


Figures = tuple[int, float, str, float, str]


def measure(program: list[str], args: list[str], limit: int, seconds: float) -> Figures:
    """(peak KiB, CPU s, exit status, wall s, stderr's last line) of one run."""
    proc = subprocess.run([sys.executable, "-c", WRAPPER, str(limit), str(seconds), *program, *args],
                          capture_output=True, text=True)
    said, figures = proc.stderr.strip().splitlines()[-2:]
    kib, cpu, code, wall = figures.split()
    return int(kib), float(cpu), code, float(wall), said


def _at_a_limit(run: Figures, limit: int) -> bool:
    """Whether a run ended at the time limit, or near the address-space limit (a MemoryError)."""
    return run[2] == "timeout" or run[0] * 1024 > 0.85 * limit


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    server_arguments(parser, "bounds_bench")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--limit-gib", type=float, default=4.0)
    parser.add_argument("--seconds", type=float, default=300.0)
    parser.add_argument("--no-stock", action="store_true", help="leave stock cqlsh out (it takes minutes)")
    parser.add_argument("--stock-worst", action="store_true", help="stock cqlsh on worst-1mib too")
    args = parser.parse_args()
    conn = [args.host, args.port, "-u", args.username, "-p", args.password]
    ks = args.keyspace
    setup = (f"CREATE KEYSPACE IF NOT EXISTS {ks} WITH replication = {{'class': 'SimpleStrategy', "
             f"'replication_factor': 1}}; CREATE TABLE IF NOT EXISTS {ks}.bounds_bench (pk int, ck int, "
             f"v text, PRIMARY KEY (pk, ck)); "
             f"INSERT INTO {ks}.bounds_bench (pk, ck, v) VALUES (0, 1, 'one'); "
             f"INSERT INTO {ks}.bounds_bench (pk, ck, v) VALUES (0, 7, 'seven'); "
             f"INSERT INTO {ks}.bounds_bench (pk, ck, v) VALUES (0, 19999, 'last');")
    subprocess.run([str(BIN / "cqlsh-ext"), *conn, "-e", setup], check=True, capture_output=True)
    limit = int(args.limit_gib * (1 << 30))
    programs = {"cqlsh-ext": [str(BIN / "cqlsh-ext"), *conn],
                "cqlsh-ext -d none": [str(BIN / "cqlsh-ext"), *conn, "-d", "none"]}
    if not args.no_stock:
        programs["stock cqlsh (before)"] = [str(BIN / "cqlsh"), *conn]
    print(f"peak resident memory and CPU (user + system) of the shell's process; medians of {args.repeat} "
          f"runs (min-max); limits {args.limit_gib:g} GiB of address space, {args.seconds:g} s")
    with tempfile.TemporaryDirectory() as directory:
        for name, shell_args in statements(ks, Path(directory)).items():
            for program, argv in programs.items():
                if name == "worst-1mib" and program.startswith("stock") and not args.stock_worst:
                    continue
                runs = []
                for _ in range(args.repeat):
                    runs.append(measure(argv, shell_args, limit, args.seconds))
                    if _at_a_limit(runs[-1], limit):  # once is enough
                        break
                kib = [r[0] / 1024 for r in runs]
                cpu = [r[1] for r in runs]
                wall = [r[3] for r in runs]
                ended = runs[-1][2]
                if _at_a_limit(runs[-1], limit):
                    how = (f"stopped at {args.seconds:g} s" if ended == "timeout"
                           else f"out of memory at the {args.limit_gib:g} GiB limit (exit {ended})")
                else:
                    how = {"0": "answered", "2": f"error: {runs[-1][4][:90]}"}.get(ended, f"exit {ended}")
                print(f"{name:11} {program:22} peak {statistics.median(kib):7.0f} MiB "
                      f"({min(kib):.0f}-{max(kib):.0f}), CPU {statistics.median(cpu):6.2f} s "
                      f"({min(cpu):.2f}-{max(cpu):.2f}), wall {statistics.median(wall):6.1f} s; {how}",
                      flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
