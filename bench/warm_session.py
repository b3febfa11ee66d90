"""Issue 108's warm sessions: a call's client CPU through `cqlsh-ext --session NAME` against a cold
run of the same statement (`cqlsh-ext HOST PORT -u -p -e STATEMENT`). Goal: at most a tenth.

    .venv/bin/python bench/warm_session.py --port P [--host H] [-u USER] [-p PASSWORD] [--runs N]
        [--statement CQL] [--program PATH] [--callgrind N]

Figures: the CPU (user + system) of the command's process and its children, from
getrusage(RUSAGE_CHILDREN) in a small wrapper around it (bench/statement_shapes.py's), medians of
--runs runs (default 5), cold and warm interleaved. The warm call's own figure is its client's
(what an assistant's shell pays); what the session spent on the call (its statement, on the
connection it keeps) is printed beside it, from the session process's own CPU and its children's,
read through /proc. `python -c pass` of the program's own interpreter (its script's `#!` line) is
timed beside them: the client's floor (site's .pth files: an editable install's path finder is most of
it). --program measures another install's `cqlsh-ext` (default: this interpreter's, the worktree's
editable one), e.g. a wheel installed into a scratch venv, as users run it.
With --callgrind N, also the instructions of each (valgrind --tool=callgrind, bench/startup.py's
count, medians of N): CPU time on a shared, loaded machine wanders by a tenth from run to run; the
instructions do not.
Each run's output is checked: the warm answer must equal the cold one, or the run counts for nothing.
"""

from __future__ import annotations

import argparse
import os
import signal
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from startup import instructions_of  # noqa: E402
from statement_shapes import BIN, server_arguments  # noqa: E402

#: Runs the command argv[1:]: its output, exit status and the CPU seconds of it and its children.
WRAPPER = """
import resource, subprocess, sys
proc = subprocess.run(sys.argv[1:], capture_output=True)
used = resource.getrusage(resource.RUSAGE_CHILDREN)
sys.stdout.buffer.write(b"%f %d\\n" % (used.ru_utime + used.ru_stime, proc.returncode) + proc.stdout)
"""


def timed(argv: list[str], env: dict[str, str]) -> tuple[float, int, bytes]:
    done = subprocess.run([sys.executable, "-c", WRAPPER, *argv], capture_output=True, env=env, timeout=300,
                          check=True).stdout
    head, _, out = done.partition(b"\n")
    cpu, code = head.split()
    return float(cpu), int(code), out


def session_cpu(pid: int) -> float:
    """The session's CPU so far, its own and its reaped children's: /proc's utime + stime + cutime +
    cstime."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return sum(int(fields[at]) for at in (11, 12, 13, 14)) / os.sysconf("SC_CLK_TCK")


def interpreter(program: str) -> str:
    """The Python a console script runs on: its `#!` line's."""
    with open(program, "rb") as script:
        first = script.readline()
    if not first.startswith(b"#!"):
        raise SystemExit(f"{program} is not a script with a #! line")
    return first[2:].decode().strip()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    server_arguments(parser, "warm_bench")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--statement", default="SELECT release_version FROM system.local")
    parser.add_argument("--program", default=str(BIN / "cqlsh-ext"),
                        help="the cqlsh-ext console script measured (default: this interpreter's)")
    parser.add_argument("--callgrind", type=int, default=0, metavar="N",
                        help="also count instructions, N runs of each (valgrind)")
    args = parser.parse_args()
    program = args.program
    python = interpreter(program)
    login = [args.host, str(args.port), "-u", args.username, "-p", args.password]
    with tempfile.TemporaryDirectory() as runtime:
        env = {**os.environ, "XDG_RUNTIME_DIR": runtime}
        server = subprocess.Popen([program, "--serve", "bench", *login], stdin=subprocess.DEVNULL,
                                  stderr=subprocess.PIPE, text=True, env=env)
        assert server.stderr is not None
        for line in server.stderr:
            if "is ready" in line:
                break
        else:
            raise SystemExit(f"the session did not start (exit code {server.wait()})")
        cold_cpu, warm_cpu, served_cpu, bare_cpu = [], [], [], []
        try:
            for _ in range(args.runs):
                cpu, code, cold = timed([program, *login, "-e", args.statement], env)
                cold_cpu.append(cpu)
                before = session_cpu(server.pid)
                cpu, warm_code, warm = timed([program, "--session", "bench", "-e", args.statement], env)
                if (warm_code, warm) != (code, cold):
                    raise SystemExit(f"the warm call answered otherwise: {warm!r} (exit {warm_code}) "
                                     f"against {cold!r} (exit {code})")
                warm_cpu.append(cpu)
                served_cpu.append(session_cpu(server.pid) - before)
                bare_cpu.append(timed([python, "-c", "pass"], env)[0])
            counted: dict[str, list[int]] = {"cold": [], "warm": [], "bare": []}
            for _ in range(args.callgrind):
                counted["cold"].append(instructions_of([program, *login, "-e", args.statement], env))
                counted["warm"].append(instructions_of([program, "--session", "bench", "-e", args.statement],
                                                       env))
                counted["bare"].append(instructions_of([python, "-c", "pass"], env))
        finally:
            server.send_signal(signal.SIGINT)
            server.communicate(timeout=60)
    cold_ms, warm_ms = statistics.median(cold_cpu) * 1000, statistics.median(warm_cpu) * 1000
    print(f"program:                    {program}")
    print(f"cold run, client CPU:       {cold_ms:7.1f} ms (median of {args.runs}; "
          f"{min(cold_cpu) * 1000:.1f}-{max(cold_cpu) * 1000:.1f})")
    print(f"warm call, client CPU:      {warm_ms:7.1f} ms ({min(warm_cpu) * 1000:.1f}-"
          f"{max(warm_cpu) * 1000:.1f})")
    print(f"warm call, in the session:  {statistics.median(served_cpu) * 1000:7.1f} ms (the call's statement "
          f"on the session's kept connection)")
    bare_ms = statistics.median(bare_cpu) * 1000
    print(f"python -c pass:             {bare_ms:7.1f} ms (the same interpreter's start, its site and .pth "
          f"files: the client's floor)")
    print(f"warm / cold, client:        {warm_ms / cold_ms:7.3f} (goal: at most 0.1; the floor alone "
          f"{bare_ms / cold_ms:.3f})")
    if args.callgrind:
        cold_i, warm_i, bare_i = (statistics.median(counted[side]) / 1e6 for side in ("cold", "warm", "bare"))
        print(f"instructions (median of {args.callgrind}): cold {cold_i:.1f} M, warm {warm_i:.1f} M, "
              f"python -c pass {bare_i:.1f} M; warm / cold {warm_i / cold_i:.3f} (the floor alone "
              f"{bare_i / cold_i:.3f})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
