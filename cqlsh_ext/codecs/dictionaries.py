"""The dictionary store: the zstd dictionaries and raw dictionaries values may need.

A value names its dictionary and the store answers: a zstd frame by the dictionary ID in its header,
a zlib stream by its DICTID (the Adler-32 of the preset dictionary), an RFC 9842 value (`dcz`,
`dcb`) by the SHA-256 of its dictionary. A zstd frame made with a raw-content dictionary names
none: the zstd codec tries the store's raw dictionaries on it (raw()). Dictionaries come from files
named by `--dictionary FILE`, `CQLSH_EXT_DICTIONARIES` and cqlshrc's `dictionaries =` (the settings
read them into the store when they are loaded: cqlsh_ext.settings.load), or from ADVISE's SAVE
DICTIONARY. A file is one dictionary:

- a zstd dictionary (`zstd --train`, python-zstandard `train_dictionary(...).as_bytes()`, zstd-jni
  `ZstdDictTrainer`): it starts with the magic 37 a4 30 ec and carries its ID;
- anything else is a raw dictionary, its bytes as they are: a zlib preset dictionary
  (`zlib.compressobj(zdict=...)`, `Deflater.setDictionary`), found by their Adler-32, and a zstd
  raw-content dictionary (python-zstandard `ZstdCompressionDict(data,
  dict_type=DICT_TYPE_RAWCONTENT)`, an RFC 9842 `dcz` or `dcb` dictionary), found by their SHA-256
  or tried on a frame that names no dictionary.

The store is one per process, filled before anything is read: the scanning workers inherit it
through fork. Loading is bounded (MAX_BYTES a file, MAX_COUNT files, MAX_TOTAL bytes) and a file
that cannot be a dictionary is one DictionaryError line naming it.
"""

from __future__ import annotations

import hashlib
import os
import zlib
from dataclasses import dataclass, field

#: A zstd dictionary's first bytes (ZSTD_MAGIC_DICTIONARY, little-endian); its ID follows.
ZSTD_DICT_MAGIC = b"\x37\xa4\x30\xec"
#: The largest dictionary file read (zstd's own trainer makes 110 KiB by default; zlib reads 32 KiB).
MAX_BYTES = 4 << 20
#: The most dictionaries a store holds, and their bytes together.
MAX_COUNT = 256
MAX_TOTAL = 64 << 20
#: The environment variable naming dictionary files, separated as in PATH (os.pathsep).
ENVIRONMENT = "CQLSH_EXT_DICTIONARIES"

ZSTD = "zstd"
ZLIB = "zlib"
#: Any dictionary, by its SHA-256 read as a big-endian integer (an RFC 9842 value names it so).
SHA256 = "sha256"


class DictionaryError(ValueError):
    """A dictionary that cannot be loaded; str() is one line naming the file."""


@dataclass(frozen=True)
class Dictionary:
    """One dictionary: its kind (ZSTD: a zstd dictionary, its ID in it; ZLIB: raw bytes, a zlib
    preset dictionary by its Adler-32 and a zstd raw-content one), its ID, its bytes, where it came
    from, and its SHA-256 (how RFC 9842 values name it)."""

    kind: str
    id: int
    data: bytes
    source: str
    sha256: bytes = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "sha256", hashlib.sha256(self.data).digest())

    @property
    def raw(self) -> bool:
        """Raw bytes (no zstd dictionary format): a zstd raw-content dictionary as well."""
        return self.kind == ZLIB

    def describe_by_hash(self) -> str:
        """How a value that names it by its SHA-256 names it: 'dictionary SHA-256 ab12... (from ...)'."""
        return f"dictionary SHA-256 {self.sha256.hex()} ({len(self.data)} bytes, from {self.source})"

    def describe(self) -> str:
        """How INSPECT and reasons name it: 'zstd dictionary ID 123 (from /path/file)'."""
        ident = f"ID {self.id}" if self.kind == ZSTD else f"DICTID 0x{self.id:08x}"
        what = "zstd dictionary" if self.kind == ZSTD else "zlib preset dictionary"
        return f"{what} {ident} ({len(self.data)} bytes, from {self.source})"


def from_bytes(data: bytes, source: str) -> Dictionary:
    """The dictionary these bytes are: a zstd dictionary by its magic, else a zlib preset one."""
    if not data:
        raise DictionaryError(f"{source}: empty file, not a dictionary")
    if len(data) > MAX_BYTES:
        raise DictionaryError(f"{source}: {len(data)} bytes, more than a dictionary may hold "
                              f"({MAX_BYTES} at most)")
    if data.startswith(ZSTD_DICT_MAGIC):
        if len(data) < 8:
            raise DictionaryError(f"{source}: a zstd dictionary cut short (no dictionary ID)")
        dict_id = int.from_bytes(data[4:8], "little")
        if dict_id == 0:
            raise DictionaryError(f"{source}: a zstd dictionary with ID 0 (frames cannot name it)")
        _check_zstd(data, source)
        return Dictionary(ZSTD, dict_id, bytes(data), source)
    return Dictionary(ZLIB, zlib.adler32(data), bytes(data), source)


def _check_zstd(data: bytes, source: str) -> None:
    """libzstd loads it (its entropy tables are read now, not at the first value)."""
    try:
        import zstandard
    except ImportError:
        raise DictionaryError(f"{source}: a zstd dictionary, but zstandard is not installed") from None
    try:
        zstandard.ZstdDecompressor(dict_data=zstandard.ZstdCompressionDict(
            data, dict_type=zstandard.DICT_TYPE_FULLDICT)).decompressobj()
        zstandard.ZstdCompressor(dict_data=zstandard.ZstdCompressionDict(
            data, dict_type=zstandard.DICT_TYPE_FULLDICT))
    except zstandard.ZstdError as err:
        raise DictionaryError(f"{source}: not a valid zstd dictionary ({err})") from None


def read_file(path: str) -> Dictionary:
    """The dictionary in this file (at most MAX_BYTES are read)."""
    try:
        with open(os.path.expanduser(path), "rb") as f:
            data = f.read(MAX_BYTES + 1)
    except OSError as err:
        raise DictionaryError(f"{path}: cannot be read ({err.strerror or err})") from None
    return from_bytes(data, path)


class Store:
    """Dictionaries by kind and ID."""

    def __init__(self) -> None:
        self._by_id: dict[tuple[str, int], Dictionary] = {}
        self._by_sha256: dict[bytes, Dictionary] = {}
        self._bytes = 0

    def add(self, entry: Dictionary) -> Dictionary:
        """Keep `entry`; the same bytes again change nothing, other bytes under its ID are refused."""
        key = (entry.kind, entry.id)
        known = self._by_id.get(key)
        if known is not None:
            if known.data != entry.data:
                raise DictionaryError(f"{entry.source}: {entry.kind} dictionary ID {entry.id} is already "
                                      f"loaded from {known.source} with other bytes")
            return known
        if len(self._by_id) >= MAX_COUNT:
            raise DictionaryError(f"{entry.source}: more than {MAX_COUNT} dictionaries")
        if self._bytes + len(entry.data) > MAX_TOTAL:
            raise DictionaryError(f"{entry.source}: the dictionaries would take more than "
                                  f"{MAX_TOTAL >> 20} MiB")
        self._by_id[key] = entry
        self._by_sha256.setdefault(entry.sha256, entry)
        self._bytes += len(entry.data)
        return entry

    def find(self, kind: str, dict_id: int) -> Dictionary | None:
        if kind == SHA256:
            return self._by_sha256.get(dict_id.to_bytes(32, "big")) if 0 <= dict_id < 1 << 256 else None
        return self._by_id.get((kind, dict_id))

    def by_sha256(self, digest: bytes) -> Dictionary | None:
        return self._by_sha256.get(digest)

    def raw(self) -> list[Dictionary]:
        """The raw dictionaries, in the order they were loaded."""
        return [entry for entry in self._by_id.values() if entry.raw]

    def all(self) -> list[Dictionary]:
        return list(self._by_id.values())


#: The process's store (see the module docstring).
STORE = Store()
#: Bumped at every change, so that codecs drop contexts built for dictionaries no longer there.
_generation = [0]


def generation() -> int:
    return _generation[0]


def load(paths: list[str] | tuple[str, ...]) -> list[Dictionary]:
    """Replace the process's store with the dictionaries in these files (one DictionaryError line
    for the first that cannot be loaded, the store then left as it was)."""
    store = Store()
    for path in paths:
        store.add(read_file(path))
    install(store)
    return store.all()


def install(store: Store) -> None:
    global STORE
    STORE = store
    _generation[0] += 1


def add(entry: Dictionary) -> Dictionary:
    """Add one dictionary to the process's store (ADVISE's saved one, a test's)."""
    kept = STORE.add(entry)
    _generation[0] += 1
    return kept


def ensure(entries: list[Dictionary]) -> None:
    """The process's store holds these too: a Spark executor's, given the driver's with each task
    (an executor is another process, which read no settings)."""
    missing = [entry for entry in entries if STORE.find(entry.kind, entry.id) is None]
    for entry in missing:
        STORE.add(entry)
    if missing:
        _generation[0] += 1


def find(kind: str, dict_id: int) -> Dictionary | None:
    """The process's dictionary of this kind (ZSTD, ZLIB or SHA256) and ID, if loaded."""
    return STORE.find(kind, dict_id)


def zstd(dict_id: int) -> Dictionary | None:
    """The zstd dictionary a frame names by its ID, if loaded."""
    return STORE.find(ZSTD, dict_id)


def by_sha256(digest: bytes) -> Dictionary | None:
    """The process's dictionary whose bytes hash to `digest` (SHA-256: RFC 9842's name), if loaded."""
    return STORE.by_sha256(digest)


def raw() -> list[Dictionary]:
    """The process's raw dictionaries (zstd raw-content ones), in load order."""
    return STORE.raw()


def preset(dictid: int) -> Dictionary | None:
    """The zlib preset dictionary a stream names by its DICTID (Adler-32), if loaded."""
    return STORE.find(ZLIB, dictid)


def spelled(label: str, dict_id: int) -> str:
    """A dictionary a chain names, as its step names it: a dcz value's by its SHA-256's hex digits,
    any other by its ID."""
    return f"SHA-256 {dict_id:064x}" if label == "dcz" else str(dict_id)


def environment_paths() -> list[str]:
    """The files CQLSH_EXT_DICTIONARIES names (empty items skipped)."""
    return [p for p in os.environ.get(ENVIRONMENT, "").split(os.pathsep) if p.strip()]
