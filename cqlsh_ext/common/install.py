"""How to add one of cqlsh-ext's extras (parquet, spark) here: a command that works where this
cqlsh-ext was installed from.

cqlsh-ext is not on a package index, so `pip install 'cqlsh-ext[parquet]'` fails everywhere. Where
it came from decides the command:
- a checkout's `.venv` made by `bin/setup`: `bin/setup --parquet`;
- a checkout installed into another environment: pip with the checkout's path, `-e` only where it
  was installed editable (a copy is not made editable, nor an editable install a copy);
- the Docker image (it sets IMAGE_ENV; pip is not in it): the image built with the extra;
- anything else (a wheel, a checkout since removed): pip with the extra's own requirements, read
  from the installed metadata.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import sys
from importlib import metadata
from pathlib import Path
from urllib.parse import unquote, urlparse

DIST = "cqlsh-ext"
#: Set by the Dockerfile in the image it builds.
IMAGE_ENV = "CQLSH_EXT_IMAGE"
#: A requirement's marker clause naming its extra, as setuptools writes it.
_EXTRA_CLAUSE = re.compile(r'\s*(?:and\s+)?extra\s*==\s*"([^"]+)"')


def install_hint(extra: str) -> str:
    """What to run to add `extra` to this installation, as one clause of a message."""
    if os.environ.get(IMAGE_ENV):
        return (f"this image was built without it; build it with the extra: docker build --build-arg "
                f"EXTRAS={extra} -t cqlsh-ext .")
    python = shlex.quote(sys.executable)
    checkout = _checkout()
    if checkout is not None:
        setup = checkout / "bin" / "setup"
        if setup.is_file() and _same(Path(sys.prefix), checkout / ".venv"):
            shown = "bin/setup" if _same(Path.cwd(), checkout) else shlex.quote(str(setup))
            return f"run {shown} --{extra}"
        editable = "-e " if _editable() else ""
        return f"run {python} -m pip install {editable}{shlex.quote(f'{checkout}[{extra}]')}"
    source = _installed_from()
    if source is not None:
        return f"run {python} -m pip install {shlex.quote(f'{source}[{extra}]')}"
    wanted = " ".join(shlex.quote(r) for r in requirements(extra)) or shlex.quote(f"{DIST}[{extra}]")
    return f"run {python} -m pip install {wanted}"


def requirements(extra: str) -> list[str]:
    """The requirements `extra` adds, from the installed metadata (an extra naming another of
    cqlsh-ext's extras brings that one's), each with the rest of its environment marker."""
    try:
        declared = metadata.requires(DIST) or []
    except metadata.PackageNotFoundError:
        return []
    out: list[str] = []
    todo, seen = [extra], set()
    while todo:
        name = todo.pop(0)
        if name in seen:
            continue
        seen.add(name)
        for requirement in declared:
            spec, _, marker = requirement.partition(";")
            clause = _EXTRA_CLAUSE.search(marker)
            if clause is None or clause.group(1) != name:
                continue
            own = re.fullmatch(rf"\s*{re.escape(DIST)}\[([\w,-]+)\]\s*", spec)
            if own:
                todo.extend(e.strip() for e in own.group(1).split(","))
                continue
            rest = _EXTRA_CLAUSE.sub("", marker).strip()
            rest = re.sub(r"^\((.*)\)$", r"\1", rest)  # "(a and b) and extra" leaves "(a and b)"
            out.append(f"{spec.strip()}; {rest}" if rest else spec.strip())
    return out


def _checkout() -> Path | None:
    """The checkout this cqlsh_ext package is imported from (an editable install, or a run from
    the source tree), or None when it was installed as a copy."""
    root = Path(__file__).resolve().parents[2]
    try:
        project = (root / "pyproject.toml").read_text(encoding="utf-8")
    except OSError:
        return None
    return root if re.search(rf'^name\s*=\s*"{re.escape(DIST)}"', project, re.MULTILINE) else None


def _editable() -> bool:
    """This environment's cqlsh-ext was installed editable (PEP 610's direct_url.json says so)."""
    try:
        origin = json.loads(metadata.distribution(DIST).read_text("direct_url.json") or "null")
    except (metadata.PackageNotFoundError, ValueError):
        return False
    info = origin.get("dir_info") if isinstance(origin, dict) else None
    return isinstance(info, dict) and info.get("editable") is True


def _installed_from() -> Path | None:
    """The directory pip installed this copy from (PEP 610's direct_url.json), when it still exists."""
    site = Path(__file__).resolve().parents[2]
    for dist in metadata.distributions(path=[str(site)]):
        if (dist.metadata["Name"] or "").lower() != DIST:
            continue
        try:
            origin = json.loads(dist.read_text("direct_url.json") or "null")
        except ValueError:
            return None
        if not isinstance(origin, dict) or "dir_info" not in origin:
            return None  # an archive (a wheel) or an index: the requirements instead
        url = urlparse(str(origin.get("url", "")))
        path = Path(unquote(url.path))
        return path if url.scheme == "file" and (path / "pyproject.toml").is_file() else None
    return None


def _same(a: Path, b: Path) -> bool:
    try:
        return a.resolve() == b.resolve()
    except OSError:
        return False
