"""Run fuzz targets in child processes (tests/fuzzing/child.py) and collect their results.

One child runs the targets one after another; when an input kills it (the memory limit, the hang
guard, a native crash) that target gets a finding with the input it died on, and a new child
carries on with the targets after it. Used by the short run (test_fuzz_short.py) and tools/fuzz.py.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

CHILD = Path(__file__).resolve().parent / "child.py"


@dataclass
class Result:
    target: str
    executions: int = 0
    #: [{"key", "last_line", "hex", "traceback"}]
    findings: list[dict[str, str]] = field(default_factory=list)


def run_batch(targets: Sequence[str], examples: int, *, seed: int | None = None, keep_going: bool = False,
              hang_s: float = 120.0, memory_mb: int | None = None,
              python: str = sys.executable) -> dict[str, Result]:
    """Each target's seeds and `examples` Hypothesis inputs (derandomized unless `seed`)."""
    results: dict[str, Result] = {}
    todo = list(targets)
    with tempfile.TemporaryDirectory(prefix="cqlsh-ext-fuzz.") as tmp:
        current = Path(tmp) / "current"
        while todo:
            cmd = [python, str(CHILD), *todo, "--examples", str(examples), "--current", str(current),
                   "--hang-s", str(hang_s)]
            if seed is not None:
                cmd += ["--seed", str(seed)]
            if keep_going:
                cmd.append("--keep-going")
            if memory_mb is not None:
                cmd += ["--memory-mb", str(memory_mb)]
            current.write_bytes(b"")
            proc = subprocess.run(cmd, capture_output=True, text=True)
            started: str | None = None
            for line in proc.stdout.splitlines():
                if not line.startswith("{"):
                    continue
                doc = json.loads(line)
                if "start" in doc:
                    started = doc["start"]
                    continue
                results[doc["target"]] = Result(doc["target"], doc["executions"], doc["findings"])
                started = None
            if started is None:
                if proc.returncode != 0:  # died before it started any target
                    raise RuntimeError(f"fuzz child failed ({proc.returncode}):\n{proc.stderr[-3000:]}")
                break
            # The child died inside `started`: the input it was running is the finding.
            data = current.read_bytes()
            tail = proc.stderr.strip().splitlines()[-12:]
            why = (f"process ended by signal {-proc.returncode}" if proc.returncode < 0
                   else f"process exited with status {proc.returncode}")
            if any("Timeout" in line for line in tail):
                why = f"hang: over {hang_s:g} s on one input (faulthandler watchdog)"
            results[started] = Result(started, 0, [{
                "key": "process-died", "last_line": f"{why}; last stderr: {tail[-1] if tail else ''}",
                "hex": data.hex(), "traceback": "\n".join(tail)}])
            todo = todo[todo.index(started) + 1:]
    return results
