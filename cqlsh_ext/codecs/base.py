"""Shared types of the codec layer: what a format is, what a decode returns, how output is capped.

Every codec module (codecs/<family>.py or the package codecs/<family>/) declares its `-d` names
(`DECLARES`, read without importing it: common.declarations) and its `Container` instances (`FORMATS`),
each carrying its own detection priorities and naming the capabilities it has besides detection and
decoding (codecs.capabilities, loaded with the codec modules); the registry orders them for
auto-detection and maps `-d CODEC` names to them. Nothing here imports a codec library or a codec
module, so importing this costs nothing at shell start-up.
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


#: Decoded.unverified of a frame read with a dictionary that carries no checksum: any dictionary of
#: the right size reads such a frame into something, so output made with another dictionary than
#: the producer's (a dcz header naming one, the body made with another) cannot be told from the
#: producer's payload.
UNVERIFIED_DICTIONARY = "read with a dictionary, and no checksum says it is the producer's"


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


class Decoded:
    """The output of one decoding layer. A plain class with the repr and equality a slotted
    dataclass would give: one Decoded per displayed cell (this __init__ is ~20 % cheaper than
    dataclass's default_factory handling), and no dataclass processing at start-up."""

    __slots__ = ("data", "declared_size", "headers", "truncated", "unverified")
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
        #: Why the output cannot be vouched for although it decoded (UNVERIFIED_DICTIONARY: read
        #: with a dictionary, and no checksum to say it was the producer's); None: nothing to say.
        #: payload.confidence makes such a reading at most "likely".
        self.unverified: str | None = None

    def _fields(self) -> tuple[object, ...]:
        return (self.data, self.truncated, self.declared_size, self.headers, self.unverified)

    def __repr__(self) -> str:
        return (f"Decoded(data={self.data!r}, truncated={self.truncated!r}, "
                f"declared_size={self.declared_size!r}, headers={self.headers!r}, "
                f"unverified={self.unverified!r})")

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        assert isinstance(other, Decoded)
        return self._fields() == other._fields()


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
    """One container format of one codec family (a codec module declares them): what detection and
    decoding need. What else a container does, each feature asks of it by a capability
    (codecs.capabilities: INSPECT's headers and checksums, STATS' header sizing, ADVISE's
    compressors, SETTINGS' table compressor, encode()'s writer, the worker process)."""

    #: Codec family, the name a user passes to -d (one of CODEC_NAMES).
    codec: ClassVar[str]
    #: Container within the family, shown to users: 'raw', 'framed', 'xerial', 'hadoop', 'frame', ...
    container: ClassVar[str]
    grade: ClassVar[Grade]
    #: Leading signature bytes (grade A/B), or b"" when the format has none.
    magic: ClassVar[bytes] = b""
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
    #: How sure a value this container decoded is ("confident", "likely", "guessed") and why, when
    #: its grade does not say it (payload.confidence.container_confidence); None: by its grade.
    confidence: ClassVar[tuple[str, str] | None] = None

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
