"""Run fuzz targets in this process, under a memory limit, and print what happened as JSON.

    python tests/fuzzing/child.py TARGET [TARGET ...] [--examples N] [--seed S] [--engine E]
                                  [--current FILE] [--keep-going] [--memory-mb M] [-- LIBFUZZER ARGS]

The parent (the short run in bin/test, tools/fuzz.py) starts it so that an input that exhausts
memory or hangs ends this process, not the parent: the input it died on is in --current.
Output: one JSON line per target, {"target", "executions", "findings": [{"key", "last_line",
"hex", "traceback"}]}.
"""

from __future__ import annotations

import argparse
import json
import resource
import sys
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]
if str(TESTS) not in sys.path:
    sys.path.insert(0, str(TESTS))

if "atheris" in sys.argv:  # coverage for cqlsh_ext only: instrument its modules as they load
    import importlib
    import pkgutil

    import atheris

    import cqlsh_ext

    with atheris.instrument_imports(include=["cqlsh_ext"]):
        for info in pkgutil.walk_packages(cqlsh_ext.__path__, "cqlsh_ext."):
            if info.name.split(".")[1] in ("codecs", "payload", "insight", "output", "display"):
                importlib.import_module(info.name)

from fuzzing.engines import Runner, atheris_available, run_atheris, run_hypothesis  # noqa: E402
from fuzzing.targets import all_targets  # noqa: E402

#: Address space a fuzzed process may take: room for the 4 MiB cap many times over, far below
#: what a declared 4 GiB allocation would need.
MEMORY_MB = 1536


def limit_memory(megabytes: int) -> None:
    limit = megabytes << 20
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("targets", nargs="+")
    parser.add_argument("--examples", type=int, default=100)
    parser.add_argument("--seed", type=int, default=None)
    parser.add_argument("--engine", choices=("hypothesis", "atheris"), default="hypothesis")
    parser.add_argument("--current", type=Path, default=None)
    parser.add_argument("--keep-going", action="store_true")
    parser.add_argument("--memory-mb", type=int, default=MEMORY_MB)
    parser.add_argument("--hang-s", type=float, default=0, help="end the process when one input runs longer")
    parser.add_argument("--findings", type=Path, default=None, help="write each new finding there at once")
    args, extra = parser.parse_known_args(argv)
    extra = [a for a in extra if a != "--"]
    limit_memory(args.memory_mb)
    sys.setrecursionlimit(max(sys.getrecursionlimit(), 1000))
    targets = all_targets()
    for name in args.targets:
        print(json.dumps({"start": name}), flush=True)
        runner = Runner(targets[name], stop_on_first=not args.keep_going, current=args.current,
                        hang_s=args.hang_s, findings_dir=args.findings)
        if args.engine == "atheris":
            if not atheris_available():
                print("atheris is not installed", file=sys.stderr)
                return 2
            run_atheris(runner, extra)  # never returns
        try:
            run_hypothesis(runner, args.examples, args.seed)
        except Exception:
            pass  # kept in runner.findings
        print(json.dumps({
            "target": name,
            "executions": runner.executions,
            "findings": [{"key": k, "last_line": f.last_line, "hex": f.data.hex(), "traceback": f.traceback}
                         for k, f in runner.findings.items()],
        }), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
