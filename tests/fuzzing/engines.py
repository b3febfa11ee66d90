"""The two engines that drive a target (tests/fuzzing/targets.py): atheris and Hypothesis.

- atheris (libFuzzer, coverage-guided) when it is installed: CPython 3.11-3.13 on Linux x86-64,
  the only wheels there are (pyproject.toml's test extra pins it with that marker);
- Hypothesis otherwise (3.10, other machines), and always for the short run in bin/test: its
  inputs are the seeds, then seeds mutated (bytes flipped, inserted, deleted, set to boundary
  values, chunks repeated, two seeds spliced) and plain random bytes; with `derandomize` the same
  executions every run, counted, not timed.

A target may also name per-format mutations (`Target.mutate`: pickle's are in pickle_ops.py),
which know a format's structure where flipping bytes only breaks it: Hypothesis applies them as
one more kind of step, atheris through libFuzzer's custom mutator, half of the time (the other
half libFuzzer's own mutations).

Both call `Runner.one`, which counts executions and keeps what broke: an exception other than
the target's documented error, or a `Violation` of its bounds.
"""

from __future__ import annotations

import faulthandler
import hashlib
import json
import os
import random
import re
import traceback
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from hypothesis import strategies as st

from .targets import Mutation, Target

#: Boundary values a mutation writes: lengths and counts at their edges.
_INTERESTING = (b"\x00", b"\xff", b"\x7f", b"\x80", b"\xff\xff\xff\xff", b"\x00\x00\x00\x00",
                b"\x7f\xff\xff\xff", b"\x80\x00\x00\x00", b"\x01", b"\x40")
#: Inputs stay small: amplification is what the bounds are for, not big inputs.
MAX_INPUT = 8192


def inputs(seeds: Sequence[bytes], mutate: Mutation | None = None) -> st.SearchStrategy[bytes]:
    """Seeds, mutated seeds and random bytes; `mutate`: the target's per-format mutations, one
    more kind of step (it answers None for an input not of its format)."""
    if not seeds:
        return st.binary(max_size=512)
    kinds = 7 if mutate is None else 8

    @st.composite
    def mutated(draw: st.DrawFn) -> bytes:
        data = bytearray(draw(st.sampled_from(seeds)))
        for _ in range(draw(st.integers(0, 6))):
            op = draw(st.integers(0, kinds - 1))
            pos = draw(st.integers(0, len(data)))
            if op == 0 and data:  # flip bits of one byte
                at = min(pos, len(data) - 1)
                data[at] ^= draw(st.integers(1, 255))
            elif op == 1:  # insert bytes
                data[pos:pos] = draw(st.binary(min_size=1, max_size=8))
            elif op == 2 and data:  # delete a range
                data[pos:pos + draw(st.integers(1, 16))] = b""
            elif op == 3:  # a boundary value over what is there
                value = draw(st.sampled_from(_INTERESTING))
                data[pos:pos + len(value)] = value
            elif op == 4 and data:  # repeat a chunk (back-references, nesting)
                chunk = bytes(data[pos:pos + draw(st.integers(1, 32))])
                data[pos:pos] = chunk * draw(st.integers(1, 64))
            elif op == 5:  # splice another seed
                other = draw(st.sampled_from(seeds))
                cut = draw(st.integers(0, len(other)))
                data[pos:] = other[cut:]
            elif op == 6:  # cut short
                del data[pos:]
            elif op == 7 and mutate is not None:  # the format's own structure
                changed = mutate(bytes(data), draw(st.randoms(use_true_random=False)))
                if changed is not None:
                    data = bytearray(changed)
        return bytes(data[:MAX_INPUT])

    return st.one_of(mutated(), mutated(), mutated(), st.binary(max_size=256))


@dataclass
class Finding:
    target: str
    data: bytes
    #: The traceback's last line ("RecursionError: maximum recursion depth exceeded").
    last_line: str
    traceback: str

    @property
    def key(self) -> str:
        """What makes two findings the same bug: the error type and where it was raised."""
        frames = [line for line in self.traceback.splitlines() if line.strip().startswith('File "')]
        where = next((f for f in reversed(frames) if "cqlsh_ext" in f), frames[-1] if frames else "")
        kind = self.last_line.split(":", 1)[0]
        if kind.endswith("Violation"):  # which path broke which bound, without the figures
            kind = re.sub(r"\d[\d,]*", "N", self.last_line)[:120]
        return hashlib.sha256(f"{kind}|{where.strip()}".encode()).hexdigest()[:12]


@dataclass
class Runner:
    """Runs inputs through one target, counting executions and keeping the first input of each
    distinct failure. `current`: a file the input is written to before it runs, so that a parent
    process can tell which input a child died on (memory limit, hang). `hang_s`: a watchdog thread
    ends the process when one input runs longer (a native call that hangs included).
    `findings_dir`: each new finding is written there at once (libFuzzer exits without returning)."""

    target: Target
    stop_on_first: bool = True
    current: Path | None = None
    hang_s: float = 0
    findings_dir: Path | None = None
    executions: int = 0
    findings: dict[str, Finding] = field(default_factory=dict)

    def one(self, data: bytes) -> None:
        self.executions += 1
        if self.current is not None:
            self.current.write_bytes(data)
        if self.hang_s:
            faulthandler.dump_traceback_later(self.hang_s, exit=True)
        try:
            self.target.run(data)
        except Exception as err:  # RecursionError and MemoryError included: every escape counts
            text = traceback.format_exc()
            last = f"{type(err).__name__}: {err}".splitlines()[0][:300] if str(err) else type(err).__name__
            finding = Finding(self.target.name, data, last, text)
            if finding.key not in self.findings:
                self.findings[finding.key] = finding
                self._save(finding)
            if self.stop_on_first:
                raise
        finally:
            if self.hang_s:
                faulthandler.cancel_dump_traceback_later()

    def _save(self, finding: Finding) -> None:
        if self.findings_dir is None:
            return
        self.findings_dir.mkdir(parents=True, exist_ok=True)
        path = self.findings_dir / f"{finding.key}.json"
        if not path.exists():
            path.write_text(json.dumps({
                "target": finding.target, "key": finding.key, "last_line": finding.last_line,
                "hex": finding.data.hex(), "traceback": finding.traceback}))

    def seeds_first(self) -> None:
        for seed in self.target.seed_inputs():
            self.one(seed)


def run_hypothesis(runner: Runner, examples: int, seed: int | None = None) -> None:
    """`examples` generated inputs (after the seeds themselves); deterministic when `seed` is None."""
    from hypothesis import HealthCheck, Phase, given, settings
    from hypothesis import seed as fixed_seed

    runner.seeds_first()

    @settings(max_examples=examples, derandomize=seed is None, database=None, deadline=None,
              phases=(Phase.generate,), suppress_health_check=list(HealthCheck), print_blob=False)
    @given(inputs(runner.target.seed_inputs(), runner.target.mutate))
    def fuzz(data: bytes) -> None:
        runner.one(data)

    if seed is not None:
        fuzz = fixed_seed(seed)(fuzz)
    try:
        fuzz()
    except Exception:
        if runner.stop_on_first:
            raise
        # Hypothesis re-raises what the runner kept (stop_on_first=False never raises from one()).


def atheris_available() -> bool:
    try:
        import atheris  # noqa: F401
    except ImportError:
        return False
    return True


def run_atheris(runner: Runner, args: list[str]) -> None:
    """libFuzzer over `runner.one`: `args` are libFuzzer's (corpus directories, -runs=N,
    -max_total_time=S, ...). Never returns (libFuzzer exits the process)."""
    import atheris

    mutate = runner.target.mutate

    def custom_mutator(data: bytes, max_size: int, seed: int) -> bytes:
        rng = random.Random(seed)
        if mutate is not None and rng.random() < 0.5:
            changed = mutate(data, rng)
            if changed is not None:
                return changed[:max_size]
        return bytes(atheris.Mutate(data, max_size))

    # cqlsh_ext's modules were loaded under atheris.instrument_imports (child.py), for coverage.
    argv = [os.environ.get("CQLSH_EXT_FUZZ_ARGV0", "fuzz"), *args]
    if mutate is None:
        atheris.Setup(argv, runner.one)
    else:
        atheris.Setup(argv, runner.one, custom_mutator=custom_mutator)
    atheris.Fuzz()
