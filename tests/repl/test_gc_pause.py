"""The garbage collector is paused during start-up only (cqlsh_ext/common/gc_pause.py): a session, in the
interactive shell or with -e, runs with it on, and start-up's objects are frozen out of its scans."""

from __future__ import annotations

import gc
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from shell_runner import entry_reporting_at_exit, isolated_env

from cqlsh_ext.common import gc_pause

from .terminal import Term

_REPORTING_ENTRY = entry_reporting_at_exit(
    "'gc-enabled=%s frozen=%d' % (gc.isenabled(), gc.get_freeze_count())")
_STATE = re.compile(r"gc-enabled=(\w+) frozen=(\d+)")


@pytest.fixture
def restored_gc() -> Iterator[None]:
    enabled = gc.isenabled()
    yield
    gc.unfreeze()
    gc.enable() if enabled else gc.disable()
    gc_pause._paused = False


def test_pause_then_resume_turns_the_collector_back_on_once(restored_gc):
    gc.enable()
    gc_pause.pause()
    assert not gc.isenabled()
    gc_pause.resume()
    assert gc.isenabled()
    assert gc.get_freeze_count() > 0
    gc.disable()  # someone turns it off later: a second resume must not undo that
    gc_pause.resume()
    assert not gc.isenabled()


def test_a_collector_switched_off_before_start_stays_off(restored_gc):
    gc.disable()
    gc_pause.pause()
    gc_pause.resume()
    assert not gc.isenabled()


def test_the_interactive_shell_runs_with_the_collector_on(cassandra, home: Path):
    t = Term(["-c", _REPORTING_ENTRY, cassandra.host, str(cassandra.port)], home, program=sys.executable)
    try:
        t.prompt()
        t.run("SELECT release_version FROM system.local;")
        assert t.exit() == 0
        state = _STATE.search(t.text)
        assert state, t.tail()
        assert state.group(1) == "True"
        assert int(state.group(2)) > 10_000  # cqlsh, the driver and prompt_toolkit, frozen
    finally:
        t.close()


def test_e_runs_with_the_collector_on(cassandra, home: Path):
    proc = subprocess.run(
        [sys.executable, "-c", _REPORTING_ENTRY, cassandra.host, str(cassandra.port),
         "-e", "SELECT release_version FROM system.local"],
        capture_output=True, text=True, timeout=120, env=isolated_env(home))
    assert proc.returncode == 0, proc.stderr
    assert "(1 rows)" in proc.stdout
    state = _STATE.search(proc.stderr)
    assert state, proc.stderr
    assert state.group(1) == "True"


def test_a_tool_runs_with_the_collector_on(tmp_path: Path):
    # The command (cli.run) pauses the collector before it imports the rest of cqlsh-ext; a tool
    # (`cqlsh-ext sample-config`, `inspect`, `spark`, ...) has no shell start-up that resumes it.
    code = ("import atexit, gc, sys\n"
            "atexit.register(lambda: sys.stderr.write('\\ngc-enabled=%s\\n' % gc.isenabled()))\n"
            "sys.argv = ['cqlsh-ext', 'sample-config']\n"
            "from cqlsh_ext.cli import run\n"
            "run()\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                          env=isolated_env(tmp_path))
    assert proc.returncode == 0, proc.stderr
    assert "[cqlsh_ext]" in proc.stdout
    assert "gc-enabled=True" in proc.stderr, proc.stderr
