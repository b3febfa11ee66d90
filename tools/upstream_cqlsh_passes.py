#!/usr/bin/env python3
"""Write tests/upstream_cqlsh/stock_passes.txt: the tests of cqlsh's own test modules (the sdist
tests/upstream_cqlsh/upstream.py pins) that stock cqlsh (the pinned package's `cqlsh`) passes on the
suite's server, here, in every one of `--runs` runs (a test that passes only some of the time is left
out: the suite would fail on it by chance). bin/test then runs each of them against
`cqlsh-ext --classic` and fails on any it fails.

    .venv/bin/python tools/upstream_cqlsh_passes.py [--runs N] [pytest arguments, e.g. -k completion]

Each run is one pytest of tests/upstream_cqlsh with CQLSH_EXT_UPSTREAM_STOCK=1, in one process, with
its own test server as bin/test starts it (CQLSH_EXT_TEST_REUSE=1 keeps one between runs). Run it
again when the sdist's pin, cqlsh's pin or the server's release changes; the file's header says how
it was made.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO_ROOT / "tests"))

from upstream_cqlsh import upstream  # noqa: E402  (tests/ on the path first)

MODULE = "tests/upstream_cqlsh/test_upstream_cqlsh.py"


def passed_once(pytest_args: list[str]) -> tuple[set[str], int]:
    """The ids the stock run passed, and how many it ran."""
    with tempfile.TemporaryDirectory() as work:
        report = Path(work) / "report.xml"
        env = dict(os.environ, CQLSH_EXT_UPSTREAM_STOCK="1")
        subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-n", "0",
                        f"--junitxml={report}", MODULE, *pytest_args], cwd=REPO_ROOT, env=env, check=False)
        cases = ET.parse(report).getroot().iter("testcase")
        passed, ran = set(), 0
        for case in cases:
            ran += 1
            if not any(child.tag in ("failure", "error", "skipped") for child in case):
                name = case.get("name", "")
                passed.add(name[name.index("[") + 1:-1])
        return passed, ran


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=2, help="runs a test must pass in every one of (2)")
    args, pytest_args = parser.parse_known_args()
    order = upstream.all_tests()
    kept: set[str] | None = None
    for _ in range(args.runs):
        passed, ran = passed_once(pytest_args)
        if not ran:
            print("upstream_cqlsh_passes: no test ran", file=sys.stderr)
            return 1
        kept = passed if kept is None else kept & passed
    assert kept is not None
    version = subprocess.run([str(Path(sys.executable).parent / "cqlsh"), "--version"],
                             capture_output=True, text=True, check=True).stdout.strip()
    header = [
        f"# The tests of cqlsh's own modules ({', '.join(upstream.MODULES)}, from {upstream.SDIST}'s sdist)",
        f"# that stock cqlsh ({version}) passed on the suite's server in each of {args.runs} runs;",
        "# tests/upstream_cqlsh runs each against `cqlsh-ext --classic` and fails on any it fails.",
        f"# {len(kept)} of {len(order)}. Written by: .venv/bin/python tools/upstream_cqlsh_passes.py",
    ]
    upstream.STOCK_PASSES.write_text("\n".join(header + [test for test in order if test in kept]) + "\n")
    print(f"{upstream.STOCK_PASSES.relative_to(REPO_ROOT)}: {len(kept)} of {len(order)} tests",
          file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
