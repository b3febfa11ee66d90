"""The short fuzz run in bin/test: every target (tests/fuzzing/targets.py), its seeds and a fixed
number of generated inputs, the same ones every run (Hypothesis, derandomized: executions are
counted, not timed). The long, coverage-guided run is tools/fuzz.py (CONTRIBUTING.md).

The targets run in child processes under a memory limit and a hang guard, so an input that
exhausts memory or hangs fails its target's test instead of ending pytest.
"""

from __future__ import annotations

import os

import pytest

from fuzzing.batch import Result, run_batch
from fuzzing.targets import all_targets

pytestmark = pytest.mark.fuzz

#: Generated inputs per target after its seeds (CQLSH_EXT_FUZZ_EXAMPLES changes it).
EXAMPLES = int(os.environ.get("CQLSH_EXT_FUZZ_EXAMPLES", "300"))

TARGETS = list(all_targets())
_RESULTS: dict[str, Result] = {}


@pytest.fixture(scope="module")
def results(request: pytest.FixtureRequest) -> dict[str, Result]:
    """One batch for the targets collected in this session (a -k selection runs only those)."""
    wanted = [item.callspec.params["target"] for item in request.session.items
              if getattr(item, "callspec", None) is not None and item.module is request.module]
    if not _RESULTS:
        _RESULTS.update(run_batch(wanted or TARGETS, EXAMPLES, hang_s=60))
    return _RESULTS


@pytest.mark.parametrize("target", TARGETS)
def test_fuzz_target(target: str, results: dict[str, Result]) -> None:
    result = results[target]
    assert not result.findings, "\n".join(
        f"{target}: {f['last_line']}\n  input ({len(f['hex']) // 2} bytes): {f['hex'][:400]}"
        f"{'...' if len(f['hex']) > 400 else ''}\n{f['traceback'][-2000:]}"
        for f in result.findings
    )
    assert result.executions >= EXAMPLES


if os.environ.get("CQLSH_EXT_FUZZ_SECONDS"):
    # Collected only when asked for, so a default run neither runs nor skips it.
    def test_fuzz_long() -> None:
        """Every target for CQLSH_EXT_FUZZ_SECONDS each, through tools/fuzz.py (atheris when
        installed)."""
        import subprocess
        import sys
        from pathlib import Path

        tool = Path(__file__).resolve().parents[2] / "tools" / "fuzz.py"
        proc = subprocess.run([sys.executable, str(tool), "all"], capture_output=True, text=True)
        assert proc.returncode == 0, proc.stdout[-20_000:] + proc.stderr[-5000:]


def test_every_codec_container_and_format_has_a_target_with_seeds() -> None:
    """The targets come from the registries; a new codec or format also needs its seeds
    (tests/fuzzing/make_corpus.py), or its target starts from random bytes only."""
    from cqlsh_ext.codecs import registry
    from cqlsh_ext.codecs.base import CODEC_NAMES
    from cqlsh_ext.payload.formats import declarations

    targets = all_targets()
    names = [f"codec-{c}" for c in CODEC_NAMES] + [f"payload-{f}" for f in declarations()]
    names += [f"container-{f.label.replace('/', '-')}" for f in registry.all_containers()]
    assert not [n for n in names if n not in targets]
    assert not [t.name for t in targets.values() if not t.seed_inputs()]
