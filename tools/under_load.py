"""Run a command while every core is kept busy: how the suite is checked for flakes on a loaded
machine (CONTRIBUTING.md, "Running under load").

    .venv/bin/python tools/under_load.py bin/test
    .venv/bin/python tools/under_load.py --burners 2 bin/test -k faults

Starts one busy-looping process per core (or `--burners N`), runs the command, stops the burners
and exits with the command's status. The burners run at the command's priority: they compete
with the tests and their Cassandra as another user's work would.
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import subprocess
import sys


def _burn() -> None:
    while True:
        pass


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--burners", type=int, default=os.cpu_count() or 1,
                        help="busy processes to start (default: one per core)")
    parser.add_argument("command", nargs=argparse.REMAINDER, help="the command to run under load")
    args = parser.parse_args(argv)
    if not args.command:
        parser.error("a command to run is needed, e.g. bin/test")
    burners = [multiprocessing.Process(target=_burn, daemon=True) for _ in range(args.burners)]
    for burner in burners:
        burner.start()
    print(f"under_load: {args.burners} busy processes while {' '.join(args.command)} runs", file=sys.stderr)
    try:
        return subprocess.call(args.command)
    except KeyboardInterrupt:
        return 130
    finally:
        for burner in burners:
            burner.terminate()
        for burner in burners:
            burner.join()


if __name__ == "__main__":
    sys.exit(main())
