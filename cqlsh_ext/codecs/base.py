"""Shared types of the codec layer: what a format is, what a decode returns, how output is capped.

Every codec module (codecs/<family>.py or the package codecs/<family>/) declares its `-d` names
(`DECLARES`, read without importing it: common.declarations) and its `Container` instances (`FORMATS`),
each carrying its own detection priorities; the registry orders them for auto-detection and maps
`-d CODEC` names to them. Nothing here imports a codec library or a codec module, so importing
this costs nothing at shell start-up.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any, ClassVar, Literal

from cqlsh_ext.common.declarations import read_declarations

Grade = Literal["A", "B", "C", "D"]


def codec_declarations() -> dict[str, dict[str, Any]]:
    """{codec module name: its DECLARES}, read from the modules' files (none is imported)."""
    return read_declarations(os.path.dirname(__file__), __package__ or "cqlsh_ext.codecs")


def codec_names(found: dict[str, dict[str, Any]] | None = None) -> tuple[str, ...]:
    """The -d names besides auto/none, in the order each codec module's DECLARES places them.
    Read from the modules' files: option parsing and help texts load no codec module."""
    if found is None:
        found = codec_declarations()
    places = sorted((place, name) for decl in found.values() for name, place in decl["names"].items())
    return tuple(name for _place, name in places)


def ranked(found: dict[str, dict[str, Any]], key: str) -> tuple[str, ...]:
    """The names the declarations rank under `key` ({name: rank}), lowest rank first."""
    ranks = sorted((rank, name) for decl in found.values() for name, rank in decl.get(key, {}).items())
    return tuple(name for _rank, name in ranks)


_CODECS_DECLARED = codec_declarations()
#: Names accepted by -d besides auto/none.
CODEC_NAMES: tuple[str, ...] = codec_names(_CODECS_DECLARED)
#: What INSPECT shows of each codec's headers (a codec module's `"headers"`), in name-list order.
CODEC_HEADERS: tuple[str, ...] = tuple(
    decl["headers"] for decl in sorted(_CODECS_DECLARED.values(), key=lambda d: min(d["names"].values()))
    if "headers" in decl
)
#: The codecs help texts show in their examples, first the one they show alone (a codec module
#: declares `"example": {name: rank}`): help names no codec of its own.
CODEC_EXAMPLES: tuple[str, ...] = ranked(_CODECS_DECLARED, "example")
#: COMPRESSION TRIAL's default codecs (after the stored and the uncompressed values), in order (a
#: codec module declares `"trial": {name: rank}`).
CODEC_TRIAL: tuple[str, ...] = ranked(_CODECS_DECLARED, "trial")

#: Default cumulative output cap per displayed value (all nested layers together).
DEFAULT_CAP = 4 * 1024 * 1024
#: Container.ruled_out reads at most this many first bytes of a value (and its length).
RULED_OUT_HEADER = 16


class DecodeError(Exception):
    """A value looked like a format but could not be decoded. str() is a short one-line reason."""

    #: The format that raised, when the registry knows it (set by decode_auto/decode_named).
    format: Container | None = None


class Unwritable(ValueError):
    """encode() cannot write this container (or this level) faithfully; str() is the one-line reason."""


class Undecodable(DecodeError):
    """A recognised format that cannot be decoded here (one needing a dictionary, say)."""


class Check:
    """One checksum INSPECT reports for a value: the stored value next to the one computed here
    (codecs.checks has the statuses and helpers). Plain and slotted, as Decoded is."""

    __slots__ = ("computed", "detail", "status", "stored", "what")

    def __init__(self, what: str, status: str, stored: str | None = None, computed: str | None = None,
                 detail: str | None = None) -> None:
        self.what = what
        self.status = status
        self.stored = stored
        self.computed = computed
        self.detail = detail

    def to_json(self) -> dict[str, object]:
        fields = (("what", self.what), ("status", self.status), ("stored", self.stored),
                  ("computed", self.computed), ("detail", self.detail))
        return {k: v for k, v in fields if v is not None}

    def __repr__(self) -> str:
        return f"Check({', '.join(f'{k}={v!r}' for k, v in self.to_json().items())})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Check) and self.to_json() == other.to_json()

    __hash__ = None  # type: ignore[assignment]  # mutable, compared by value, as a dataclass


class Decoded:
    """The output of one decoding layer. A plain class with the repr and equality a slotted
    dataclass would give: one Decoded per displayed cell (this __init__ is ~20 % cheaper than
    dataclass's default_factory handling), and no dataclass processing at start-up."""

    __slots__ = ("data", "declared_size", "headers", "truncated")
    __match_args__ = ("data", "truncated", "declared_size", "headers")

    def __init__(
        self,
        data: bytes,
        truncated: bool = False,
        declared_size: int | None = None,
        headers: dict[str, object] | None = None,
    ) -> None:
        self.data = data
        #: True when output stopped at the cap before the stream ended.
        self.truncated = truncated
        #: Uncompressed size the container declares (header/trailer), when it declares one.
        self.declared_size = declared_size
        #: Header fields worth showing (INSPECT); plain JSON-able values only.
        self.headers = {} if headers is None else headers

    def _fields(self) -> tuple[object, ...]:
        return (self.data, self.truncated, self.declared_size, self.headers)

    def __repr__(self) -> str:
        return (f"Decoded(data={self.data!r}, truncated={self.truncated!r}, "
                f"declared_size={self.declared_size!r}, headers={self.headers!r})")

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        assert isinstance(other, Decoded)
        return self._fields() == other._fields()

    __hash__ = None  # type: ignore[assignment]  # mutable, like an unfrozen dataclass


class Compressor:
    """One way a producer writes a format: what ADVISE measures and an encoder writes through.
    (A plain class: a dataclass here would cost start-up time, and this module is loaded then.)"""

    __slots__ = ("compress", "decompress", "family", "name", "slow")

    def __init__(
        self,
        name: str,
        family: str,
        compress: Callable[[bytes], bytes],
        decompress: Callable[[bytes], bytes],
        slow: bool = False,
    ) -> None:
        #: Shown to users: the format's label, with the level or mode when it has one ('<codec> 3').
        self.name = name
        #: The -d name that reads it back.
        self.family = family
        self.compress = compress
        #: Its inverse, from the same library (ADVISE times it; it checks the round trip).
        self.decompress = decompress
        #: Too slow to measure on a big sample.
        self.slow = slow

    def __repr__(self) -> str:
        return f"<Compressor {self.name}>"


class Container:
    """One container format of one codec family (a codec module declares them)."""

    #: Codec family, the name a user passes to -d (one of CODEC_NAMES).
    codec: ClassVar[str]
    #: Container within the family, shown to users: 'raw', 'framed', 'xerial', 'hadoop', 'frame', ...
    container: ClassVar[str]
    grade: ClassVar[Grade]
    #: Leading signature bytes (grade A/B), or b"" when the format has none.
    magic: ClassVar[bytes] = b""
    #: headers() fields read from the end of the value (a trailer): on a value that is cut short
    #: or corrupt those bytes are not a trailer, and INSPECT says so instead of showing them as facts.
    trailer_fields: ClassVar[tuple[str, ...]] = ()
    #: Every first byte matches() can accept (the registry's dispatch); defaults to magic[:1].
    lead_bytes: ClassVar[bytes] = b""

    #: The codec's usual container, labelled by the codec name alone ('<codec>', not '<codec>/frame').
    primary: ClassVar[bool] = False

    # Where the format stands in detection and dispatch (codecs.registry builds its tables from
    # these; lower is tried first; None is never). Numbers are global across codec modules.
    #: `-d NAME` tries this format, at this priority among NAME's formats: {name: priority}.
    tried_by: ClassVar[dict[str, int]] = {}
    #: Auto-detection by signature (grade A/B): the order among the formats a first byte selects.
    signature_priority: ClassVar[int | None] = None
    #: Signature-less auto-detection (grade C): the order of the trial decodes.
    trial_priority: ClassVar[int | None] = None
    #: The same, when the value's first byte is 0.
    trial_zero_priority: ClassVar[int | None] = None
    #: Tried after the signatures and before the other trials when early(data) holds.
    early_priority: ClassVar[int | None] = None
    #: COMPRESSION ADVISE measures this format's compressors(), in this order; None: it does not.
    advise_priority: ClassVar[int | None] = None
    #: The package compressors() imports, named in ADVISE's 'not installed' note ('' for stdlib).
    library: ClassVar[str] = ""
    #: ADVISE also measures a dictionary trained on the sample (train_dictionary) at this level,
    #: next to the compressor of that level; None: the format has no dictionaries.
    dictionary_level: ClassVar[int | None] = None
    #: Its library reserves or allocates memory that no header check here can bound without
    #: refusing valid values: INSPECT, offline inspect and ADVISE decode it in a memory-limited
    #: worker process (insight/isolate.py); the display, which cannot afford one, relies on caps.
    needs_worker: ClassVar[bool] = False
    #: COMPRESSION STATS with header sizing (insight.measure.quick) takes a value of this format at
    #: least this long (stored bytes) at the size its header declares, peeking at the payload's
    #: first bytes instead of decoding it all; None: never (a format without a declared size, or
    #: one whose peek costs as much as the decode). Needs a magic whose first byte is its own.
    header_sized_from: ClassVar[int | None] = None
    #: The Cassandra table compressor (the short class name, 'LZ4Compressor') whose chunks are
    #: this format: COMPRESSION SETTINGS measures the table's chunks with table_compressor().
    cassandra_class: ClassVar[str] = ""

    @property
    def label(self) -> str:
        """Short user-facing name: '<codec>' (primary) or '<codec>/<container>'."""
        return self.codec if self.primary else f"{self.codec}/{self.container}"

    def __repr__(self) -> str:
        return f"<Container {self.label} ({self.grade})>"

    def early(self, data: bytes) -> bool:
        """Whether auto-detection tries this format early on `data` (with early_priority)."""
        return False

    def matches(self, data: bytes) -> bool:
        """Cheap structural check (magic, header sanity). Must never raise."""
        return bool(self.magic) and data.startswith(self.magic)

    def ruled_out(self, data: bytes) -> bool:
        """Whether trial() certainly returns None on `data` (at any cap), told from its header
        without decoding: lets registry.decode_known pass over this signature-less format on the
        way to a later one, and detection skip its trial. False when unsure; True only where
        trial() would refuse the value by the same test. Reads nothing but the first
        RULED_OUT_HEADER bytes and the length (the registry keeps the answer by those). Must never
        raise."""
        return False

    def decode(self, data: bytes, cap: int) -> Decoded:
        """Decompress at most `cap` bytes of output. Raises DecodeError (never anything else)."""
        raise NotImplementedError

    def trial(self, data: bytes, cap: int) -> Decoded | None:
        """Auto-detection attempt: the decode, or None when the value is not this format.

        Signature-less formats override this with stricter plausibility checks and no exception
        on the common miss; Undecodable still propagates (the value *is* this format).
        """
        try:
            return self.decode(data, cap)
        except Undecodable:
            raise
        except DecodeError:
            return None

    def declared_size(self, data: bytes) -> int | None:
        """The decompressed size the value's headers declare, when they declare one that its
        structure makes plausible (one frame, ending exactly at the end of `data`, blocks that can
        produce that much); None otherwise. Reads headers only: nothing is decompressed or checked
        against a checksum, so it suits size statistics, not display. Must never raise."""
        return None

    def peek(self, data: bytes, n: int) -> bytes | None:
        """The first `n` decompressed bytes (or fewer), decoding no more than it must; None when
        that fails. Lets a caller that trusts declared_size() still see what is inside."""
        return None

    #: The container a bare `encode('<codec>', ...)` writes: its most common producer's.
    writes_bare: ClassVar[bool] = False
    #: The producer whose bytes encode() writes, for the docs and the refusal lines; "" when none.
    reference: ClassVar[str] = ""
    #: Why encode() does not write this container (when `reference` is "").
    unwritable: ClassVar[str] = "no writer for it here"
    #: The levels encode() accepts (`<codec>:N`), inclusive; None: the container has none.
    level_range: ClassVar[tuple[int, int] | None] = None

    def encode(self, data: bytes, level: int | None = None) -> bytes:
        """`data` written as the reference producer writes it (at `level`, or its default).
        Unwritable when it is not written here, or the level is out of range. Imports the library."""
        if not self.reference:
            raise Unwritable(f"{self.label}: {self.unwritable}")
        if level is not None:
            if self.level_range is None:
                raise Unwritable(f"{self.label} has no levels")
            low, high = self.level_range
            if not low <= level <= high:
                raise Unwritable(f"{self.label} levels are {low} to {high}")
        return self.write(data, level)

    def write(self, data: bytes, level: int | None) -> bytes:
        """encode() once the level is checked: the format module's writer."""
        raise Unwritable(f"{self.label}: {self.unwritable}")

    def compressors(self) -> list[Compressor]:
        """How producers write this container (each level or mode that is worth measuring); [] when
        none is written here. Imports the library: ImportError when it is not installed."""
        return []

    def table_compressor(self, options: dict[str, str]) -> Callable[[bytes], bytes]:
        """How `cassandra_class` compresses a chunk, given the table's compression options (its
        level, say). Imports the library: ImportError when it is not installed."""
        raise NotImplementedError

    def train_dictionary(
        self, samples: list[bytes], size: int, level: int
    ) -> tuple[Callable[[bytes], bytes], Callable[[bytes], bytes]]:
        """(compress, decompress) with a dictionary of `size` bytes trained on `samples`.
        ValueError when training fails; ImportError without the library."""
        raise ValueError("no dictionaries in this format")

    def verify(self, data: bytes, decoded: Decoded | None, cap: int, error: str | None) -> list[Check] | None:
        """The checksums the container carries, each stored value next to the one computed here
        (INSPECT; codecs.checks), for a value that decoded (`decoded`) or did not (`error`); None
        when the format carries none. May raise on a value it cannot walk (the caller says so)."""
        return None

    def headers(self, data: bytes) -> dict[str, object]:
        """Header fields for INSPECT (may be slow; never decompresses more than it must).

        Raises DecodeError when the header cannot be parsed.
        """
        return {"format": self.label}
