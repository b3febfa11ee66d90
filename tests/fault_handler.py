"""The test server's fault injection (tests/faults/java/.../FaultQueryHandler.java).

SELECTs on keyspaces named `faults_*` fail or are delayed as the plan file says (with `table`, a
regular expression: SELECTs and writes on the tables it matches there); every other request is
Cassandra's own. The class is compiled once per source and jar set into
.cache/fault-handler/, and the conftest's `cassandra` server loads it.

    plan = FaultPlan(server.fault_file)
    plan.set("overloaded", 3)      # the next 3 pages fail with Overloaded
    plan.set("delay", -1, 200)     # every page 200 ms late, until the next set()/clear()
    plan.set("read_timeout", -1, after=2)  # two pages pass, then every page fails
    plan.set("delay", -1, 50, table=".*_slow")  # reads and writes of tables named *_slow 50 ms late
    plan.clear()
    plan.met()                     # Met(pages=..., answered=...): what the current plan met so far

A test that needs the server to be part-way through a slowed read waits on met() (tests/waiting.py),
never on a time: `wait_until(lambda: plan.met().answered >= 2, "two late pages answered")`.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
if str(REPO_ROOT / "tools") not in sys.path:
    sys.path.insert(0, str(REPO_ROOT / "tools"))

import devcassandra  # noqa: E402

SOURCE = Path(__file__).resolve().parent / "faults/java/cqlshext/faults/FaultQueryHandler.java"
HANDLER_CLASS = "cqlshext.faults.FaultQueryHandler"
KEYSPACE_PREFIX = "faults_"


def handler_classes() -> Path:
    """The compiled handler's class directory (compiled when the source or the jars changed)."""
    lib = devcassandra.ensure_jars()
    jars = sorted(p.name for p in lib.glob("*.jar"))
    key = hashlib.sha256(SOURCE.read_bytes() + "\n".join(jars).encode()).hexdigest()[:16]
    home = REPO_ROOT / ".cache" / "fault-handler" / key
    classes = home / "classes"
    if not (classes / "cqlshext" / "faults" / "FaultQueryHandler.class").is_file():
        home.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(dir=home, prefix="classes."))
        javac = str(Path(devcassandra.find_java()).with_name("javac"))
        proc = subprocess.run([javac, "-nowarn", "-d", str(tmp), "-cp", f"{lib}/*", str(SOURCE)],
                              capture_output=True, text=True)
        if proc.returncode != 0:
            shutil.rmtree(tmp, ignore_errors=True)
            raise RuntimeError(f"javac {SOURCE} failed:\n{proc.stdout}{proc.stderr}")
        try:
            tmp.rename(classes)
        except OSError:  # a concurrent run won
            shutil.rmtree(tmp, ignore_errors=True)
    return classes


def jvm_args(plan_file: Path) -> list[str]:
    return [f"-Dcassandra.custom_query_handler_class={HANDLER_CLASS}", f"-Dcqlshext.faults.file={plan_file}"]


@dataclass(frozen=True)
class Met:
    """What the current plan met: the requests it delayed or failed, and those of them answered."""

    pages: int = 0
    answered: int = 0


class FaultPlan:
    def __init__(self, path: Path) -> None:
        self.path = path

    def met(self) -> Met:
        """What the plan now in force met so far, as the server counts it (nothing yet for a plan
        just set: the count written beside the plan names the plan's generation)."""
        try:
            generation, pages, answered = self.path.with_name(self.path.name + ".met").read_text().split()
            plan = self.path.read_text().split()
        except (FileNotFoundError, ValueError):
            return Met()
        if len(plan) < 5 or plan[4] != generation:
            return Met()
        return Met(int(pages), int(answered))

    #: Written with each plan: the same plan set twice is still a new plan (counts start again).
    #: Unique across processes too: the plan file outlives a test run (it sits beside the server's
    #: directory), and a new run counting from 1 again would take the last run's count for its own.
    generation = 0

    def set(self, kind: str, count: int, delay_ms: int = 0, after: int = 0, table: str | None = None) -> None:
        tmp = self.path.with_suffix(".tmp")
        FaultPlan.generation += 1
        generation = f"{os.getpid()}.{time.time_ns()}.{FaultPlan.generation}"
        only = f" {table}" if table else ""
        tmp.write_text(f"{kind} {count} {delay_ms} {after} {generation}{only}\n")
        os.replace(tmp, self.path)  # the server never reads half a plan

    def clear(self) -> None:
        tmp = self.path.with_suffix(".tmp")
        tmp.write_text("")
        os.replace(tmp, self.path)
