"""Binary payload formats: what a blob holds once its compression layers are peeled.

Each format module defines one `PayloadFormat`: its name (as a user names it), whether it can be
detected on its own, a cheap check of the bytes, and a decoder to a tree (formats.tree). The
decoders never run code from data, never allocate from a declared length before the bytes exist,
and stop at depth and item caps; a library that does any of these by default is called with the
options that stop it (each module says which).

    detect(data)                  (format, tree) of the first auto-detectable format that decodes
                                  the whole value exactly, or None
    decode_named(name, data[, argument])
                                  the tree, or PayloadError with a one-line reason

Libraries load on first use (the format modules import them inside their functions).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from importlib import import_module
from typing import Any

from cqlsh_ext.payload.formats.tree import OverBudget, PayloadError

__all__ = ["FORMAT_NAMES", "OverBudget", "PayloadError", "PayloadFormat", "decode_named", "detect", "get"]


@dataclass(frozen=True)
class PayloadFormat:
    name: str
    #: Detected without being named: by a signature, or (msgpack, untagged CBOR) only when the
    #: whole value parses exactly and its top level is a map or an array.
    auto: bool
    #: A cheap look at the first bytes: may this value be of the format at all?
    maybe: Callable[[bytes], bool]
    #: bytes -> tree; raises PayloadError.
    decode: Callable[[bytes], Any]
    #: The label in a value's chain ('pickle/4'); the name when None.
    labeller: Callable[[bytes], str] | None = None
    #: Auto-detection's decoder, stricter than `decode` for formats without a signature (the
    #: whole value must look like a record); `decode` when None.
    detector: Callable[[bytes], Any] | None = None
    #: The decoder given a column setting's argument (avro:order.avsc): (bytes, argument) -> tree.
    decode_with: Callable[[bytes, str], Any] | None = None
    #: The tree has at most one node per byte of the value and renders to a few characters per
    #: byte: no back-references (pickle's memo, CBOR string references, Smile's shared strings,
    #: Java handles), no compression inside (Avro blocks), no names looked up (protobuf enums).
    #: Such a tree from a small value is rendered without a first count (payload.budget).
    nodes_within_input: bool = False

    def label(self, data: bytes) -> str:
        return self.labeller(data) if self.labeller is not None else self.name


#: Modules in detection order: signatures first (a false match is near impossible), then the
#: formats recognised only by parsing the whole value; MessagePack before CBOR, whose arrays
#: start with MessagePack's map bytes (a MessagePack record never costs a CBOR attempt).
_MODULES = ("avro", "smile", "pickle", "bson", "msgpack", "cbor", "protobuf", "java")
_LOADED: dict[str, PayloadFormat] = {}


_AUTO: list[PayloadFormat] = []


def _formats() -> dict[str, PayloadFormat]:
    if not _LOADED:
        for name in _MODULES:
            module = import_module(f"cqlsh_ext.payload.formats.{name}")
            fmt: PayloadFormat = module.FORMAT
            _LOADED[fmt.name] = fmt
        _AUTO.extend(fmt for fmt in _LOADED.values() if fmt.auto)
    return _LOADED


FORMAT_NAMES = ("avro", "smile", "pickle", "bson", "cbor", "msgpack", "protobuf", "java")


def all_formats() -> list[PayloadFormat]:
    """Every payload format, in detection order."""
    return list(_formats().values())


def auto_formats() -> list[PayloadFormat]:
    """The formats auto-detection tries, in order."""
    _formats()
    return list(_AUTO)


def get(name: str) -> PayloadFormat | None:
    return _formats().get(name)


def detect(data: bytes) -> tuple[PayloadFormat, Any] | None:
    """The first auto-detectable format whose decoder accepts all of `data`. OverBudget from a
    candidate propagates: the value then stays hex with that reason instead of passing as plain
    bytes (it widens nothing: such a value is shown undecoded either way)."""
    if not _AUTO:
        _formats()
    for fmt in _AUTO:
        if fmt.maybe(data):
            try:
                return fmt, (fmt.detector or fmt.decode)(data)
            except OverBudget:
                raise
            except PayloadError:
                continue
    return None


def decode_named(name: str, data: bytes, argument: str | None = None) -> Any:
    fmt = get(name)
    if fmt is None:
        raise PayloadError(f"unknown payload format {name!r}")
    if argument is not None:
        if fmt.decode_with is None:
            raise PayloadError(f"{name} takes no argument")
        return fmt.decode_with(data, argument)
    return fmt.decode(data)
