"""tests/native: the native core checked against the Python engine. Without the core built they
are skipped (bin/setup builds it when cargo is found), except under CI=true, where a core that
does not run fails them: CI must test both engines."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

from cqlsh_ext.codecs.base import Container, Decoded
from cqlsh_ext.payload import native
from cqlsh_ext.payload.formats._outside import outside_names


@pytest.fixture
def native_core() -> None:
    """The configured core; skips (fails under CI=true) when it does not run."""
    if native.available():
        return
    why = native.refusal()
    if os.environ.get("CI") == "true" and os.environ.get(native.ENV) != "0":
        pytest.fail(f"the native core does not run under CI=true: {why}")
    pytest.skip(f"the native core does not run ({why}); bin/setup builds it when cargo is found")


@pytest.fixture
def built_ins_detected(native_core: None, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The core configured to detect the built-in record formats only. A detected format from
    outside (the test plugin installed here: kv1) is one the core cannot read, so with it the core
    hands every value no built-in reads to the Python engine (docs/payloads.md); a test of the
    core's own road asks for that road as a user without plugins has it."""
    from cqlsh_ext.payload import formats

    outside = set(outside_names())
    kept = [fmt for fmt in formats.auto_formats() if fmt.name not in outside]
    monkeypatch.setattr(formats, "auto_formats", lambda: list(kept))
    native.module().configure(native._config())
    try:
        yield
    finally:
        monkeypatch.undo()
        native.module().configure(native._config())


#: name -> [values compared, handed back, differences], over the run (printed at its end).
TOTALS: dict[str, list[int]] = {}


def record(name: str, counts: object) -> None:
    """Adds a test's counts (tests/fuzzing/native_diff.Counts) to the run's totals."""
    entry = TOTALS.setdefault(name, [0, 0, 0])
    entry[0] += counts.compared  # type: ignore[attr-defined]
    entry[1] += counts.handed_back  # type: ignore[attr-defined]
    entry[2] += len(counts.differences)  # type: ignore[attr-defined]


def pytest_sessionfinish(session: pytest.Session) -> None:
    """In a worker of several (bin/test): its counts go to the controller with the worker's output,
    where tests/conftest.py adds them up (add_totals) and prints them (write_totals)."""
    output = getattr(session.config, "workeroutput", None)
    if output is not None:
        output["native_totals"] = TOTALS


def add_totals(totals: dict[str, list[int]]) -> None:
    """A worker's counts added to this process's."""
    for name, counts in totals.items():
        entry = TOTALS.setdefault(name, [0, 0, 0])
        for i, count in enumerate(counts):
            entry[i] += count


def write_totals(terminalreporter: pytest.TerminalReporter) -> None:
    """The run's counts, one row per test's name, at the end of the run (tests/conftest.py)."""
    if not TOTALS:
        return
    from cqlsh_ext.common.text import Table

    rows = [[name, *(f"{n:,}" for n in counts)] for name, counts in TOTALS.items()]
    rows.append(["total", *(f"{sum(t[i] for t in TOTALS.values()):,}" for i in range(3))])
    table = Table(rows, ["native core against the Python engine", "values compared", "handed back",
                         "differences"], right=(1, 2, 3))
    for line in table.lines(0, unicode=False):  # the names' own width: the figures line up
        terminalreporter.write_line(line)


class _XorTestFrame(Container):
    """A container the core does not know (this test's own): b"XOR1", then the payload xor 0x5a."""

    codec, container, grade, magic = "zstd", "test-xor", "A", b"XOR1"
    signature_priority = 0

    def decode(self, data: bytes, cap: int) -> Decoded:
        body = bytes(b ^ 0x5A for b in data[4:4 + cap])
        return Decoded(body, truncated=len(data) - 4 > cap)


def built_in(lacked: list[str]) -> list[str]:
    """The names the core lacks, less the formats from outside (the test plugin installed here:
    the core never reads those, their values are always handed back)."""
    outside = set(outside_names())
    return [name for name in lacked if name not in outside]


@pytest.fixture
def lacked_container(native_core: None, monkeypatch: pytest.MonkeyPatch) -> Iterator[Container]:
    """The Python registry with _XorTestFrame first for the first byte "X", the core configured
    from it (and from the registry as it was, afterwards)."""
    from cqlsh_ext.codecs import registry

    fmt = _XorTestFrame()
    table = [list(row) for row in registry.dispatch_table()]
    table[ord("X")].insert(0, fmt)
    monkeypatch.setattr(registry, "_BY_BYTE", tuple(tuple(row) for row in table))
    monkeypatch.setattr(registry, "_ALL", (*registry._ALL, fmt))
    assert built_in(native.module().configure(native._config()).lacked) == ["zstd/test-xor"]
    try:
        yield fmt
    finally:
        monkeypatch.undo()
        native.module().configure(native._config())
