"""The locks against pyproject.toml's ranges: locks/main.txt (what bin/setup, CI and the Docker image
install) holds a version of every requirement of every extra, within its range, with its files'
hashes, on every Python the locks serve; locks/other-end.txt holds locks/other-end.in's versions (each
the other end of its range from main.txt's: the oldest pyarrow, polars, DuckDB, MCP SDK and uvicorn
supported, pandas 3) and the test extra's; and every lowest bound pyproject.toml gives is a version
one of them holds or tests/test_environment.py installs: the oldest release tested, as
pyproject.toml says. No network.
"""

from __future__ import annotations

import re
from pathlib import Path

from packaging.markers import Marker
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

REPO = Path(__file__).resolve().parents[1]
LOCKS = REPO / "locks"
#: The interpreters the locks serve (bin/lock: Python 3.11 and later; requires-python: before 3.14),
#: on the platform CI and the image run.
PYTHONS = ("3.11", "3.12", "3.13")
#: A lock's entry: `name==version ; marker \` then its hashes.
_ENTRY = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==([^\s;\\]+)(?:\s*;\s*([^\\]+?))?\s*\\?$")


def _environment(python: str) -> dict[str, str]:
    return {"python_version": python, "python_full_version": f"{python}.0", "sys_platform": "linux",
            "platform_system": "Linux", "platform_machine": "x86_64", "os_name": "posix",
            "implementation_name": "cpython", "platform_python_implementation": "CPython", "extra": ""}


def _lock(name: str) -> dict[str, list[tuple[Version, Marker | None, int]]]:
    """A lock's entries by canonical name: (version, marker, number of hashes)."""
    lines = (LOCKS / name).read_text().splitlines()
    entries: dict[str, list[tuple[Version, Marker | None, int]]] = {}
    for at, line in enumerate(lines):
        found = _ENTRY.match(line)
        if found is None:
            continue
        hashes = 0
        for after in lines[at + 1:]:
            if not after.strip().startswith("--hash=sha256:"):
                break
            hashes += 1
        marker = Marker(found.group(3)) if found.group(3) else None
        entry = (Version(found.group(2)), marker, hashes)
        entries.setdefault(canonicalize_name(found.group(1)), []).append(entry)
    return entries


def _pinned(lock: dict, name: str, python: str) -> Version | None:
    """The version a lock installs of `name` on `python` (None: it installs none there)."""
    chosen = [v for v, marker, _ in lock.get(canonicalize_name(name), [])
              if marker is None or marker.evaluate(_environment(python))]
    assert len(chosen) <= 1, (name, python, chosen)
    return chosen[0] if chosen else None


def _project() -> dict:
    import tomllib

    return tomllib.loads((REPO / "pyproject.toml").read_text())["project"]


def _requirements(extras: list[str]) -> list[Requirement]:
    """The requirements of the package and of `extras`, the project's own extras ("cqlsh-ext[parquet]")
    followed, the native core's left out (no index has it)."""
    project = _project()
    optional = project["optional-dependencies"]
    out = [Requirement(r) for r in project["dependencies"]]
    todo, seen = list(extras), set()
    while todo:
        extra = todo.pop()
        if extra in seen or extra == "native":
            continue
        seen.add(extra)
        for text in optional[extra]:
            requirement = Requirement(text)
            if canonicalize_name(requirement.name) == canonicalize_name(project["name"]):
                todo.extend(requirement.extras)
            else:
                out.append(requirement)
    return out


def _held_within_ranges(lock_name: str, extras: list[str]) -> None:
    lock = _lock(lock_name)
    for python in PYTHONS:
        env = _environment(python)
        for requirement in _requirements(extras):
            if requirement.marker is not None and not requirement.marker.evaluate(env):
                continue
            version = _pinned(lock, requirement.name, python)
            assert version is not None, f"{lock_name}: no {requirement.name} on Python {python} (bin/lock)"
            assert requirement.specifier.contains(version, prereleases=True), \
                f"{lock_name}: {requirement.name} {version} is not {requirement} (run bin/lock)"


def test_the_main_lock_holds_every_extra_within_its_ranges_with_hashes() -> None:
    # (native: ours, never from an index; spark4: pyspark 4 beside the spark extra's 3.5, in a site of
    # its own that bin/setup installs for the Spark 4 tests)
    extras = [name for name in _project()["optional-dependencies"] if name not in ("native", "spark4")]
    assert {"test", "parquet", "api", "mcp", "spark"} <= set(extras)
    _held_within_ranges("main.txt", extras)
    lock = _lock("main.txt")
    assert all(hashes > 0 for entries in lock.values() for _, _, hashes in entries)
    assert "cqlsh-ext" not in lock and "cqlsh-ext-native" not in lock  # ours: never from an index


def test_the_other_end_holds_its_versions_and_the_test_extra() -> None:
    _held_within_ranges("other-end.txt", ["test"])
    other, main = _lock("other-end.txt"), _lock("main.txt")
    forced = [Requirement(line) for line in (LOCKS / "other-end.in").read_text().splitlines()
              if line.strip() and not line.startswith("#")]
    assert {canonicalize_name(r.name) for r in forced} == {"pandas", "pyarrow", "polars", "duckdb", "mcp",
                                                           "uvicorn"}
    for requirement in forced:
        (pinned,) = requirement.specifier
        assert _pinned(other, requirement.name, "3.11") == Version(pinned.version), requirement
        # the other end of the range: not the main lock's
        assert _pinned(main, requirement.name, "3.11") != Version(pinned.version), requirement
    assert _pinned(other, "pandas", "3.11").major == 3 and _pinned(main, "pandas", "3.11").major == 2


def test_every_lowest_bound_is_a_version_tested() -> None:
    from test_environment import ENVIRONMENT

    tested: dict[str, set[Version]] = {}
    for lock in (_lock("main.txt"), _lock("other-end.txt")):
        for name in lock:
            for python in PYTHONS:
                version = _pinned(lock, name, python)
                if version is not None:
                    tested.setdefault(name, set()).add(version)
    for name, version in ENVIRONMENT.items():
        tested.setdefault(canonicalize_name(name), set()).add(Version(version))
    for requirement in _requirements(["test", "spark"]):  # (test brings parquet, api and mcp)
        if requirement.marker is not None and not any(requirement.marker.evaluate(_environment(python))
                                                      for python in PYTHONS):
            continue  # (a marker no Python the locks serve meets)
        lowest = [s.version for s in requirement.specifier if s.operator in (">=", "==")]
        assert lowest, f"{requirement}: a range starts at the oldest version tested"
        name = canonicalize_name(requirement.name)
        assert Version(lowest[0]) in tested.get(name, set()), \
            f"{requirement}: {lowest[0]} is tested nowhere (tested: {sorted(map(str, tested.get(name, ())))})"
        # at its lowest bound or above: never a bound below what either end installs
        assert Version(lowest[0]) == min(tested[name]), (requirement, sorted(map(str, tested[name])))
