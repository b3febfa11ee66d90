"""What a container may do besides being detected and decoded: one capability per feature that uses it.

`codecs.base.Container` is what every container is (its names, grade, signature, place in
detection, `decode` and `trial`). The rest is optional, and each feature asks for what it uses:

  capability       used by                                   members
  Headers          INSPECT's header fields                   headers(data), trailer_fields
  Checksums        INSPECT's checksums                       verify(data, decoded, cap, error)
  HeaderSized      COMPRESSION STATS, sizing from headers    header_sized_from, declared_size(data),
                                                             peek(data, n), first_byte(data)
  Compressors      COMPRESSION ADVISE's candidates           compressors(), advise_priority, library
  Dictionaries     ADVISE's trained dictionary               dictionary_level, train_dictionary(...),
                   and the one SAVE DICTIONARY writes        trained_dictionary(samples, size)
  TableCompressor  COMPRESSION SETTINGS                      cassandra_class, table_compressor(options)
  Writer           encode()                                  reference, write(data, level),
                                                             level_range, writes_bare (encode given),
                                                             level_shown(data) (edits)
  DictionaryWriter encode() with a stored dictionary          dictionary_kind,
                   (`<codec>:dict=ID`)                       write_with_dictionary(data, level, dictionary),
                                                             dictionary_named(data) (edits)
  NotWritten       encode()'s refusal, when it is no Writer  unwritable
  NeedsWorker      a memory-limited worker process           needs_worker

A container declares a capability by naming it among its bases, after `Container`
(`class Format(Container, Headers, Writer)`), and defining its members. A method a named
capability needs and the container lacks makes importing the codec module fail ("Can't instantiate
abstract class"); tests/codecs/test_declarations.py holds the data members complete, and refuses a
member defined without its capability (which no caller would ask for). Callers ask
`isinstance(fmt, Capability)`: each is a runtime-checkable typing.Protocol (a class defining every
member has it too, named or not).

Imported with the codec modules, not at shell start-up; nothing here imports a codec library.
"""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Callable
from typing import Protocol, TypeGuard, runtime_checkable

from .base import Check, Compressor, Decoded, Unwritable

__all__ = [
    "CAPABILITIES", "NO_WRITER", "Checksums", "Compressors", "Dictionaries", "DictionaryWriter",
    "HeaderSized", "Headers",
    "NeedsWorker", "NotWritten", "TableCompressor", "Writer", "unwritable", "writes_dictionaries",
]


# ------------------------------------------------------------------------------------------ INSPECT


@runtime_checkable
class Headers(Protocol):
    """INSPECT shows the container's header fields (insight/inspect.py)."""

    #: headers() fields read from the end of the value (a trailer): on a value that is cut short
    #: or corrupt those bytes are not a trailer, and INSPECT says so instead of showing them as facts.
    trailer_fields: tuple[str, ...] = ()

    @abstractmethod
    def headers(self, data: bytes) -> dict[str, object]:
        """Header fields for INSPECT, `"format": <label>` first (may be slow; never decompresses
        more than it must). Raises DecodeError when the header cannot be parsed."""


@runtime_checkable
class Checksums(Protocol):
    """INSPECT verifies the checksums the container carries (insight/checksums.py dispatches; the
    statuses and helpers are in codecs/checks.py)."""

    @abstractmethod
    def verify(self, data: bytes, decoded: Decoded | None, cap: int, error: str | None) -> list[Check]:
        """Each stored checksum next to the one computed here, for a value that decoded (`decoded`)
        or did not (`error`), on a decoding path that does not verify. May raise on a value it
        cannot walk (the caller says so)."""


# -------------------------------------------------------------------------------- COMPRESSION STATS


@runtime_checkable
class HeaderSized(Protocol):
    """COMPRESSION STATS with header sizing (payload.measures: FROM_HEADER) takes a value of this format
    at the size its header declares, peeking at the payload's first bytes instead of decoding it
    all. Needs a magic whose first byte is its own (the table is keyed by it)."""

    #: From this stored size on (bytes): below it the peek costs about what the decode does.
    header_sized_from: int

    @abstractmethod
    def declared_size(self, data: bytes) -> int | None:
        """The decompressed size the value's headers declare, when they declare one that its
        structure makes plausible (one frame, ending exactly at the end of `data`, blocks that can
        produce that much); None otherwise. Reads headers only: nothing is decompressed or checked
        against a checksum, so it suits size statistics, not display. Must never raise."""

    @abstractmethod
    def peek(self, data: bytes, n: int) -> bytes | None:
        """The first `n` decompressed bytes (or fewer), decoding no more than it must; None when
        that fails. Lets a caller that trusts declared_size() still see what is inside."""

    def first_byte(self, data: bytes) -> int | None:
        """The payload's first byte as the headers tell it without decoding anything (a zstd
        frame's first literal), None where they do not or where a decode would check more than
        the framing (a checksum of the payload): for a value the decoder reads, the payload's
        first byte. A value whose first byte nothing recognisable starts with is sized from its
        header at any size, unseen (COMPRESSION STATS). Must never raise."""
        return None


# ------------------------------------------------------------------------------- COMPRESSION ADVISE


@runtime_checkable
class Compressors(Protocol):
    """How producers write the container: what COMPRESSION ADVISE measures (insight/recompress.py)."""

    #: ADVISE measures this format's compressors(), in this order; None: it does not.
    advise_priority: int | None = None
    #: The package compressors() imports, named in ADVISE's 'not installed' note ('' for stdlib).
    library: str = ""

    @abstractmethod
    def compressors(self) -> list[Compressor]:
        """Each level or mode worth measuring. Imports the library: ImportError when it is not
        installed."""


@runtime_checkable
class Dictionaries(Protocol):
    """ADVISE also measures a dictionary trained on the sample, next to the compressor of its level
    (for a format that also has Compressors with an advise_priority)."""

    #: The level the dictionary is measured at.
    dictionary_level: int

    @abstractmethod
    def train_dictionary(
        self, samples: list[bytes], size: int, level: int
    ) -> tuple[Callable[[bytes], bytes], Callable[[bytes], bytes]]:
        """(compress, decompress) with a dictionary of `size` bytes trained on `samples`.
        ValueError when training fails; ImportError without the library."""

    @abstractmethod
    def trained_dictionary(self, samples: list[bytes], size: int) -> bytes:
        """The dictionary of `size` bytes trained on `samples`, as a dictionary file holds it (its
        ID inside: codecs.dictionaries reads it back). ValueError when training fails."""


# ----------------------------------------------------------------------------- COMPRESSION SETTINGS


@runtime_checkable
class TableCompressor(Protocol):
    """A Cassandra table compressor writes its chunks in this format: COMPRESSION SETTINGS measures
    the table's chunks with table_compressor() (insight/table_settings.py)."""

    #: The compressor's short class name, as a table's `class` option ends.
    cassandra_class: str

    @abstractmethod
    def table_compressor(self, options: dict[str, str]) -> Callable[[bytes], bytes]:
        """How `cassandra_class` compresses a chunk, given the table's compression options (its
        level, say). Imports the library: ImportError when it is not installed."""


# ------------------------------------------------------------------------------------------ encode()


@runtime_checkable
class Writer(Protocol):
    """encode() writes the container (cqlsh_ext/encode; docs/payloads.md's table holds these)."""

    #: The producer whose bytes write() makes, for the docs and the refusal lines.
    reference: str
    #: The levels encode() accepts (`<codec>:N`), inclusive; None: the container has none.
    level_range: tuple[int, int] | None = None
    #: The container a bare `encode('<codec>', ...)` writes: its most common producer's
    #: (registry.written_by; one per codec).
    writes_bare: bool = False
    #: Written only with a dictionary of the store (`<codec>:dict=...`, a DictionaryWriter's): a
    #: value of it names its dictionary, and there is none to write without.
    needs_dictionary: bool = False

    @property
    @abstractmethod
    def label(self) -> str:
        """Container.label (named here for encode()'s messages)."""

    @abstractmethod
    def write(self, data: bytes, level: int | None) -> bytes:
        """`data` written as the reference producer writes it, at `level` (checked by encode()) or
        its default. Imports the library; Unwritable when it cannot write faithfully here."""

    def level_shown(self, data: bytes) -> int | None:
        """The level stored bytes of this container say they were written at (a header field), which
        an edit writes them back at (cqlsh_ext.edit); None when the bytes do not say."""
        return None

    def encode(self, data: bytes, level: int | None = None, dictionary: bytes | None = None) -> bytes:
        """write() once the level is checked: Unwritable when it is out of range; with a dictionary
        (a DictionaryWriter's), write_with_dictionary()."""
        if level is not None:
            if self.level_range is None:
                raise Unwritable(f"{self.label} has no levels")
            low, high = self.level_range
            if not low <= level <= high:
                raise Unwritable(f"{self.label} levels are {low} to {high}")
        if dictionary is not None:
            if not isinstance(self, DictionaryWriter):
                raise Unwritable(f"{self.label} is not written with a dictionary here")
            return self.write_with_dictionary(data, level, dictionary)
        return self.write(data, level)


@runtime_checkable
class DictionaryWriter(Protocol):
    """encode() writes the container with a dictionary of the store (`<codec>:dict=ID`)."""

    #: Which of the store's dictionaries it takes (codecs.dictionaries.ZSTD or ZLIB).
    dictionary_kind: str

    @abstractmethod
    def write_with_dictionary(self, data: bytes, level: int | None, dictionary: bytes) -> bytes:
        """write(), compressing against `dictionary` (the value then names it: its ID)."""

    @abstractmethod
    def dictionary_named(self, data: bytes) -> int | None:
        """The ID of the dictionary stored bytes of this container name (an edit writes them back
        with it); None when they name none."""


#: Per container class, whether it is a DictionaryWriter (a protocol with a data member: Python
#: 3.11's isinstance walks its attributes on every call, a per-row cost for COMPRESSION REWRITE).
_DICTIONARY_WRITERS: dict[type, bool] = {}


def writes_dictionaries(fmt: object) -> TypeGuard[DictionaryWriter]:
    """isinstance(fmt, DictionaryWriter), answered once per container class (a container's
    capabilities are its class's)."""
    kind = type(fmt)
    found = _DICTIONARY_WRITERS.get(kind)
    if found is None:
        found = _DICTIONARY_WRITERS[kind] = isinstance(fmt, DictionaryWriter)
    return found


@runtime_checkable
class NotWritten(Protocol):
    """A container encode() does not write, saying why (the refusal, docs/payloads.md)."""

    unwritable: str


#: Why encode() refuses a container that is neither a Writer nor says why itself.
NO_WRITER = "no writer for it here"


def unwritable(fmt: object) -> str:
    """Why encode() does not write `fmt` (no Writer): its own reason, or NO_WRITER."""
    return fmt.unwritable if isinstance(fmt, NotWritten) else NO_WRITER


# ---------------------------------------------------------------------------------------- isolation


@runtime_checkable
class NeedsWorker(Protocol):
    """Its library reserves or allocates memory that no header check here can bound without refusing
    valid values: INSPECT, offline inspect and ADVISE decode it in a memory-limited worker process
    (insight/isolate.py); the display, which cannot afford one, relies on caps."""

    #: Why: what the library reserves or cannot bound.
    needs_worker: str


#: Every capability, in the order of the table above.
CAPABILITIES: tuple[type, ...] = (
    Headers, Checksums, HeaderSized, Compressors, Dictionaries, TableCompressor, Writer, DictionaryWriter,
    NotWritten, NeedsWorker,
)
