"""Reading a module's `DECLARES` literal from its file, without importing the module.

Every codec module (codecs/<family>.py, or a package codecs/<family>/) and every payload format
module (payload/formats/<name>.py) declares near its top (in its first HEAD bytes) `DECLARES =
{...}`: a literal (names, priorities, short help) that option parsing and help texts need at
start-up. `read_declarations` finds the modules by their files and evaluates that one statement,
without importing them (loading every codec module would cost start-up time for help text); a
module whose file cannot be read (a zip install) is imported. Standard library only, at the bottom
of the layers: the codec and payload layers and the settings all read declarations through it.
"""

from __future__ import annotations

import ast
import os
from importlib import import_module
from typing import Any

__all__ = ["HEAD", "PREFIX", "modules", "read_declaration", "read_declarations"]

PREFIX = "DECLARES = "
#: DECLARES must start within a module's first HEAD bytes (near its top): the rest is not read.
HEAD = 4096
_CLOSING = {b"{": b"\n}", b"(": b"\n)", b"[": b"\n]"}
_MARK = ("\n" + PREFIX).encode()
_UNREADABLE = object()


def modules(directory: str) -> list[str]:
    """The public modules and packages in `directory` (sorted): names without a leading '_'."""
    out = []
    for entry in os.listdir(directory):
        name = entry[:-3] if entry.endswith(".py") else entry
        if name.startswith("_") or not name.isidentifier():
            continue
        if entry.endswith(".py") or os.path.isfile(os.path.join(directory, entry, "__init__.py")):
            out.append(name)
    return sorted(out)


def _parse(text: bytes) -> object:
    """The literal after `DECLARES = ` in `text` (the shortest run of lines that is a whole
    literal); None when there is none; SyntaxError when `text` ends inside it."""
    start = text.find(_MARK)
    if start < 0:
        return None
    start += len(_MARK)
    end = text.find(b"\n", start)
    closing = _CLOSING.get(text[end - 1 : end]) if end > start else None
    if closing is not None:  # a literal over several lines ends with its bracket in column 0
        close = text.find(closing, end)
        end = close + 2 if close >= 0 else -1
    while end >= 0:
        try:
            return ast.literal_eval(text[start:end].decode("utf-8"))
        except SyntaxError:
            end = text.find(b"\n", end + 1)
    return ast.literal_eval(text[start:].decode("utf-8"))


def _literal(path: str) -> object:
    """The module's DECLARES; None when it has none (a helper module: base, registry, checks,
    tree), _UNREADABLE when the file cannot be read."""
    try:
        with open(path, "rb") as f:
            text = f.read(HEAD)
            try:
                return _parse(text)
            except SyntaxError:  # the literal starts in the head and runs past it
                text += f.read()
    except OSError:
        return _UNREADABLE
    return _parse(text)


def read_declaration(path: str, module: str) -> object:
    """The DECLARES of `module`, whose source is `path` (None when it declares nothing), read
    from the file; imported only when the file cannot be read (a zip install)."""
    value = _literal(path)
    if value is _UNREADABLE:
        value = getattr(import_module(module), "DECLARES", None)
    return value


def read_declarations(directory: str, package: str) -> dict[str, dict[str, Any]]:
    """{module name: its DECLARES} for every declaring module of `package` in `directory`."""
    out: dict[str, dict[str, Any]] = {}
    for name in modules(directory):
        path = os.path.join(directory, name, "__init__.py")
        if not os.path.isfile(path):
            path = os.path.join(directory, f"{name}.py")
        value = read_declaration(path, f"{package}.{name}")
        if isinstance(value, dict):
            out[name] = value
    return out


