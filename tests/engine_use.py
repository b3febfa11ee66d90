"""Which test modules reach the value engine: bin/test's second pass (the Python engine alone, with
the native core off) runs again only those, and every server test of its directories.

A module reaches the engine when one of its tests or fixtures asks whether the native core runs
(payload/native.py's _load: every use of the core, and every choice between the engines, goes
through it) or starts a cqlsh-ext process (which asks in its turn). A module that never asks runs
the same code on either engine: running it again proves nothing the first pass did not.

    CQLSH_EXT_ENGINE_RECORD=DIR   first pass: each process writes the modules that asked to DIR
    CQLSH_EXT_ENGINE_SELECT=DIR   second pass: of the tests that need no server, only those of the
                                  modules recorded in DIR run; with nothing recorded there (a
                                  first pass that did not get so far), every test runs
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

RECORD = "CQLSH_EXT_ENGINE_RECORD"
SELECT = "CQLSH_EXT_ENGINE_SELECT"

#: The module of the test running now, and the modules that asked (this process's).
_running: list[str] = []
_asked: set[str] = set()


def _module(item: pytest.Item) -> str:
    return item.nodeid.split("::", 1)[0]


def _note() -> None:
    if _running:
        _asked.add(_running[0])


def start_recording() -> None:
    """Wraps the engine's gate and the start of processes (first pass, in each test process)."""
    from cqlsh_ext.payload import native

    load = native._load

    def recorded_load() -> Any:
        _note()
        return load()

    native._load = recorded_load  # type: ignore[assignment]
    popen_init = subprocess.Popen.__init__

    def recorded_init(self: subprocess.Popen, args: Any, *rest: Any, **kwargs: Any) -> None:
        if any("cqlsh-ext" in str(arg) or "cqlsh_ext" in str(arg)
               for arg in ([args] if isinstance(args, (str, bytes, os.PathLike)) else args)):
            _note()
        popen_init(self, args, *rest, **kwargs)

    subprocess.Popen.__init__ = recorded_init  # type: ignore[method-assign]


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item: pytest.Item) -> Iterator[None]:
    _running[:] = [_module(item)]  # its fixtures' setup and teardown included
    try:
        return (yield)
    finally:
        _running.clear()


def write_record(directory: str, worker: str) -> None:
    path = Path(directory) / f"asked-{worker or 'main'}.txt"
    path.write_text("".join(f"{module}\n" for module in sorted(_asked)))


def selected(items: list[pytest.Item], directory: str) -> tuple[list[pytest.Item], list[pytest.Item]]:
    """(kept, deselected): the server tests and those of the recorded modules, or all when nothing
    was recorded."""
    records = list(Path(directory).glob("asked-*.txt"))
    if not records:
        return items, []
    asked = {line for path in records for line in path.read_text().splitlines()}
    kept = [item for item in items if item.get_closest_marker("server") is not None or _module(item) in asked]
    chosen = {id(item) for item in kept}
    return kept, [item for item in items if id(item) not in chosen]
