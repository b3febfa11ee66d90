"""Run a command while every core is kept busy: how the suite is checked for flakes on a loaded
machine (CONTRIBUTING.md, "Running under load").

    .venv/bin/python tools/under_load.py bin/test
    .venv/bin/python tools/under_load.py --burners 2 bin/test -k faults

Starts one busy-looping process per core (or `--burners N`), runs the command, stops the burners
and exits with the command's status. The burners run at the command's priority: they compete
with the tests and their Cassandra as another user's work would. A test that makes its own load
imports `burning` (tools/ is on the tests' path).
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager


def _burn() -> None:
    while True:
        pass


@contextmanager
def burning(burners: int | None = None) -> Iterator[int]:
    """`burners` busy processes (default: one per core) while the block runs; how many."""
    count = burners if burners is not None else os.cpu_count() or 1
    started = [multiprocessing.Process(target=_burn, daemon=True) for _ in range(count)]
    for burner in started:
        burner.start()
    try:
        yield count
    finally:
        for burner in started:
            burner.terminate()
        for burner in started:
            burner.join()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--burners", type=int, default=os.cpu_count() or 1,
                        help="busy processes to start (default: one per core)")
    parser.add_argument("command", nargs=argparse.REMAINDER, help="the command to run under load")
    args = parser.parse_args(argv)
    if not args.command:
        parser.error("a command to run is needed, e.g. bin/test")
    with burning(args.burners) as burners:
        print(f"under_load: {burners} busy processes while {' '.join(args.command)} runs", file=sys.stderr)
        try:
            return subprocess.call(args.command)
        except KeyboardInterrupt:
            return 130


if __name__ == "__main__":
    sys.exit(main())
