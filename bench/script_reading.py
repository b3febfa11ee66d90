"""A statement far past the shell's bounds from a `-f` file costs what it costs from stdin: linear.
cqlsh opened `-f`'s file (and SOURCE's) with codecs.open, whose readline looks for the line's end
again in all it read of the line at every chunk: on a4d3dd0 one line of 8 MB cost 9.9 s of CPU
before the shell measured and refused it, 24 MB 88 s, a statement of 65,537 lines 11 s, where the
same 8 MB through stdin cost 1.2 s (issue 107). The shell now reads a script as stdin is read
(shell/script.py), each character once, and refuses the statement at its bound
(shell/statement_bounds.py).

    .venv/bin/python bench/script_reading.py [--host H] [--port P] [-u USER] [-p PASSWORD] [--repeat N]

Each shape is run from `-f` and through stdin, --repeat times (default 3), the least CPU kept (the run
the machine's other work disturbed least), less that of an empty script's run (start-up and
connection). Figures are printed; the run fails (exit 1) when a shape's `-f` run costs its share or
more of what it cost on a4d3dd0 ("under N s of CPU where it took 10x that": a tenth; 8 MB a fifth),
or more than through stdin.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from statement_shapes import measure, server_arguments  # noqa: E402

BIN = Path(sys.executable).parent
IN_HEAD = "SELECT * FROM system.local WHERE key IN ("
#: Each shape: (its script, the CPU seconds its `-f` run cost on a4d3dd0, the share of that it must
#: stay under). 8 MB keeps a fifth: what is left is the measure of its 8 MB (4 million tokens), the
#: same through stdin.
SHAPES: dict[str, tuple[str, float, float]] = {
    "line-8mb": (IN_HEAD + "1," * (4 << 20) + "1);\n", 9.9, 0.2),
    "line-24mb": (IN_HEAD + "1," * (12 << 20) + "1);\n", 88.0, 0.1),
    "lines-65537": (IN_HEAD + "\n" + "1,\n" * 65_537 + "1);\n", 11.0, 0.1),
}
#: A `-f` run costs at most this much more than the same script through stdin (the machine's noise).
AS_STDIN = 1.5


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    server_arguments(parser, "system")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--seconds", type=float, default=300)
    args = parser.parse_args()
    program = [str(BIN / "cqlsh-ext"), args.host, args.port, "-u", args.username, "-p", args.password]
    failed = []
    with tempfile.TemporaryDirectory() as tmp:
        empty = Path(tmp) / "empty.cql"
        empty.write_text("")
        base = min(measure(program, empty, False, args.seconds)[0] for _ in range(args.repeat))
        print(f"an empty script: {base:.2f} s of CPU (start-up, connection), taken off each figure below")
        print(f"{'shape':<12} {'-f':>8} {'stdin':>8} {'before':>8} {'bound':>8}  said")
        for name, (script, before, share) in SHAPES.items():
            path = Path(tmp) / f"{name}.cql"
            path.write_text(script)
            cpu = {}
            said = ""
            for stdin in (False, True):
                runs = [measure(program, path, stdin, args.seconds) for _ in range(args.repeat)]
                cpu[stdin] = max(0.0, min(run[0] for run in runs) - base)
                said = said or runs[0][2]
            bound = before * share
            print(f"{name:<12} {cpu[False]:>7.2f}s {cpu[True]:>7.2f}s {before:>7.1f}s {bound:>7.2f}s  "
                  f"{said.split(':', 2)[-1][:70]}")
            if cpu[False] >= bound:
                failed.append(f"{name}: {cpu[False]:.2f} s of CPU from -f, not under {bound:.2f} s "
                              f"(it took {before:g} s)")
            if cpu[False] > AS_STDIN * cpu[True] + 0.1:
                failed.append(f"{name}: {cpu[False]:.2f} s of CPU from -f, {cpu[True]:.2f} s through stdin")
            if "refused" not in said:
                failed.append(f"{name}: not refused ({said[:100]})")
    for line in failed:
        print(f"FAILED {line}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
