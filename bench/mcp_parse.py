"""What reading one statement costs `cqlsh-ext mcp` before it reaches the server, by the statement's
shape and size: the figures the server's input bounds are chosen from (docs/mcp.md, "Bounded
before parsing"; cqlsh_ext/mcp_server/bounds.py).

Each reading runs in a fresh child process (one statement, one process: its peak memory is its own),
timed by CPU (getrusage: the machine is shared, wall time is noisy) and by its peak resident set's
growth over the process after start-up (VmHWM). The stages, in the order the server runs them:

  lex        the shell's lexer (cql.lexer.Lexed)
  gate       the read-only gate (mcp_server.gate.read: the read-only rule, and the bounds' counts
             of the shell's tokens and of them as cqlsh's lexer counts them)
  payload    the payload-query parser (query.grammar.parse, plain=True), for a table (id int, data blob)
  cqlsh      cqlsh's lexer and own grammar (cql_whole_parse_tokens, start symbol cqlshCommand): what
             cqlsh's handle_statement runs for every statement it has a do_<word> for (SELECT among them)

A child is given a CPU limit (--cpu, seconds) and an address-space limit (--memory, MB); a reading
that passes either is reported as such, not waited for.

    .venv/bin/python bench/mcp_parse.py [--shapes in,payload_in,...] [--sizes 250,500,1000,...]
        [--bounds]      each shape at the largest size the server's bounds let through

Figures only: nothing is asserted.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]
sys.path.insert(0, str(ROOT))


def statement(shape: str, n: int) -> str:
    """A statement of `shape` with `n` repeated parts (items, columns, conditions, bytes)."""
    if shape == "in":  # a partition key IN list: the 20,000-key statement at n = 20,000
        return f"SELECT * FROM ks.t WHERE id IN ({', '.join(str(1_000_000 + i) for i in range(n))})"
    if shape == "payload_in":
        keys = ", ".join(f"'S{i:06d}'" for i in range(n))
        return f"SELECT id FROM ks.t WHERE data.status IN ({keys}) ALLOW FILTERING"
    if shape == "columns":
        return f"SELECT {', '.join('id' for _ in range(n))} FROM ks.t"
    if shape == "and":
        conditions = " ".join(f"AND c{i} = {i}" for i in range(n))
        return f"SELECT * FROM ks.t WHERE id = 1 {conditions} ALLOW FILTERING"
    if shape == "nested":  # function calls inside one another
        return f"SELECT {'blobastext(' * n}data{')' * n} FROM ks.t"
    if shape == "string":  # one literal of n bytes: one token, however long
        return f"SELECT * FROM ks.t WHERE id = '{'x' * n}'"
    if shape == "comment":
        return f"SELECT * FROM ks.t /* {'x' * n} */ WHERE id = 1"
    if shape == "tuple_in":  # a multi-column IN: tuples of three
        return f"SELECT * FROM ks.t WHERE (a, b, c) IN ({', '.join(f'({i}, {i}, {i})' for i in range(n))})"
    if shape == "sum":  # arithmetic: 1 + 1 + ... (CQL 4's operators)
        return f"SELECT {' + '.join('1' for _ in range(n))} FROM ks.t"
    if shape == "path":  # one long payload path
        return f"SELECT data{''.join(f'.k{i}' for i in range(n))} FROM ks.t"
    if shape == "commas":  # a syntax error: what cqlsh's grammar tries before it gives up
        return f"SELECT * FROM ks.t WHERE id IN ({', ' * n})"
    if shape == "parens":
        return f"SELECT * FROM ks.t WHERE id = {'(' * n}1{')' * n}"
    if shape == "words":  # words the grammar cannot place
        return f"SELECT * FROM ks.t WHERE {' '.join(f'w{i}' for i in range(n))}"
    raise SystemExit(f"no shape {shape}")


CHILD = r"""
import json, resource, sys, time
sys.path.insert(0, sys.argv[1])
shape, n, cpu, memory = sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
from bench.mcp_parse import statement
from cqlsh_ext.upstream import seams
cqlshmain = seams.import_cqlshmain(None)
from cqlshlib import cql3handling
from cqlsh_ext.shell.completion import register_grammar
register_grammar()
cqlshmain.setup_cqlruleset(cql3handling)
from cqlsh_ext.cql.lexer import Lexed
from cqlsh_ext.mcp_server import gate
from cqlsh_ext.query import grammar
schema = grammar.Schema({"id": "int", "data": "blob"}, ("id",))

def hwm():
    for line in open("/proc/self/status"):
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) * 1024
text = statement(shape, n)
# Warm up each stage on a small statement of the same shape (imports, the grammar's caches).
small = statement(shape, 3)


def cqlsh_parse(source):
    source += "\n;"
    tokens = seams.split_statements(source)[0]
    return cqlshmain.cqlruleset.cql_whole_parse_tokens(tokens, srcstr=source, startsymbol="cqlshCommand")


gate.read(small)
cqlsh_parse(small)
try:
    grammar.parse(small, schema, plain=True)
except Exception:
    pass
used = resource.getrusage(resource.RUSAGE_SELF)
resource.setrlimit(resource.RLIMIT_CPU, (int(used.ru_utime + used.ru_stime) + 1 + cpu,) * 2)
resource.setrlimit(resource.RLIMIT_AS, (memory << 20,) * 2)
base = hwm()
out = {"bytes": len(text.encode()), "n": n}

def stage(name, fn):
    before = resource.getrusage(resource.RUSAGE_SELF)
    try:
        result = fn()
    except MemoryError:
        out[name] = "memory"
        result = None
    except Exception as err:
        result = None
        out[name + "_error"] = type(err).__name__ + ": " + str(err)[:80]
    after = resource.getrusage(resource.RUSAGE_SELF)
    out.setdefault(name, round(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime, 4))
    out[name + "_mb"] = round((hwm() - base) / 2**20, 1)
    print(json.dumps(out), flush=True)
    return result

tokens = stage("lex", lambda: Lexed(text).tokens)
out["tokens"] = len(tokens) - 1
checked = stage("gate", lambda: gate.read(text))
stage("payload", lambda: grammar.parse(text, schema, plain=True))
if checked is not None:
    stage("cqlsh", lambda: cqlsh_parse(text))
"""


def measure(shape: str, n: int, cpu: int, memory: int) -> dict[str, object]:
    proc = subprocess.run([sys.executable, "-c", CHILD, str(ROOT), shape, str(n), str(cpu), str(memory)],
                          capture_output=True, text=True)
    lines = [line for line in proc.stdout.splitlines() if line.startswith("{")]
    found: dict[str, object] = json.loads(lines[-1]) if lines else {"n": n}
    if proc.returncode < 0 or proc.returncode == 152 - 128:  # SIGXCPU: the CPU limit
        for stage in ("lex", "gate", "payload", "cqlsh"):
            if stage not in found:
                found[stage] = f"> {cpu} s (CPU limit)"
                break
    elif proc.returncode != 0 and "Traceback" in proc.stderr:
        found["failed"] = proc.stderr.strip().splitlines()[-1][:100]
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--shapes", default="in,payload_in,columns,and,nested,string,comment")
    parser.add_argument("--sizes", default="250,500,1000,2000,4000")
    parser.add_argument("--cpu", type=int, default=60, help="CPU seconds a reading may take (default 60)")
    parser.add_argument("--memory", type=int, default=4096,
                        help="address space of a child, MB (default 4096)")
    parser.add_argument("--bounds", action="store_true", help="each shape at the server's bounds")
    options = parser.parse_args()
    print(f"{'shape':<11} {'n':>7} {'bytes':>9} {'tokens':>7}   CPU seconds (peak MB added) by stage")
    for shape in options.shapes.split(","):
        sizes = [int(s) for s in options.sizes.split(",")]
        if options.bounds:
            sizes = [_at_bounds(shape)]
        for n in sizes:
            found = measure(shape, n, options.cpu, options.memory)
            stages = "  ".join(f"{stage} {_figure(found, stage)}"
                               for stage in ("lex", "gate", "payload", "cqlsh"))
            extra = "  ".join(f"{k}: {v}" for k, v in found.items() if k.endswith("_error") or k == "failed")
            print(f"{shape:<11} {n:>7} {found.get('bytes', '?'):>9} {found.get('tokens', '?'):>7}   {stages}"
                  + (f"   [{extra}]" if extra else ""), flush=True)


def _figure(found: dict[str, object], stage: str) -> str:
    value = found.get(stage)
    if value is None:
        return "-"
    if isinstance(value, str):
        return value
    return f"{value:.3f} s ({found.get(stage + '_mb', 0)} MB)"


def _at_bounds(shape: str) -> int:
    """The largest n of `shape` the server's bounds let through (the gate's read, every bound)."""
    from cqlsh_ext.mcp_server import gate

    def passes(n: int) -> bool:
        try:
            gate.read(statement(shape, n))
        except gate.Refused as err:
            return "more than cqlsh-ext mcp reads" not in str(err) and "deeper than" not in str(err)
        return True

    low, high = 1, 1 << 20
    while low < high:
        mid = (low + high + 1) // 2
        if passes(mid):
            low = mid
        else:
            high = mid - 1
    return low


if __name__ == "__main__":
    main()
