"""cqlsh's own tests (cqlshlib/test's test_cqlsh_output.py and test_cqlsh_completion.py, from the sdist
upstream.py fetches) against `cqlsh-ext --classic` on the suite's server: every test stock cqlsh
passes there (stock_passes.txt) must pass for cqlsh-ext too, but those BY_DESIGN names, which must
fail as it says. Each starts the program in a pseudo-terminal and drives it as cqlsh's suite does
(typing, Tab, Ctrl-C between completions).

With CQLSH_EXT_UPSTREAM_STOCK=1 every test of the modules runs against stock cqlsh instead (the
pinned package's own `cqlsh`): tools/upstream_cqlsh_passes.py runs it so to write stock_passes.txt.
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Iterator
from pathlib import Path

import pytest
from shell_runner import CQLSH_EXT, STOCK_CQLSH

from . import upstream

STOCK = os.environ.get("CQLSH_EXT_UPSTREAM_STOCK") == "1"
# cqlshlib's tests time their reads with SIGALRM (run_cqlsh.timing_out), which pytest-timeout's
# default method takes: its thread watches the suite's per-test limit instead.
pytestmark = pytest.mark.timeout(900, method="thread")


def _tests() -> list[str]:
    # (the stock run's: the sdist is fetched as the tests are collected)
    return upstream.all_tests() if STOCK else upstream.stock_passes()


@pytest.fixture(scope="module")
def harness(cassandra, tmp_path_factory) -> Iterator[upstream.Harness]:  # type: ignore[no-untyped-def]
    server = upstream.Server(cassandra.host, cassandra.port, cassandra.username, cassandra.password)
    program, args = (STOCK_CQLSH, []) if STOCK else (CQLSH_EXT, ["--classic"])
    running = upstream.Harness(server, program, args, Path(tmp_path_factory.mktemp("upstream-cqlsh")))
    try:
        yield running
    finally:
        running.close()


#: Tests stock cqlsh passes that cqlsh-ext fails on purpose: what the failure says, and why. Each must
#: still fail so (a pass, or another failure, fails the suite: the entry is then wrong).
BY_DESIGN = {
    "test_cqlsh_completion::TestCqlshCompletion::test_complete_command_words": (
        "cqlsh completed 'NS', but we expected 'NSERT INTO '",
        "cqlsh-ext's INSPECT (docs/insight.md) begins with INS too: 'I' then Tab completes the 'INS' "
        "both share, as readline completes any two commands"),
}


def _as_expected(outcome: upstream.Outcome, by_design: tuple[str, str] | None) -> bool:
    if by_design is None:
        return outcome.passed
    return not outcome.passed and by_design[0] in outcome.report


@pytest.mark.parametrize("test_id", _tests())
def test_what_stock_cqlsh_passes(harness: upstream.Harness, test_id: str) -> None:
    by_design = None if STOCK else BY_DESIGN.get(test_id)
    outcome = harness.run(test_id)
    if not STOCK and not _as_expected(outcome, by_design):
        # cqlshlib's completion tests read what a Tab printed within half a second, and a loaded
        # machine can miss that once: run again, the first failure said as a warning. A failure of
        # cqlsh-ext's own (an exit, a wrong completion) fails both runs.
        warnings.warn(f"{test_id} failed once for cqlsh-ext, run again:\n{outcome.report}", stacklevel=1)
        outcome = harness.run(test_id)
    if outcome.skipped is not None:
        pytest.skip(outcome.skipped)
    program = f"{harness.program} {' '.join(harness.args)}".strip()
    if by_design is None:
        assert outcome.passed, f"{test_id} ({program}):\n{outcome.report}"
    else:
        assert _as_expected(outcome, by_design), (
            f"{test_id} ({program}) fails on purpose with {by_design[0]!r} ({by_design[1]}), and did not: "
            f"the entry in BY_DESIGN is wrong now.\n{outcome.report}")
