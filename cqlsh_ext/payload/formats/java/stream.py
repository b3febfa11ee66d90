"""The whole of a Java serialization stream as a display tree (payload.formats.tree), read by the
grammar of the Java Object Serialization Specification, never deserialized.

Strings, boxed numbers, dates, enums, arrays and the JDK collections become plain values; any
other class becomes `Tagged(class name, its fields)`. Nothing is loaded or executed: classes are
names, a custom `writeObject`'s data is shown as it was written (bytes and objects),
externalizable data that only its class can read is refused with a reason. Declared lengths are
checked against the bytes left before anything is allocated; depth, item and handle caps stop
hostile streams, and a back-reference to an object still being read (a cycle) is shown as a marker
rather than followed. Loaded on first use (its classes cost start-up time).
"""

from __future__ import annotations

import datetime
import struct
from dataclasses import dataclass, field
from typing import Any

from cqlsh_ext.payload import budget
from cqlsh_ext.payload.formats.java.first import (
    MAGIC,
    TC_ARRAY,
    TC_BLOCKDATA,
    TC_BLOCKDATALONG,
    TC_CLASSDESC,
    TC_ENUM,
    TC_LONGSTRING,
    TC_NULL,
    TC_OBJECT,
    TC_PROXYCLASSDESC,
    TC_REFERENCE,
    TC_STRING,
    JavaStreamError,
    decode_modified_utf8,
)
from cqlsh_ext.payload.formats.tree import Tagged, charged_text, decimal_text

TC_ENDBLOCKDATA, TC_RESET, TC_CLASS, TC_EXCEPTION = 0x78, 0x79, 0x76, 0x7B
SC_WRITE_METHOD, SC_SERIALIZABLE, SC_EXTERNALIZABLE, SC_BLOCK_DATA = 0x01, 0x02, 0x04, 0x08
BASE_HANDLE = 0x7E0000

#: Nesting of objects inside objects; deeper is refused (Java's own limit is the stack). The
#: same as the value budget's depth; the tree's values are counted against its nodes
#: (payload.budget), so a stream that shares one list many times over cannot make the display
#: walk it billions of times.
MAX_DEPTH = budget.MAX_DEPTH
_PRIMITIVES = {ord("B"): (">b", 1), ord("C"): (">H", 2), ord("D"): (">d", 8), ord("F"): (">f", 4),
               ord("I"): (">i", 4), ord("J"): (">q", 8), ord("S"): (">h", 2), ord("Z"): (">?", 1)}


@dataclass
class _ClassDesc:
    name: str
    flags: int = 0
    #: (type code, field name, class name of object fields)
    fields: list[tuple[int, str, str | None]] = field(default_factory=list)
    super: _ClassDesc | None = None
    enum: bool = False

    def hierarchy(self) -> list[_ClassDesc]:
        """Superclass first, as class data is written."""
        chain: list[_ClassDesc] = []
        desc: _ClassDesc | None = self
        while desc is not None and len(chain) < MAX_DEPTH:
            chain.append(desc)
            desc = desc.super
        return chain[::-1]


@dataclass
class _BlockData:
    data: bytes


@dataclass
class _Object:
    desc: _ClassDesc
    #: Per class of the hierarchy, superclass first: (desc, field values, annotation or None).
    data: list[tuple[_ClassDesc, dict[str, Any], list[Any] | None]] = field(default_factory=list)


@dataclass
class _Array:
    desc: _ClassDesc
    values: list[Any] | bytes = field(default_factory=list)


@dataclass
class _Enum:
    desc: _ClassDesc
    constant: str = ""


@dataclass
class _ClassRef:
    desc: _ClassDesc | None


_NULL = object()


class _StreamReader:
    def __init__(self, data: bytes, meter: budget.Meter) -> None:
        self.data, self.pos = data, 0
        self.handles: list[Any] = []
        self.depth = 0
        self.meter = meter

    # primitives
    def take(self, n: int) -> bytes:
        if n < 0 or self.pos + n > len(self.data):
            raise JavaStreamError("stream cut short")
        chunk = self.data[self.pos : self.pos + n]
        self.pos += n
        return chunk

    def unpack(self, fmt: str, size: int) -> Any:
        return struct.unpack(fmt, self.take(size))[0]

    def u8(self) -> int:
        return int(self.take(1)[0])

    def utf(self, long: bool = False) -> str:
        length = self.unpack(">q", 8) if long else self.unpack(">H", 2)
        try:
            return decode_modified_utf8(self.take(length))
        except UnicodeDecodeError:
            raise JavaStreamError("invalid modified UTF-8 in string") from None

    def new_handle(self, obj: Any) -> int:
        self.handles.append(obj)
        return len(self.handles) - 1

    # grammar
    def content(self) -> Any:
        tag = self.u8()
        if tag in (TC_BLOCKDATA, TC_BLOCKDATALONG):
            size = self.u8() if tag == TC_BLOCKDATA else self.unpack(">i", 4)
            return _BlockData(self.take(size))
        return self.object(tag)

    def object(self, tag: int) -> Any:
        if tag == TC_NULL:
            return _NULL
        if tag == TC_REFERENCE:
            handle = self.unpack(">i", 4) - BASE_HANDLE
            if not 0 <= handle < len(self.handles):
                raise JavaStreamError(f"back-reference to unknown handle {handle + BASE_HANDLE:#x}")
            return self.handles[handle]
        if tag in (TC_STRING, TC_LONGSTRING):
            text = self.utf(long=tag == TC_LONGSTRING)
            self.new_handle(text)
            return text
        if tag == TC_RESET:
            self.handles.clear()
            return self.object(self.u8())
        self.depth += 1
        if self.depth > MAX_DEPTH:
            raise JavaStreamError(f"objects nested deeper than {MAX_DEPTH}")
        try:
            if tag == TC_OBJECT:
                return self.new_object()
            if tag == TC_ARRAY:
                return self.new_array()
            if tag == TC_ENUM:
                desc = self.class_desc()
                enum = _Enum(desc or _ClassDesc("?"))
                self.new_handle(enum)
                constant = self.object(self.u8())
                enum.constant = constant if isinstance(constant, str) else "?"
                return enum
            if tag in (TC_CLASSDESC, TC_PROXYCLASSDESC):
                return self.class_desc(tag)
            if tag == TC_CLASS:
                ref = _ClassRef(self.class_desc())
                self.new_handle(ref)
                return ref
            if tag == TC_EXCEPTION:
                raise JavaStreamError("the stream records an exception thrown while writing")
        finally:
            self.depth -= 1
        raise JavaStreamError(f"unknown type code 0x{tag:02x}")

    def class_desc(self, tag: int | None = None) -> _ClassDesc | None:
        tag = self.u8() if tag is None else tag
        if tag == TC_NULL:
            return None
        if tag == TC_REFERENCE:
            found = self.object(tag)
            if not isinstance(found, _ClassDesc):
                raise JavaStreamError("a back-reference where a class descriptor belongs")
            return found
        if tag == TC_CLASSDESC:
            desc = _ClassDesc(self.utf())
            self.take(8)  # serialVersionUID
            self.new_handle(desc)
            desc.flags = self.u8()
            desc.enum = bool(desc.flags & 0x10)
            count = self.unpack(">h", 2)
            if count < 0 or count * 3 > len(self.data) - self.pos:
                raise JavaStreamError("field count larger than the stream")
            for _ in range(count):
                code = self.u8()
                name = self.utf()
                class_name = None
                if code in (ord("L"), ord("[")):
                    found = self.object(self.u8())
                    class_name = found if isinstance(found, str) else None
                elif code not in _PRIMITIVES:
                    raise JavaStreamError(f"unknown field type {chr(code)!r}")
                desc.fields.append((code, name, class_name))
            self.annotation()  # class annotations: written by custom ObjectOutputStreams only
            desc.super = self.class_desc()
            return desc
        if tag == TC_PROXYCLASSDESC:
            desc = _ClassDesc("dynamic proxy")
            self.new_handle(desc)
            count = self.unpack(">i", 4)
            if count < 0 or count * 2 > len(self.data) - self.pos:
                raise JavaStreamError("interface count larger than the stream")
            interfaces = [self.utf() for _ in range(count)]
            listed = [part for i, name in enumerate(interfaces) for part in ((", ", name) if i else (name,))]
            desc.name = charged_text(self.meter, "dynamic proxy (", *listed, ")")
            self.annotation()
            desc.super = self.class_desc()
            return desc
        raise JavaStreamError(f"unexpected type code 0x{tag:02x} where a class descriptor belongs")

    def annotation(self) -> list[Any]:
        """Contents up to TC_ENDBLOCKDATA; adjacent block data joined."""
        items: list[Any] = []
        while True:
            if self.pos >= len(self.data):
                raise JavaStreamError("stream cut short")
            if self.data[self.pos] == TC_ENDBLOCKDATA:
                self.pos += 1
                return items
            item = self.content()
            if isinstance(item, _BlockData) and items and isinstance(items[-1], _BlockData):
                items[-1] = _BlockData(items[-1].data + item.data)
            else:
                items.append(item)

    def new_object(self) -> _Object:
        desc = self.class_desc()
        if desc is None:
            raise JavaStreamError("an object without a class descriptor")
        obj = _Object(desc)
        self.new_handle(obj)
        for cls in desc.hierarchy():
            if cls.flags & SC_EXTERNALIZABLE:
                if not cls.flags & SC_BLOCK_DATA:
                    raise JavaStreamError(f"{_in_reason(cls.name)}: externalizable data in the old "
                                          "protocol, readable by its class only")
                obj.data.append((cls, {}, self.annotation()))
                continue
            values = {name: self.field_value(code) for code, name, _ in cls.fields}
            annotation = self.annotation() if cls.flags & SC_WRITE_METHOD else None
            obj.data.append((cls, values, annotation))
        return obj

    def field_value(self, code: int) -> Any:
        prim = _PRIMITIVES.get(code)
        if prim is not None:
            value = self.unpack(*prim)
            return chr(value) if code == ord("C") else value
        return self.object(self.u8())

    def new_array(self) -> _Array:
        desc = self.class_desc()
        if desc is None:
            raise JavaStreamError("an array without a class descriptor")
        array = _Array(desc)
        self.new_handle(array)
        size = self.unpack(">i", 4)
        element = ord(desc.name[1]) if len(desc.name) > 1 and desc.name.startswith("[") else ord("L")
        prim = _PRIMITIVES.get(element)
        width = prim[1] if prim else 1
        if size < 0 or size * width > len(self.data) - self.pos:
            raise JavaStreamError(f"array of {size:,} elements larger than the stream")
        if element == ord("B"):
            array.values = self.take(size)
        elif prim is not None:
            raw = self.take(size * width)
            values = list(struct.unpack(f">{size}{prim[0][1]}", raw))
            array.values = [chr(v) for v in values] if element == ord("C") else values
        else:
            array.values = [self.object(self.u8()) for _ in range(size)]
        return array


def read_tree(data: bytes) -> Any:
    """The whole stream as a display tree: its one object, or a list when it holds several."""
    if not data.startswith(MAGIC):
        raise JavaStreamError("not a Java serialization stream")
    # One meter for the text built from the stream's names (proxy names, cycle markers, keys).
    meter = budget.current().meter()
    reader = _StreamReader(data, meter)
    reader.pos = len(MAGIC)
    contents = []
    try:
        while reader.pos < len(data):
            contents.append(reader.content())
        if not contents:
            raise JavaStreamError("an empty stream")
        view = _TreeBuilder(meter)
        trees = [view.tree(item) for item in contents]
    except (struct.error, RecursionError):
        raise JavaStreamError("stream cut short") from None
    except budget.BudgetExceeded as err:
        raise JavaStreamError(str(err)) from None
    return trees[0] if len(trees) == 1 else trees


# ------------------------------------------------------------ from stream objects to a display tree

_BOXED = {"java.lang.Integer", "java.lang.Long", "java.lang.Short", "java.lang.Byte",
          "java.lang.Double", "java.lang.Float", "java.lang.Boolean", "java.lang.Character"}
#: Collections whose writeObject writes their elements as objects after some counts.
_LISTS = {"java.util.ArrayList", "java.util.LinkedList", "java.util.ArrayDeque", "java.util.HashSet",
          "java.util.LinkedHashSet", "java.util.PriorityQueue", "java.util.concurrent.CopyOnWriteArrayList",
          "java.util.concurrent.CopyOnWriteArraySet", "java.util.TreeSet"}
_MAPS = {"java.util.HashMap", "java.util.LinkedHashMap", "java.util.Hashtable", "java.util.TreeMap",
         "java.util.IdentityHashMap", "java.util.EnumMap", "java.util.concurrent.ConcurrentHashMap",
         "java.util.Properties", "java.util.concurrent.ConcurrentSkipListMap"}
#: Wrappers (Collections.unmodifiableList, synchronizedMap, Arrays.asList, ...) shown as what
#: they wrap: the field that holds it.
_WRAPPED = {
    "java.util.Collections$UnmodifiableCollection": "c",
    "java.util.Collections$SynchronizedCollection": "c",
    "java.util.Collections$CheckedCollection": "c",
    "java.util.Collections$UnmodifiableMap": "m",
    "java.util.Collections$SynchronizedMap": "m",
    "java.util.Collections$CheckedMap": "m",
    "java.util.Arrays$ArrayList": "a",
    "java.util.Collections$SingletonList": "element",
    "java.util.Collections$SingletonSet": "element",
    "java.util.concurrent.ConcurrentSkipListSet": "m",
}


class _TreeBuilder:
    def __init__(self, meter: budget.Meter) -> None:
        self.nodes = 0
        self.limit = budget.current().nodes
        self.active: set[int] = set()
        self.meter = meter
        #: What an object that reads as one value (a boxed or big number, a date, a UUID) became,
        #: by the object: a shared one is converted once, however often it is referenced.
        self.values: dict[int, Any] = {}
        #: The cycle marker of each class, built once.
        self.cycles: dict[int, Tagged] = {}

    def count(self) -> None:
        """One value of the tree; each is counted once, when it is entered."""
        self.nodes += 1
        if self.nodes > self.limit:
            raise JavaStreamError(f"more than {self.limit:,} values (shared objects repeated)")

    def tree(self, item: Any, depth: int = 0) -> Any:
        self.count()
        if depth > MAX_DEPTH:
            raise JavaStreamError(f"objects nested deeper than {MAX_DEPTH}")
        if item is _NULL:
            return None
        if isinstance(item, (str, int, float, bool)):
            return item
        if isinstance(item, _BlockData):
            return item.data
        if isinstance(item, _ClassDesc):
            return Tagged("class", item.name)
        if isinstance(item, _ClassRef):
            return Tagged("class", item.desc.name if item.desc else "?")
        if isinstance(item, _Enum):
            return Tagged(item.desc.name, item.constant)
        if id(item) in self.active:
            marker = self.cycles.get(id(item.desc))
            if marker is None:
                text = charged_text(self.meter, "back to the enclosing ", item.desc.name)
                marker = self.cycles[id(item.desc)] = Tagged("cycle", text)
            return marker
        if id(item) in self.values:
            return self.values[id(item)]
        self.active.add(id(item))
        try:
            if isinstance(item, _Array):
                if isinstance(item.values, bytes):
                    return item.values
                return self.items(item.values, depth)
            return self.object(item, depth)
        finally:
            self.active.discard(id(item))

    def object(self, obj: _Object, depth: int) -> Any:
        name = obj.desc.name
        # The most specific JDK class it is or extends decides how it reads: LinkedHashMap's
        # entries are in HashMap's data, a subclass of ArrayList is a list.
        known = next((cls.name for cls, _, _ in reversed(obj.data)
                      if cls.name in _LISTS or cls.name in _MAPS or cls.name in _WRAPPED), name)
        fields: dict[str, Any] = {}
        annotations: list[tuple[str, list[Any]]] = []
        for cls, values, annotation in obj.data:
            fields.update(values)
            if annotation:
                annotations.append((cls.name, annotation))
        value = _one_value(name, fields, annotations)
        if value is not _NULL:
            self.values[id(obj)] = value
            return value
        objects = [a for _, items in annotations for a in items if not isinstance(a, _BlockData)]
        if known in _LISTS:
            if known == "java.util.TreeSet" and objects:
                objects = objects[1:]  # its comparator comes first
            return self.items(objects, depth)
        if known in _MAPS:
            if known == "java.util.concurrent.ConcurrentHashMap":
                while len(objects) >= 2 and objects[-1] is _NULL and objects[-2] is _NULL:
                    objects = objects[:-2]  # its end marker
            return self.pairs(objects, depth)
        if name == "java.util.CollSer" and "tag" in fields:  # List.of, Set.of, Map.of
            if fields["tag"] & 0xFF == 3:
                return self.pairs(objects, depth)
            return self.items(objects, depth)
        if known in _WRAPPED and _WRAPPED[known] in fields:
            return self.tree(fields[_WRAPPED[known]], depth + 1)
        # Any other class: its fields, and what its writeObject wrote beside them.
        body: dict[str, Any] = {}
        for key, value in fields.items():
            body[key] = self.tree(value, depth + 1)
        for cls_name, items in annotations:
            key = ("writeObject data" if len(annotations) == 1
                   else charged_text(self.meter, "writeObject data (", cls_name, ")"))
            body[key] = self.items(items, depth)
        return Tagged(name, body)

    def items(self, objects: list[Any], depth: int) -> list[Any]:
        """The elements of a list, set or array one level down (each counted as it is entered)."""
        return [self.tree(v, depth + 1) for v in objects]

    def pairs(self, objects: list[Any], depth: int) -> Any:
        out: dict[Any, Any] = {}
        for i in range(0, len(objects) - 1, 2):
            key = self.tree(objects[i], depth + 1)
            try:
                hash(key)
            except TypeError:
                from cqlsh_ext.payload.formats.tree import render

                key = render(key)
            out[key] = self.tree(objects[i + 1], depth + 1)
        return out


def _in_reason(name: str) -> str:
    """A class name inside a reason, which is one line: quoted with its control characters
    escaped, and cut (the stream says what the name is, up to 65,535 bytes of anything)."""
    return repr(name[:80]) + ("…" if len(name) > 80 else "")


def _one_value(name: str, fields: dict[str, Any], annotations: list[tuple[str, list[Any]]]) -> Any:
    """What an object of a JDK class that holds one value (a boxed or big number, a date, a UUID)
    reads as; _NULL for any other."""
    if name in _BOXED and "value" in fields:
        return fields["value"]
    if name in ("java.math.BigInteger", "java.math.BigDecimal"):
        number = _big_number(name, fields)
        if number is not None:
            return number
    if name == "java.util.Date" and annotations and isinstance(annotations[0][1][0], _BlockData):
        raw = annotations[0][1][0].data
        if len(raw) == 8:
            return _date(struct.unpack(">q", raw)[0])
    if name == "java.util.UUID" and {"mostSigBits", "leastSigBits"} <= fields.keys():
        import uuid  # loaded when a stream holds one: start-up does not pay for it

        return Tagged("UUID", str(uuid.UUID(int=((fields["mostSigBits"] & (2**64 - 1)) << 64)
                                           | (fields["leastSigBits"] & (2**64 - 1)))))
    return _NULL


def _big_number(name: str, fields: dict[str, Any]) -> Any:
    if name == "java.math.BigInteger":
        magnitude = fields.get("magnitude")
        signum = fields.get("signum")
        if isinstance(magnitude, _Array) and isinstance(magnitude.values, bytes) and isinstance(signum, int):
            return signum * int.from_bytes(magnitude.values, "big")
        return None
    if name == "java.math.BigDecimal":
        unscaled = fields.get("intVal")
        scale = fields.get("scale")
        if isinstance(unscaled, _Object) and isinstance(scale, int):
            inner: dict[str, Any] = {}
            for _, values, _ in unscaled.data:
                inner.update(values)
            number = _big_number("java.math.BigInteger", inner)
            if number is not None:
                return Tagged("BigDecimal", decimal_text(number, -scale))
    return None


def _date(millis: int) -> Any:
    try:
        return datetime.datetime.fromtimestamp(millis / 1000, datetime.timezone.utc)
    except (OverflowError, OSError, ValueError):
        return Tagged("java.util.Date", millis)
