"""Declarations read without importing the modules that make them.

Every codec module (`codecs/<family>.py`, or a package `codecs/<family>/`) and every payload
format module (`payload/formats/<name>.py`) declares near its top

    DECLARES = {...}

a literal (names, priorities, short help) that option parsing and help texts need at start-up.
`read(directory)` finds the modules by their files (no import: loading every codec module would
cost start-up time for help text) and evaluates that one line; the modules themselves are imported
only by the registries that decode. A module whose file cannot be read (a zip install) is imported.
"""

from __future__ import annotations

import ast
import os
from importlib import import_module
from typing import Any

PREFIX = "DECLARES = "
#: Modules of a package directory that declare nothing.
NOT_DECLARING = frozenset({"base", "registry", "declared", "tree"})


def modules(directory: str) -> list[str]:
    """The public modules and packages in `directory` (sorted): names without a leading '_'."""
    out = []
    for entry in os.listdir(directory):
        name = entry[:-3] if entry.endswith(".py") else entry
        if name.startswith("_") or name in NOT_DECLARING or not name.isidentifier():
            continue
        if entry.endswith(".py") or os.path.isfile(os.path.join(directory, entry, "__init__.py")):
            out.append(name)
    return sorted(out)


def _literal(path: str) -> object:
    """The value of the module's `DECLARES = ...` (which may span lines); None when absent."""
    try:
        with open(path, encoding="utf-8") as f:
            text = None
            for line in f:
                if text is None and line.startswith(PREFIX):
                    text = line[len(PREFIX):]
                elif text is not None:
                    text += line
                else:
                    continue
                try:
                    return ast.literal_eval(text)
                except SyntaxError:
                    continue
    except OSError:
        return None
    return None


def read(directory: str, package: str) -> dict[str, dict[str, Any]]:
    """{module name: its DECLARES} for every declaring module of `package` in `directory`."""
    out: dict[str, dict[str, Any]] = {}
    for name in modules(directory):
        path = os.path.join(directory, name, "__init__.py")
        if not os.path.isfile(path):
            path = os.path.join(directory, f"{name}.py")
        value = _literal(path)
        if value is None:
            value = getattr(import_module(f"{package}.{name}"), "DECLARES", None)
        if isinstance(value, dict):
            out[name] = value
    return out
