"""Binary payload formats: what a blob holds once its compression layers are peeled.

Each format module `formats/<name>.py` is the format `<name>` (as a user names it): it declares
`DECLARES` (its place in detection and in name lists, read without importing it:
common.declarations) and defines one `PayloadFormat` `FORMAT`: whether it can be
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

import os
from collections.abc import Callable
from dataclasses import dataclass
from importlib import import_module
from typing import Any

from cqlsh_ext.common.declarations import read_declarations
from cqlsh_ext.payload.formats.tree import OverBudget, PayloadError

__all__ = [
    "OverBudget",
    "PayloadError",
    "PayloadFormat",
    "StreamLayer",
    "all_formats",
    "auto_formats",
    "decode_named",
    "declarations",
    "detect",
    "get",
    "register",
]


@dataclass(frozen=True)
class StreamLayer:
    """A serialization stream the decoding walk (payload.unwrap) takes as a layer of its own, the
    last one, when the bytes start with the magic its format declares (`"stream"` in DECLARES,
    read without importing the module: payload.names.STREAM_MAGICS). The walk keeps the bytes
    serialized and asks what they hold; the layer is labelled with the format's name."""

    #: How reports name the stream's contents ('<title> String', '<title> serialization stream').
    title: str
    #: The stream's first item, cheaply (once per displayed value): an object with `kind`
    #: ('String', 'object', ...), `text` (a string's text, else None), `class_name` and
    #: `truncated` (the output cap cut the string); PayloadError when the stream is not well-formed.
    first: Callable[[bytes], Any]
    #: The whole stream as a tree (payload.formats.tree); PayloadError with a one-line reason.
    read: Callable[[bytes], Any]
    #: The header fields INSPECT shows for the layer (an "error" field when they cannot be read).
    headers: Callable[[bytes], dict[str, object]]


@dataclass(frozen=True)
class PayloadFormat:
    name: str
    #: Detected without being named: by a signature, or (formats without one) only when the
    #: whole value parses exactly and its top level is a map or an array.
    auto: bool
    #: A cheap look at the first bytes: may this value be of the format at all?
    maybe: Callable[[bytes], bool]
    #: bytes -> tree; raises PayloadError.
    decode: Callable[[bytes], Any]
    #: The label in a value's chain ('<name>/<version>'); the name when None.
    labeller: Callable[[bytes], str] | None = None
    #: Auto-detection's decoder, stricter than `decode` for formats without a signature (the
    #: whole value must look like a record); `decode` when None.
    detector: Callable[[bytes], Any] | None = None
    #: The decoder given a column setting's argument (<name>:FILE): (bytes, argument) -> tree.
    decode_with: Callable[[bytes, str], Any] | None = None
    #: The tree has at most one node per byte of the value and renders to a few characters per
    #: byte: no back-references (a memo, string references, shared strings, object handles), no
    #: compression inside (container blocks), no names looked up (enums from a schema).
    #: Such a tree from a small value is rendered without a first count (payload.budget).
    nodes_within_input: bool = False
    #: encode(): a record (plain JSON values) -> bytes as `writer` writes it; None: not written
    #: here, for the reason `unwritable` gives. Raises PayloadError on a value the format cannot hold.
    encode: Callable[[Any], bytes] | None = None
    #: encode() given a column setting's argument (<name>:FILE): (record, argument) -> bytes.
    encode_with: Callable[[Any, str], bytes] | None = None
    #: The encoder takes the text itself (a serialized String), not JSON read from it.
    encodes_text: bool = False
    #: The library whose bytes the encoder writes (the docs' matrix names it).
    writer: str = ""
    #: Why encode() does not write this format.
    unwritable: str = "no writer for it here"
    #: A stream the decoding walk takes as a layer (its magic is declared in DECLARES["stream"]).
    stream: StreamLayer | None = None
    #: Every first byte `maybe` can accept (detection looks a value's formats up by it); None: any.
    leads: bytes | None = None
    #: How sure a reading found by detection is (payload.confidence: "confident", "likely",
    #: "guessed"), and why, in a few words (INSPECT; docs/formats.md's "How sure" lists them). A
    #: reading the user named is confident whatever this says.
    confidence: str = "guessed"
    confidence_why: str = "a trial of its reader"

    def label(self, data: bytes) -> str:
        return self.labeller(data) if self.labeller is not None else self.name


def declarations() -> dict[str, dict[str, Any]]:
    """{format name: its module's DECLARES}, read without importing the format modules."""
    return read_declarations(os.path.dirname(__file__), __name__)


# Loaded on first use, in detection order: the declared "detection" priorities put signatures
# first (a false match is near impossible), then the formats recognised only by parsing the whole
# value, and among those the one whose records never look like the next's first (a record of the
# earlier never costs an attempt of the later).
_LOADED: dict[str, PayloadFormat] = {}
_AUTO: list[PayloadFormat] = []
#: Per first byte, the auto-detected formats that may accept a value starting with it, in order.
_AUTO_BY_LEAD: list[tuple[PayloadFormat, ...]] = []


def register(fmt: PayloadFormat, name: str) -> None:
    """One format into the registry, under `name`: the one door of the built-ins (their modules,
    in their declared detection order) and of the formats from outside (payload.formats._outside:
    plugins and commands, after the built-ins, their decoders guarded there)."""
    if not isinstance(fmt, PayloadFormat):
        raise ImportError(f"payload format {name!r} is a {type(fmt).__name__}, not a PayloadFormat")
    if fmt.name != name:
        raise ImportError(f"payload format {name!r} defines format {fmt.name!r}")
    if name in _LOADED:
        raise ImportError(f"payload format {name!r} is registered twice")
    _LOADED[name] = fmt


def _formats() -> dict[str, PayloadFormat]:
    if not _LOADED:
        from cqlsh_ext.payload.formats._outside import outside_formats

        found = declarations()
        for name in sorted(found, key=lambda n: (found[n]["detection"], n)):
            register(import_module(f"{__name__}.{name}").FORMAT, name)
        for fmt in outside_formats():
            if fmt.name not in _LOADED:  # a built-in keeps its name
                register(fmt, fmt.name)
        _AUTO.extend(fmt for fmt in _LOADED.values() if fmt.auto)
        _AUTO_BY_LEAD.extend(tuple(f for f in _AUTO if f.leads is None or lead in f.leads)
                             for lead in range(256))
    return _LOADED


def all_formats() -> list[PayloadFormat]:
    """Every payload format, in detection order."""
    return list(_formats().values())


def auto_formats() -> list[PayloadFormat]:
    """The formats auto-detection tries, in order."""
    _formats()
    return list(_AUTO)


def get(name: str) -> PayloadFormat | None:
    found = _formats().get(name)
    if found is None:  # a command configured after the registry was first read
        from cqlsh_ext.payload.formats._outside import outside_format

        found = outside_format(name)
    return found


def detect(data: bytes) -> tuple[PayloadFormat, Any] | None:
    """The first auto-detectable format whose decoder accepts all of `data`. OverBudget from a
    candidate propagates: the value then stays hex with that reason instead of passing as plain
    bytes (it widens nothing: such a value is shown undecoded either way)."""
    if not _AUTO:
        _formats()
    for fmt in _AUTO_BY_LEAD[data[0]] if data else _AUTO:
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
