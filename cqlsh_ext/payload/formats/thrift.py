"""Apache Thrift structs, binary and compact protocols (Apache's `thrift` libraries' TSerializer,
thriftpy2's serialize): decoded without the IDL into field ids and typed values, as protobuf is
without a descriptor.

A struct is a sequence of fields, each a type and a field id then the value, ended by a STOP byte
(0). Binary protocol: `type (1 byte) | id (i16 big-endian) | value`; integers big-endian, strings
`i32 length | bytes`, lists and sets `element type | i32 count`, maps `key type | value type | i32
count`. Compact protocol: the field id as a delta packed with the type in one byte (a zig-zag
varint id after the type when the delta passes 15), integers as zig-zag varints, doubles
little-endian, strings `varint length | bytes`, list and set sizes packed with their element type,
maps `varint count | key type << 4 | value type`.

A bare struct has no magic: auto-detection is a trial parse that must consume the whole value to
its final STOP, with no field id twice in a struct and only positive ids, and that holds text (a
string field that reads as text) somewhere; values of the other record formats are looked for
first. Declared counts and lengths are checked against the bytes left before anything is read,
and every value, level and field is charged to the value's budget (payload.budget).

With the IDL (`thrift:shop.Order@orders.thrift`, parsed by thriftpy2's IDL loader: the IDL only,
never the bytes), fields are shown by name, enums by their value's name; field ids the struct does
not declare (or with another type on the wire) are listed as "$unknown fields" rather than
dropped, since they mean the struct is probably not the writer's.
"""

from __future__ import annotations

import functools
import os
import struct
import uuid
from typing import Any

from cqlsh_ext.payload import budget
from cqlsh_ext.payload.formats import PayloadFormat
from cqlsh_ext.payload.formats.tree import OverBudget, PayloadError, Tagged, read_varint

#: Read without importing this module (common.declarations): its place in detection and
#: dispatch (lower first; auto-detection tries it only when FORMAT.auto), its place in name lists
#: and help, and what an argument after a colon names (payload.spec).
DECLARES = {
    "detection": 65,
    "listed": 75,
    "title": "Thrift",
    "help": "binary or compact protocol, field ids without the IDL",
    "argument": "thrift:Type@FILE.thrift names the struct and its IDL file",
    "file_after": "@",
    "argument_help": "thrift:Type@FILE.thrift shows fields by name, from the struct's IDL file"
    " (parsed by thriftpy2).",
}

BINARY = "binary"
COMPACT = "compact"

# The binary protocol's type codes (TType); the compact protocol's are mapped onto them.
_BOOL, _BYTE, _DOUBLE, _I16, _I32, _I64, _STRING, _STRUCT, _MAP, _SET, _LIST, _UUID = (
    2, 3, 4, 6, 8, 10, 11, 12, 13, 14, 15, 16)
_BINARY_TYPES = frozenset((_BOOL, _BYTE, _DOUBLE, _I16, _I32, _I64, _STRING, _STRUCT, _MAP, _SET, _LIST,
                           _UUID))
#: Compact type code -> binary type code (1 and 2 are a bool field's true and false).
_COMPACT_TYPES = {1: _BOOL, 2: _BOOL, 3: _BYTE, 4: _I16, 5: _I32, 6: _I64, 7: _DOUBLE, 8: _STRING,
                  9: _LIST, 10: _SET, 11: _MAP, 12: _STRUCT, 13: _UUID}

#: Every first byte a struct can start with: a binary field's type, a compact field header (a delta
#: of 1-15 with a type, or the long form: a type alone).
_LEADS = frozenset(_BINARY_TYPES | set(_COMPACT_TYPES)
                   | {delta << 4 | kind for delta in range(1, 16) for kind in _COMPACT_TYPES})
#: Field ids are 16-bit (i16) and positive in every struct a writer makes.
_MAX_FIELD_ID = 32767
#: Shorter values are never taken for Thrift without being named (as MessagePack's MIN_LENGTH).
MIN_LENGTH = 8


def _maybe(data: bytes) -> bool:
    """A struct of at least MIN_LENGTH bytes: a field's first byte, the STOP byte last."""
    return len(data) >= MIN_LENGTH and data[-1] == 0 and data[0] in _LEADS


# ---------------------------------------------------------------- the wire, read within the budget


class _Struct:
    """A struct as read: its fields (id, binary type code, value) in wire order."""

    __slots__ = ("fields",)

    def __init__(self, fields: list[tuple[int, int, Any]]) -> None:
        self.fields = fields


class _Seq:
    """A list or a set as read: its element type code and items."""

    __slots__ = ("kind", "element", "items")

    def __init__(self, kind: int, element: int, items: list[Any]) -> None:
        self.kind = kind
        self.element = element
        self.items = items


class _Map:
    """A map as read: key and value type codes and its pairs in wire order."""

    __slots__ = ("key", "value", "pairs")

    def __init__(self, key: int, value: int, pairs: list[tuple[Any, Any]]) -> None:
        self.key = key
        self.value = value
        self.pairs = pairs


class _WireReader:
    """One protocol's reading of a struct. Declared counts and lengths are checked against the
    bytes left before anything is read (every item takes at least one byte); each value, field
    and map key is a node of the value's budget, each level a level of its depth."""

    __slots__ = ("data", "pos", "meter", "depth_limit")

    def __init__(self, data: bytes, meter: budget.Meter) -> None:
        self.data = data
        self.pos = 0
        self.meter = meter
        self.depth_limit = meter.budget.depth

    def need(self, n: int) -> int:
        start = self.pos
        if n < 0 or start + n > len(self.data):
            raise PayloadError(f"thrift: {'a negative size' if n < 0 else 'truncated'} at byte {start}")
        self.pos = start + n
        return start

    def count(self, n: int, per_item: int) -> int:
        if n < 0:
            raise PayloadError(f"thrift: a negative count at byte {self.pos}")
        if n * per_item > len(self.data) - self.pos:
            raise PayloadError(f"thrift: {n} items declared, more than the {len(self.data) - self.pos} "
                               f"bytes left can hold")
        return n

    def value(self, kind: int, depth: int) -> Any:
        self.meter.node()
        if kind == _STRUCT:
            return self.struct(depth + 1)
        if kind in (_LIST, _SET):
            return self.sequence(kind, depth + 1)
        if kind == _MAP:
            return self.map(depth + 1)
        return self.scalar(kind)

    def enter(self, depth: int) -> None:
        if depth > self.depth_limit:
            raise PayloadError(f"thrift: {self.meter.budget.depth_reason}")

    def scalar(self, kind: int) -> Any:
        raise NotImplementedError

    def struct(self, depth: int) -> _Struct:
        raise NotImplementedError

    def sequence(self, kind: int, depth: int) -> _Seq:
        raise NotImplementedError

    def map(self, depth: int) -> _Map:
        raise NotImplementedError

    def fields_of(self, depth: int, header: Any) -> _Struct:
        """A struct's fields, each read by `header` (None at STOP, else (id, type code, bool or
        None)); a field id twice is no struct any writer makes."""
        self.enter(depth)
        fields: list[tuple[int, int, Any]] = []
        seen: set[int] = set()
        while True:
            found = header()
            if found is None:
                return _Struct(fields)
            fid, kind, inline = found
            if not 0 < fid <= _MAX_FIELD_ID:
                raise PayloadError(f"thrift: field id {fid} (ids are positive 16-bit numbers)")
            if fid in seen:
                raise PayloadError(f"thrift: field id {fid} twice in one struct")
            seen.add(fid)
            if inline is not None:  # a compact bool field: its value is in its header
                self.meter.node()
                fields.append((fid, kind, inline))
            else:
                fields.append((fid, kind, self.value(kind, depth)))


class _BinaryReader(_WireReader):
    __slots__ = ()

    def scalar(self, kind: int) -> Any:
        data = self.data
        if kind == _BOOL:
            b = data[self.need(1)]
            if b > 1:
                raise PayloadError(f"thrift: bool byte {b}")
            return b == 1
        if kind == _BYTE:
            return struct.unpack_from(">b", data, self.need(1))[0]
        if kind == _I16:
            return struct.unpack_from(">h", data, self.need(2))[0]
        if kind == _I32:
            return struct.unpack_from(">i", data, self.need(4))[0]
        if kind == _I64:
            return struct.unpack_from(">q", data, self.need(8))[0]
        if kind == _DOUBLE:
            return struct.unpack_from(">d", data, self.need(8))[0]
        if kind == _STRING:
            size = struct.unpack_from(">i", data, self.need(4))[0]
            start = self.need(size)
            return data[start:start + size]
        if kind == _UUID:
            start = self.need(16)
            return uuid.UUID(bytes=data[start:start + 16])
        raise PayloadError(f"thrift: type {kind} at byte {self.pos}")

    def element_type(self) -> int:
        kind = self.data[self.need(1)]
        if kind not in _BINARY_TYPES:
            raise PayloadError(f"thrift: type {kind} at byte {self.pos - 1}")
        return kind

    def struct(self, depth: int) -> _Struct:
        def header() -> tuple[int, int, None] | None:
            kind = self.data[self.need(1)]
            if kind == 0:
                return None
            if kind not in _BINARY_TYPES:
                raise PayloadError(f"thrift: type {kind} at byte {self.pos - 1}")
            return struct.unpack_from(">h", self.data, self.need(2))[0], kind, None

        return self.fields_of(depth, header)

    def sequence(self, kind: int, depth: int) -> _Seq:
        self.enter(depth)
        element = self.element_type()
        n = self.count(struct.unpack_from(">i", self.data, self.need(4))[0], 1)
        return _Seq(kind, element, [self.value(element, depth) for _ in range(n)])

    def map(self, depth: int) -> _Map:
        self.enter(depth)
        key, value = self.element_type(), self.element_type()
        n = self.count(struct.unpack_from(">i", self.data, self.need(4))[0], 2)
        return _Map(key, value, [(self.value(key, depth), self.value(value, depth)) for _ in range(n)])


class _CompactReader(_WireReader):
    __slots__ = ()

    def varint(self) -> int:
        value, self.pos = read_varint(self.data, self.pos, "thrift")
        return value

    def zigzag(self, bits: int) -> int:
        raw = self.varint()
        if raw >> bits:
            raise PayloadError(f"thrift: a number wider than {bits} bits at byte {self.pos}")
        return (raw >> 1) ^ -(raw & 1)

    def scalar(self, kind: int) -> Any:
        data = self.data
        if kind == _BOOL:  # inside a list, set or map: one byte, 1 true, 2 (or 0) false
            b = data[self.need(1)]
            if b > 2:
                raise PayloadError(f"thrift: bool byte {b}")
            return b == 1
        if kind == _BYTE:
            return struct.unpack_from(">b", data, self.need(1))[0]
        if kind == _I16:
            return self.zigzag(16)
        if kind == _I32:
            return self.zigzag(32)
        if kind == _I64:
            return self.zigzag(64)
        if kind == _DOUBLE:
            return struct.unpack_from("<d", data, self.need(8))[0]
        if kind == _STRING:
            size = self.varint()
            start = self.need(size)
            return data[start:start + size]
        if kind == _UUID:
            start = self.need(16)
            return uuid.UUID(bytes=data[start:start + 16])
        raise PayloadError(f"thrift: type {kind} at byte {self.pos}")

    def element_type(self, code: int) -> int:
        kind = _COMPACT_TYPES.get(code)
        if kind is None:
            raise PayloadError(f"thrift: compact type {code} at byte {self.pos - 1}")
        return kind

    def struct(self, depth: int) -> _Struct:
        last = [0]

        def header() -> tuple[int, int, bool | None] | None:
            byte = self.data[self.need(1)]
            if byte == 0:
                return None
            delta, code = byte >> 4, byte & 0x0F
            kind = self.element_type(code)
            fid = last[0] + delta if delta else self.zigzag(16)
            last[0] = fid
            return fid, kind, (code == 1) if kind == _BOOL else None

        return self.fields_of(depth, header)

    def sequence(self, kind: int, depth: int) -> _Seq:
        self.enter(depth)
        byte = self.data[self.need(1)]
        element = self.element_type(byte & 0x0F)
        size = byte >> 4
        n = self.count(self.varint() if size == 15 else size, 1)
        return _Seq(kind, element, [self.value(element, depth) for _ in range(n)])

    def map(self, depth: int) -> _Map:
        self.enter(depth)
        n = self.varint()
        if n == 0:
            return _Map(0, 0, [])
        self.count(n, 2)
        types = self.data[self.need(1)]
        key, value = self.element_type(types >> 4), self.element_type(types & 0x0F)
        return _Map(key, value, [(self.value(key, depth), self.value(value, depth)) for _ in range(n)])


def _read(data: bytes, protocol: str) -> _Struct:
    """The struct `data` holds, to its last byte, in `protocol`; PayloadError, OverBudget."""
    reader = (_BinaryReader if protocol == BINARY else _CompactReader)(data, budget.current().meter())
    try:
        top = reader.struct(0)
    except budget.BudgetExceeded as err:
        raise OverBudget(f"thrift: {err}") from None
    except (IndexError, struct.error):
        raise PayloadError("thrift: truncated") from None
    if reader.pos != len(data):
        raise PayloadError(f"thrift: {len(data) - reader.pos} bytes after the struct's end")
    return top


def _protocols(data: bytes) -> tuple[str, ...]:
    """The protocols a struct starting so can be in, the likelier first. A compact field header
    holds a delta of 1-15 in its high nibble (0x11 and up); 0x10 is only a binary UUID field. A
    byte below 0x10 is a binary field's type, or a compact long-form header (the type alone, then
    the id as a zig-zag varint, which is never 0): a second byte of 0 is a binary field id below
    256, anything else may be either."""
    if len(data) < 2 or data[0] == 0x10 or (data[0] < 0x10 and data[1] == 0):
        return (BINARY,)
    if data[0] > 0x10:
        return (COMPACT,)
    return (COMPACT, BINARY)


def _parse(data: bytes) -> tuple[str, _Struct]:
    """(protocol, struct), in the first protocol of _protocols that reads all of `data`; the
    first one's reason when none does."""
    first_error: PayloadError | None = None
    for name in _protocols(data):
        try:
            return name, _read(data, name)
        except OverBudget:
            raise
        except PayloadError as err:
            first_error = first_error or err
    assert first_error is not None
    raise first_error


def protocol(data: bytes) -> str:
    """The protocol of a value that reads as a struct (the label's: `thrift/compact`)."""
    found = _protocols(data)
    if len(found) == 1:
        return found[0]
    try:
        return _parse(data)[0]
    except PayloadError:
        return found[0]


# ---------------------------------------------------------------- the tree, without the IDL


def _text(raw: bytes) -> str | None:
    """A string's text: UTF-8 without control characters other than tab, CR and LF."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return None
    return text if text.replace("\t", "").replace("\n", "").replace("\r", "").isprintable() else None


def _plain(node: Any) -> Any:
    """A value without the IDL: fields by id, strings as text when they read as text, sets as
    lists, maps with scalar keys as maps (others as their pairs)."""
    if isinstance(node, _Struct):
        return {str(fid): _plain(value) for fid, _kind, value in node.fields}
    if isinstance(node, _Seq):
        return [_plain(item) for item in node.items]
    if isinstance(node, _Map):
        return _map_tree([(_plain(k), _plain(v)) for k, v in node.pairs])
    if isinstance(node, bytes):
        text = _text(node)
        return node if text is None else text
    if isinstance(node, uuid.UUID):
        return str(node)
    return node


def _map_tree(pairs: list[tuple[Any, Any]]) -> Any:
    if all(isinstance(k, (str, int, float, bool, bytes)) for k, _ in pairs):
        return dict(pairs)
    return Tagged("map", [[k, v] for k, v in pairs])  # struct or list keys: no JSON key spells them


def _label(data: bytes) -> str:
    return f"thrift/{protocol(data)}"


def decode(data: bytes) -> Any:
    """The struct by field ids; PayloadError with the first protocol's reason."""
    _protocol, top = _parse(data)
    return _plain(top)


def _has_text(node: _Struct) -> bool:
    stack: list[Any] = [node]
    while stack:
        item = stack.pop()
        if isinstance(item, _Struct):
            stack.extend(value for _fid, _kind, value in item.fields)
        elif isinstance(item, _Seq):
            stack.extend(item.items)
        elif isinstance(item, _Map):
            stack.extend(value for pair in item.pairs for value in pair)
        elif isinstance(item, bytes) and item and _text(item):
            return True
    return False


def detect(data: bytes) -> Any:
    """decode()'s tree of a value that looks like a struct a writer made: some field, and text
    in a string somewhere (random bytes that parse give a field or two of numbers)."""
    _protocol, top = _parse(data)
    if not top.fields or not _has_text(top):
        raise PayloadError("thrift: parses, but does not look like a struct")
    return _plain(top)


# ---------------------------------------------------------------- with the IDL


@functools.lru_cache(maxsize=32)
def _idl(path: str, mtime: float) -> Any:
    """thriftpy2's module of the IDL file (its includes resolved beside it)."""
    import thriftpy2
    from thriftpy2.parser.exc import ThriftGrammarError, ThriftLexerError, ThriftParserError

    try:
        return thriftpy2.load(path)
    except (ThriftParserError, ThriftLexerError, ThriftGrammarError, OSError, UnicodeDecodeError) as err:
        first = str(err).splitlines()[0][:160] if str(err) else type(err).__name__
        raise PayloadError(f"thrift: IDL {os.path.basename(path)}: {first}") from None


def _struct_names(module: Any, prefix: str = "", depth: int = 0) -> list[str]:
    names: list[str] = []
    for name, item in vars(module).items():
        if isinstance(item, type) and isinstance(getattr(item, "thrift_spec", None), dict):
            names.append(prefix + name)
        elif depth < 2 and getattr(item, "__thrift_file__", None) and item is not module:
            names.extend(_struct_names(item, f"{prefix}{name}.", depth + 1))  # an included IDL
    return names


def _struct_class(type_name: str, path: str) -> Any:
    try:
        mtime = os.stat(path).st_mtime
    except OSError as err:
        raise PayloadError(f"thrift: IDL {path}: {err.strerror or err}") from None
    module = _idl(path, mtime)
    found: Any = module
    for part in type_name.split("."):
        found = getattr(found, part, None)
    if not (isinstance(found, type) and isinstance(getattr(found, "thrift_spec", None), dict)):
        known = sorted(_struct_names(module))
        hint = ", ".join(known[:5]) + (", ..." if len(known) > 5 else "")
        raise PayloadError(f"thrift: no struct {type_name!r} in {os.path.basename(path)}"
                           f"{' (it has ' + hint + ')' if hint else ''}")
    return found


#: thriftpy2's type codes that are no wire type of their own: its `binary` (a string on the wire,
#: shown as bytes) and its UTF-8 string.
_THRIFTPY_BINARY = 18
_THRIFTPY_UTF8 = 16


def _wire(kind: int) -> int:
    return _STRING if kind in (_THRIFTPY_BINARY, _THRIFTPY_UTF8) else kind


def _split(spec: Any) -> tuple[int, Any]:
    """A container item's spec in thriftpy2's thrift_spec: a type code, or (type code, its spec)."""
    return (spec[0], spec[1]) if isinstance(spec, tuple) else (spec, None)


def _named(node: Any, kind: int, spec: Any, depth: int) -> Any:
    """`node` read as the IDL declares it (`kind`: thriftpy2's type code, `spec`: its detail)."""
    if isinstance(node, _Struct) and isinstance(spec, type):
        return _named_struct(node, spec, depth + 1)
    if isinstance(node, _Seq) and node.element == _wire(_split(spec)[0]):
        item_kind, item_spec = _split(spec)
        return [_named(item, item_kind, item_spec, depth + 1) for item in node.items]
    if isinstance(node, _Map) and isinstance(spec, tuple) and len(spec) == 2:
        (key_kind, key_spec), (value_kind, value_spec) = _split(spec[0]), _split(spec[1])
        if node.pairs and (node.key, node.value) != (_wire(key_kind), _wire(value_kind)):
            return _plain(node)
        return _map_tree([(_named(k, key_kind, key_spec, depth + 1),
                           _named(v, value_kind, value_spec, depth + 1)) for k, v in node.pairs])
    if kind == _I32 and isinstance(node, int) and spec is not None:  # an enum
        names = getattr(spec, "_VALUES_TO_NAMES", {})
        return names.get(node, node)
    if kind == _THRIFTPY_BINARY and isinstance(node, bytes):
        return node
    return _plain(node)


def _named_struct(node: _Struct, cls: Any, depth: int) -> dict[str, Any]:
    if depth > budget.current().depth:
        raise PayloadError(f"thrift: {budget.current().depth_reason}")
    declared: dict[int, tuple[Any, ...]] = cls.thrift_spec
    out: dict[str, Any] = {}
    unknown: list[int] = []
    for fid, kind, value in node.fields:
        spec = declared.get(fid)
        if spec is None or _wire(spec[0]) != kind:
            unknown.append(fid)
            continue
        detail = spec[2] if len(spec) == 4 else None
        out[spec[1]] = _named(value, spec[0], detail, depth)
    if unknown:
        out["$unknown fields"] = sorted(unknown)
    return out


def decode_with_idl(data: bytes, argument: str) -> Any:
    """`argument`: 'Type@path/to/file.thrift' (an included IDL's struct as 'included.Type')."""
    type_name, _, path = argument.partition("@")
    cls = _struct_class(type_name, path)
    _protocol, top = _parse(data)
    return _named_struct(top, cls, 0)


FORMAT = PayloadFormat("thrift", True, _maybe, decode, labeller=_label, detector=detect,
                       decode_with=decode_with_idl,
                       leads=bytes(sorted(_LEADS)),
                       unwritable="not written here: a Thrift struct's bytes come from its IDL's "
                       "generated code",
                       confidence="likely",
                       confidence_why="a whole struct to its STOP byte with text in it, no signature")


__all__ = ["BINARY", "COMPACT", "FORMAT", "MIN_LENGTH", "decode", "decode_with_idl", "detect", "protocol"]
