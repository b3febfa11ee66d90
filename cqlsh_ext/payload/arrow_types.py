"""The Arrow type of every exported column (docs/export.md, "Types"), as a small lattice of kinds.

A *kind* says what a column (or a place inside one: a record's key, a list's items) holds, and
so its Arrow type. CQL columns start from their CQL type (`cql_kind`, from the driver's
cqltypes); what a path, a decoded blob or an aggregate holds is read from the values themselves
(`kind_of`), and two kinds `merge` into the narrowest kind that holds both:

    Int(53) < Int(64) < Int(128)     int64, int64, decimal128(38, 0) (up to 38 digits)
    Int(53) + Float                  float64 (every integer seen is exact in a double)
    Int + Dec(scale, digits)         decimal128(38, scale) while digits + scale <= 38
    Struct + Struct                  the union of their keys, each key's kinds merged
    List + List                      the items' kinds merged
    anything else that differs       Json: the value's JSON text, at that place only

A Null kind (only nulls seen) becomes whatever comes next. `compile_kind` makes the converter of a
kind: values to what pyarrow takes for its Arrow type, raising Misfit for a value the kind does not
hold; `fitted` converts such a value with only the places inside it that do not fit null (the
writer's note names them: `unfit_head`). `given_kind` is the kind of an Arrow type a schema gives
(`arrow_type_named` reads its name). Kinds are plain frozen data: they travel to and from Spark
executors (which merge them) and compare by value.

pyarrow is imported only by `arrow_type` and what calls it, never at import time.
"""

from __future__ import annotations

import datetime
import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from cqlsh_ext.common import jsonenc
from cqlsh_ext.common.long_int import integer_text

#: A record place holds at most this many keys as struct fields; more (ids used as keys, say)
#: make that place JSON text.
MAX_FIELDS = 256
#: Places nested deeper than this are JSON text.
MAX_DEPTH = 32
_EXACT_IN_DOUBLE = 2**53
_INT64 = 2**63
_DECIMAL_DIGITS = 38
#: The magnitudes an integer's kind is read by (_int_bits), as the native core takes them to tell
#: the shapes of values apart (values of one shape have one kind: a sample's kinds are read from
#: one value of each).
SHAPE_BOUNDS = (_EXACT_IN_DOUBLE, _INT64, 10**_DECIMAL_DIGITS)
_EPOCH = datetime.datetime(1970, 1, 1)
_EPOCH_UTC = datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc)
_EPOCH_DATE = datetime.date(1970, 1, 1)


class Misfit(Exception):
    """A value the kind does not hold."""


@dataclass(frozen=True)
class Null:
    """Only nulls seen so far (written as a string column of nulls)."""


@dataclass(frozen=True)
class Bool:
    pass


@dataclass(frozen=True)
class Int:
    """Integers whose magnitude fits `bits`: 53 (exact in a double), 64, 128 (38 digits)."""

    bits: int


@dataclass(frozen=True)
class Float:
    """Floats, and integers exact in a double."""


@dataclass(frozen=True)
class Dec:
    """Exact decimals: `scale` digits after the point, `digits` before it at most, written as
    decimal128(38, scale); `precision`: a type given (db.query's schema=, COPY's SCHEMA), written
    as decimal128(precision, scale), which takes a float too as its shortest spelling (737.26)."""

    scale: int
    digits: int
    precision: int | None = None


@dataclass(frozen=True)
class Str:
    pass


@dataclass(frozen=True)
class Json:
    """Values of different kinds at one place: each as its JSON text."""


@dataclass(frozen=True)
class List:
    item: Any
    #: A CQL vector's dimension (a fixed-size list); None for a list.
    size: int | None = None


@dataclass(frozen=True)
class Struct:
    """A record (a UDT, a tuple with fields "0", "1", ..., a decoded record's keys)."""

    fields: tuple[tuple[str, Any], ...]
    #: A CQL tuple or UDT: its driver value is a sequence or an object, not a mapping.
    cql: bool = False


@dataclass(frozen=True)
class Map:
    """A CQL map."""

    key: Any
    value: Any


@dataclass(frozen=True)
class Blob:
    """A blob inside a collection, tuple or UDT: the struct a top-level blob's six columns make
    (payload, label, kind, note, stored, confidence), its payload's kind read from the answer's sample;
    `steps` where it sits below its column (its place's steps: payload.places.ValuePlace)."""

    payload: Any
    steps: tuple[str, ...] = ()


@dataclass(frozen=True)
class Leaf:
    """A CQL type with one Arrow type: int8, int16, int32, int64, float32, float64, bool,
    string, binary, timestamp, date, time, duration, uuid (Arrow's canonical arrow.uuid
    extension), inet, cql_json (a custom type: the JSON writer's text)."""

    name: str


Kind = Null | Bool | Int | Float | Dec | Str | Json | List | Struct | Map | Blob | Leaf

# ------------------------------------------------------------------ kinds from values

# The kinds read from values, made once: merge compares by identity first.
_NULL, _BOOL, _FLOAT, _STR, _JSON = Null(), Bool(), Float(), Str(), Json()
_INTS = {53: Int(53), 64: Int(64), 128: Int(128)}


def _int_bits(value: int) -> int | None:
    magnitude = abs(value)
    if magnitude <= _EXACT_IN_DOUBLE:
        return 53
    if -_INT64 <= value < _INT64:
        return 64
    if magnitude < 10**_DECIMAL_DIGITS:
        return 128
    return None


def _decimal_kind(value: Decimal) -> Kind:
    if not value.is_finite():
        return Json()
    sign, digits, exponent = value.as_tuple()
    assert isinstance(exponent, int)
    scale = max(0, -exponent)
    whole = max(0, len(digits) + exponent)
    if whole + scale > _DECIMAL_DIGITS:
        return Json()
    return Dec(scale, whole)


def kind_of(value: Any, depth: int = 0) -> Kind:
    """The narrowest kind holding `value`: a path's value, a decoded record, an aggregate (JSON-
    able values: None, bool, int, float, Decimal, str, lists, dicts with str keys)."""
    kind = type(value)
    if kind is str:
        return _STR
    if value is None:
        return _NULL
    if kind is bool:
        return _BOOL
    if kind is int:
        bits = _int_bits(value)
        return _JSON if bits is None else _INTS[bits]
    if kind is float:
        return _FLOAT
    if isinstance(value, Decimal):
        return _decimal_kind(value)
    if isinstance(value, bool):
        return _BOOL
    if isinstance(value, int):
        return kind_of(int(value), depth)
    if isinstance(value, str):
        return _STR
    if isinstance(value, float):
        return _FLOAT
    if depth >= MAX_DEPTH:
        return _JSON
    if isinstance(value, (list, tuple)):
        item: Kind = _NULL
        for v in value:
            item = merge(item, kind_of(v, depth + 1))
        return List(item)
    if isinstance(value, Mapping):
        if len(value) > MAX_FIELDS or any(not isinstance(k, str) or not k for k in value):
            return _JSON
        return Struct(tuple((k, kind_of(v, depth + 1)) for k, v in value.items()))
    return _JSON


def merge(a: Kind, b: Kind) -> Kind:
    """The narrowest kind holding what `a` and `b` hold."""
    if a is b or a == b:
        return a
    if isinstance(a, Null):
        return b
    if isinstance(b, Null):
        return a
    if isinstance(a, Json) or isinstance(b, Json):
        return Json()
    if isinstance(a, Int) and isinstance(b, Int):
        return Int(max(a.bits, b.bits))
    if isinstance(a, Float) and isinstance(b, Float):
        return a
    if isinstance(a, (Int, Float)) and isinstance(b, (Int, Float)):
        ints = a if isinstance(a, Int) else b
        assert isinstance(ints, Int)
        return Float() if ints.bits <= 53 else Json()
    if isinstance(a, (Int, Dec)) and isinstance(b, (Int, Dec)):
        return _merge_decimal(a, b)
    if isinstance(a, List) and isinstance(b, List) and a.size == b.size:
        return List(merge(a.item, b.item), a.size)
    if isinstance(a, Struct) and isinstance(b, Struct) and a.cql == b.cql:
        return _merge_struct(a, b)
    if isinstance(a, Map) and isinstance(b, Map):
        return Map(merge(a.key, b.key), merge(a.value, b.value))
    if isinstance(a, Blob) and isinstance(b, Blob) and a.steps == b.steps:
        return Blob(merge(a.payload, b.payload), a.steps)
    return Json()


def _int_digits(kind: Int) -> int:
    return {53: 16, 64: 19}.get(kind.bits, _DECIMAL_DIGITS)


def _merge_decimal(a: Int | Dec, b: Int | Dec) -> Kind:
    """Integers and decimals: decimal128(38, the larger scale), while the integer digits (an
    integer kind's bound: 16, 19 or 38 digits) and the scale fit 38 digits."""
    scale = max(k.scale if isinstance(k, Dec) else 0 for k in (a, b))
    digits = max(k.digits if isinstance(k, Dec) else _int_digits(k) for k in (a, b))
    if digits + scale > _DECIMAL_DIGITS:
        return Json()
    return Dec(scale, digits)


def _merge_struct(a: Struct, b: Struct) -> Kind:
    fields = dict(a.fields)
    for name, kind in b.fields:
        fields[name] = merge(fields[name], kind) if name in fields else kind
    if len(fields) > MAX_FIELDS:
        return Json()
    return Struct(tuple(fields.items()), a.cql)


def value_kind(value: Any, like: Kind) -> Kind:
    """The kind of `value` in a column that started as `like`: a CQL value keeps its CQL type's
    kind (only the numbers inside it are read; a blob inside it keeps its kind: its payloads are
    read apart, payload.columns); any other value is read by `kind_of`."""
    if value is None:
        return _NULL
    if isinstance(like, Null):  # a path's value, a payload, an aggregate
        return kind_of(value)
    if isinstance(like, (Leaf, Blob)):
        return like
    if isinstance(like, List) and not isinstance(value, (str, bytes, bytearray, Mapping)) \
            and hasattr(value, "__iter__"):
        item: Kind = Null()
        for v in value:
            item = merge(item, value_kind(v, like.item))
        return List(item, like.size)
    if isinstance(like, Map) and isinstance(value, Mapping):
        key: Kind = Null()
        val: Kind = Null()
        for k, v in value.items():
            key, val = merge(key, value_kind(k, like.key)), merge(val, value_kind(v, like.value))
        return Map(key, val)
    if isinstance(like, Struct) and like.cql:
        if isinstance(value, Mapping):
            items = [value.get(name) for name, _ in like.fields]
        elif isinstance(value, tuple):
            items = list(value)[:len(like.fields)]
        else:
            items = [getattr(value, name, None) for name, _ in like.fields]
        items += [None] * (len(like.fields) - len(items))
        fields = zip(like.fields, items, strict=True)
        return Struct(tuple((name, value_kind(v, k)) for (name, k), v in fields), cql=True)
    return kind_of(value)


def settled(kind: Kind) -> Kind:
    """`kind` as written: a record place without keys (only `{}` seen) is JSON text, as Parquet
    has no empty struct."""
    if isinstance(kind, Struct) and not kind.fields:
        return Json()
    return held_mapped(kind, settled)


def held_mapped(kind: Kind, change: Callable[[Kind], Kind]) -> Kind:
    """`kind` with `change` made to each kind it holds (a list's item, a record's fields, a map's
    key and value, a blob's payload); a leaf as it is."""
    if isinstance(kind, List):
        return List(change(kind.item), kind.size)
    if isinstance(kind, Struct):
        return Struct(tuple((name, change(k)) for name, k in kind.fields), kind.cql)
    if isinstance(kind, Map):
        return Map(change(kind.key), change(kind.value))
    if isinstance(kind, Blob):
        return Blob(change(kind.payload), kind.steps)
    return kind


def kind_spec(kind: Kind) -> tuple[Any, ...]:
    """A kind as the native core takes it, to lay out values it holds in that kind
    (cqlsh_ext_native.held_array: ("int", bits), ("struct", ((name, kind), ...)), ...). Raises
    ValueError for a kind no value read from a payload has (a CQL leaf, a map, a CQL record)."""
    if isinstance(kind, Null):
        return ("null",)
    if isinstance(kind, Bool):
        return ("bool",)
    if isinstance(kind, Int):
        return ("int", kind.bits)
    if isinstance(kind, Float):
        return ("float",)
    if isinstance(kind, Dec) and kind.precision is None:
        return ("dec", kind.scale, kind.digits)
    if isinstance(kind, Str):
        return ("str",)
    if isinstance(kind, Json):
        return ("json",)
    if isinstance(kind, List) and kind.size is None:
        return ("list", kind_spec(kind.item))
    if isinstance(kind, Struct) and not kind.cql:
        return ("struct", tuple((name, kind_spec(k)) for name, k in kind.fields))
    raise ValueError(f"no core layout for {kind}")


# ------------------------------------------------------------------ kinds from CQL types


_CQL_LEAVES = {
    "tinyint": "int8", "smallint": "int16", "int": "int32", "bigint": "int64", "counter": "int64",
    "float": "float32", "double": "float64", "boolean": "bool", "ascii": "string", "text": "string",
    "timestamp": "timestamp", "date": "date", "time": "time", "duration": "duration",
    "uuid": "uuid", "timeuuid": "uuid", "inet": "inet",
}


def cql_kind(cqltype: Any) -> Kind:
    """The kind of a CQL column of driver type `cqltype` (a cassandra.cqltypes class, read through
    the one type model, cqlsh_ext.cql.types). A blob at the top is the caller's (a decoded payload
    with its companions); a blob inside a collection, tuple or UDT is a Blob: the same six parts
    as a struct. A varint is decimal128(38, 0); a decimal's scale is read from the answer's sample
    (payload.columns)."""
    from cqlsh_ext.cql.types import from_driver

    return _kind_of_type(from_driver(cqltype), ())


def _kind_of_type(node: Any, steps: tuple[str, ...] | None) -> Kind:
    """The kind of a cqlsh_ext.cql.types.CqlType node `steps` below its column (None: the column)."""
    kind = node.kind
    if kind == "native":
        if node.name in _CQL_LEAVES:
            return Leaf(_CQL_LEAVES[node.name])
        if node.name == "varint":  # by its type alone: decimal128(38, 0); past 38 digits a misfit
            return Dec(0, _DECIMAL_DIGITS)
        if node.name == "decimal":  # its scale is read from the answer's leading sample
            return Dec(0, 1)
        if node.name == "blob":
            return Leaf("binary") if steps == () else Blob(_NULL, steps or ())
    here = steps or ()
    if kind in ("list", "set", "vector") and len(node.params) == 1:
        item = _kind_of_type(node.params[0], (*here, "item"))
        return List(item, node.size if kind == "vector" else None)
    if kind == "map" and len(node.params) == 2:
        return Map(_kind_of_type(node.params[0], (*here, "key")),
                   _kind_of_type(node.params[1], (*here, "value")))
    if kind == "tuple":
        return Struct(tuple((str(i), _kind_of_type(p, (*here, str(i)))) for i, p in enumerate(node.params)),
                      cql=True)
    if kind == "udt":
        return Struct(tuple((str(n), _kind_of_type(p, (*here, str(n))))
                            for n, p in zip(node.fields, node.params, strict=True)), cql=True)
    return Leaf("cql_json")  # a custom type: the JSON writer's spelling, as text


# ------------------------------------------------------------------ Arrow types


#: The field metadata of a string field that holds JSON text. JSON text is a plain string, not
#: Arrow's `arrow.json` extension type: polars cannot use the extension (it neither compares nor
#: casts it, and panics writing it inside a struct) and pyarrow's Table.from_pylist refuses it
#: inside a struct (ArrowNotImplementedError), so an answer's schema would not take its own rows.
JSON_TEXT_METADATA = {b"cqlsh_ext": b"json"}


def is_json_text(field: Any) -> bool:
    """Whether a pyarrow.Field holds JSON text: marked so (JSON_TEXT_METADATA), or of Arrow's
    `arrow.json` extension type (another producer's data, an export of cqlsh-ext before 2026-11)."""
    import pyarrow as pa

    kind = field.type
    if isinstance(kind, pa.BaseExtensionType):
        return bool(kind.extension_name == "arrow.json")
    return field.metadata is not None and field.metadata.get(b"cqlsh_ext") == b"json" \
        and pa.types.is_string(kind)


def arrow_field(name: str, kind: Kind, storage: bool = False) -> Any:
    """The pyarrow.Field of a place of `kind` named `name` (JSON text marked: JSON_TEXT_METADATA)."""
    import pyarrow as pa

    marked = JSON_TEXT_METADATA if isinstance(kind, Json) else None
    return pa.field(name, arrow_type(kind, storage), metadata=marked)


def arrow_type(kind: Kind, storage: bool = False) -> Any:
    """The Arrow type of `kind`; `storage`: with its extension types' storage instead (a uuid's 16
    bytes), as pyarrow builds nested arrays from Python values. JSON text is a string, its field
    marked (arrow_field)."""
    import pyarrow as pa

    if isinstance(kind, (Null, Str, Json)):
        return pa.string()
    if isinstance(kind, Bool):
        return pa.bool_()
    if isinstance(kind, Int):
        return pa.int64() if kind.bits <= 64 else pa.decimal128(_DECIMAL_DIGITS, 0)
    if isinstance(kind, Float):
        return pa.float64()
    if isinstance(kind, Dec):
        return pa.decimal128(kind.precision or _DECIMAL_DIGITS, kind.scale)
    if isinstance(kind, List):
        item = arrow_field("item", kind.item, storage)
        return pa.list_(item) if kind.size is None else pa.list_(item, kind.size)
    if isinstance(kind, Blob):
        return pa.struct([arrow_field("payload", kind.payload, storage), ("label", pa.string()),
                          ("kind", pa.string()), ("note", pa.string()), ("stored", pa.binary()),
                          ("confidence", pa.string())])
    if isinstance(kind, Struct):
        return pa.struct([arrow_field(name, k, storage) for name, k in kind.fields])
    if isinstance(kind, Map):
        return pa.map_(arrow_type(kind.key, storage), arrow_field("value", kind.value, storage))
    if storage and kind.name == "uuid":
        return pa.binary(16)
    return _LEAF_TYPES[kind.name]()


def _leaf_types() -> dict[str, Callable[[], Any]]:
    def lazy(build: Callable[[Any], Any]) -> Callable[[], Any]:
        def make() -> Any:
            import pyarrow as pa

            return build(pa)
        return make

    return {
        "int8": lazy(lambda pa: pa.int8()), "int16": lazy(lambda pa: pa.int16()),
        "int32": lazy(lambda pa: pa.int32()), "int64": lazy(lambda pa: pa.int64()),
        "float32": lazy(lambda pa: pa.float32()), "float64": lazy(lambda pa: pa.float64()),
        "bool": lazy(lambda pa: pa.bool_()), "string": lazy(lambda pa: pa.string()),
        "binary": lazy(lambda pa: pa.binary()),
        "timestamp": lazy(lambda pa: pa.timestamp("ms", tz="UTC")),
        "date": lazy(lambda pa: pa.date32()), "time": lazy(lambda pa: pa.time64("ns")),
        # Parquet has no month-day-nanosecond interval: a CQL duration's three parts.
        "duration": lazy(lambda pa: pa.struct([("months", pa.int32()), ("days", pa.int32()),
                                               ("nanoseconds", pa.int64())])),
        # Arrow's canonical extension: Parquet's UUID type, which DuckDB reads as UUID.
        "uuid": lazy(lambda pa: pa.uuid()), "inet": lazy(lambda pa: pa.string()),
        "cql_json": lazy(lambda pa: pa.string()),
    }


_LEAF_TYPES = _leaf_types()


# ------------------------------------------------------------------ kinds given (schema=, SCHEMA)

#: The type names a schema's text may use (a pyarrow.DataType is taken too), as docs/api.md lists
#: them: pyarrow's own names of these types, decimal128(p, s), json, list<T>.
GIVEN_NAMES = ("int8", "int16", "int32", "int64", "float32", "float64", "bool", "string", "binary",
               "json", "decimal128(p, s)", "list<T>")
_DECIMAL_NAME = re.compile(r"decimal(?:128)?\s*\(\s*(\d+)\s*,\s*(-?\d+)\s*\)", re.IGNORECASE)
_LIST_NAME = re.compile(r"list\s*<(.*)>", re.IGNORECASE | re.DOTALL)


def arrow_type_named(name: str) -> Any:
    """The pyarrow.DataType a type name means ("int64", "decimal128(20, 2)", "json",
    "list<string>"; pyarrow's own aliases: "double", "utf8"); ValueError, one line, for another."""
    import pyarrow as pa

    text = name.strip()
    found = _DECIMAL_NAME.fullmatch(text)
    if found is not None:
        precision, scale = int(found.group(1)), int(found.group(2))
        if not 1 <= precision <= _DECIMAL_DIGITS or not 0 <= scale <= precision:
            raise ValueError(f"{text}: a decimal128 takes a precision of 1 to {_DECIMAL_DIGITS} and a scale "
                             "of 0 to the precision")
        return pa.decimal128(precision, scale)
    if text.lower() == "json":
        return pa.json_()
    found = _LIST_NAME.fullmatch(text)
    if found is not None:
        return pa.list_(arrow_type_named(found.group(1)))
    try:
        return pa.type_for_alias(text.lower())
    except (ValueError, KeyError):
        raise ValueError(f"unknown type {name!r} (one of {', '.join(GIVEN_NAMES)})") from None


def given_kind(arrow: Any, like: Kind | None = None) -> Kind:
    """The kind that writes the Arrow type `arrow` (a type a schema gives a column or a place):
    `like`, the kind the place has without it (a CQL column's, or the sample's), where it writes
    that type already (a CQL timestamp given its own type); else integers, floats, bool, string,
    binary, JSON text, decimal128(p, s), lists, structs and maps of these. ValueError, one line,
    for a type no kind writes (the answer's schema then holds exactly the types given)."""
    import pyarrow as pa

    if isinstance(like, Leaf) and arrow_type(like) == arrow:
        return like
    t = pa.types
    kind: Kind
    if t.is_int64(arrow):
        kind = Int(64)
    elif t.is_int8(arrow) or t.is_int16(arrow) or t.is_int32(arrow):
        kind = Leaf(str(arrow))
    elif t.is_float64(arrow):
        kind = Float()
    elif t.is_float32(arrow):
        kind = Leaf("float32")
    elif t.is_boolean(arrow):
        kind = Bool()
    elif t.is_string(arrow):
        kind = Str()
    elif t.is_binary(arrow):
        kind = Leaf("binary")
    elif isinstance(arrow, pa.BaseExtensionType) and arrow.extension_name == "arrow.json":
        kind = Json()  # (a field marked JSON text is given as this type: given_type)
    elif t.is_decimal128(arrow) and 0 <= arrow.scale <= arrow.precision:
        kind = Dec(arrow.scale, arrow.precision - arrow.scale, arrow.precision)
    elif t.is_list(arrow) or t.is_fixed_size_list(arrow):
        item = like.item if isinstance(like, List) else None
        size = arrow.list_size if t.is_fixed_size_list(arrow) else None
        kind = List(given_kind(given_type(arrow.value_field), item), size)
    elif t.is_struct(arrow):
        given = like if isinstance(like, Struct) else None
        inner = dict(given.fields) if given is not None else {}
        cql = given is not None and given.cql
        names = [arrow.field(i).name for i in range(arrow.num_fields)]
        if given is not None and given.cql and names != [name for name, _ in given.fields]:
            raise ValueError(f"{arrow}: a CQL tuple or UDT keeps its fields ({', '.join(inner)})")
        kind = Struct(tuple((name, given_kind(given_type(arrow.field(i)), inner.get(name)))
                            for i, name in enumerate(names)), cql)
    elif t.is_map(arrow):
        key, value = (like.key, like.value) if isinstance(like, Map) else (None, None)
        kind = Map(given_kind(arrow.key_type, key), given_kind(given_type(arrow.item_field), value))
    else:
        raise ValueError(f"{arrow} is no type given here (one of {', '.join(GIVEN_NAMES)}, structs and maps "
                         "of them, or a CQL column's own type)")
    # (a record, a list or a map is checked place by place above; JSON text is written a string)
    if not isinstance(kind, (Json, List, Struct, Map)) and arrow_type(kind) != arrow:
        raise ValueError(f"{arrow} is no type given here (one of {', '.join(GIVEN_NAMES)})")
    return kind


def given_type(field: Any) -> Any:
    """The type a schema's pyarrow.Field gives: Arrow's `arrow.json` where it holds JSON text (an
    answer's own schema marks its JSON-text fields: is_json_text), else its type."""
    import pyarrow as pa

    return pa.json_() if is_json_text(field) else field.type


def rewritten(old: Kind, new: Kind) -> bool:
    """Whether values written as `old` must be converted to be read as `new`: another Arrow type,
    or a place that became JSON text (a string "NEW" is the JSON text "\"NEW\"" there)."""
    if isinstance(old, Null) or old == new:
        return False
    if arrow_type(old) != arrow_type(new):
        return True
    if isinstance(new, Json):
        return not isinstance(old, Json)
    if isinstance(old, Struct) and isinstance(new, Struct):
        inner = dict(old.fields)
        return any(name in inner and rewritten(inner[name], kind) for name, kind in new.fields)
    if isinstance(old, List) and isinstance(new, List):
        return rewritten(old.item, new.item)
    if isinstance(old, Map) and isinstance(new, Map):
        return rewritten(old.key, new.key) or rewritten(old.value, new.value)
    return False


def type_text(kind: Kind) -> str:
    """How docs and closing lines name a kind's Arrow type ("int64", "JSON text", ...)."""
    if isinstance(kind, Json):
        return "JSON text"
    if isinstance(kind, Struct):
        return f"struct ({len(kind.fields)} field{'s' if len(kind.fields) != 1 else ''})"
    if isinstance(kind, List):
        return f"list of {type_text(kind.item)}"
    if isinstance(kind, Blob):
        return f"blob of {type_text(kind.payload)}"
    return str(arrow_type(kind))


# ------------------------------------------------------------------ values


def json_text(value: Any) -> str:
    """A JSON-able value as JSON text, numbers exactly (a Decimal as its digits)."""
    kind = type(value)
    if kind is str:
        return jsonenc.string(value)
    if value is None:
        return "null"
    if kind is bool:
        return "true" if value else "false"
    if kind is int:
        return integer_text(value)
    if kind is float:
        return jsonenc.float_text(value)
    if isinstance(value, Decimal):
        return str(value) if value.is_finite() else jsonenc.string(str(value))
    if isinstance(value, (bool, int, str)):
        return jsonenc.dumps(value)
    if isinstance(value, Mapping):
        return "{" + ",".join(f"{jsonenc.string(str(k))}:{json_text(v)}" for k, v in value.items()) + "}"
    if isinstance(value, (list, tuple)):
        return "[" + ",".join(json_text(v) for v in value) + "]"
    return jsonenc.dumps(value)


Converter = Callable[[Any], Any]


_NONE_TYPE = type(None)
#: CQL leaves whose values pyarrow takes as the driver gives them, by the Python types they come as.
_AS_GIVEN: dict[str, set[type]] = {
    "int8": {int}, "int16": {int}, "int32": {int}, "int64": {int}, "float32": {float}, "float64": {float},
    "bool": {bool}, "string": {str}, "binary": {bytes}}


def as_they_are(kind: Kind, values: list[Any]) -> bool:
    """Whether every value of a column is what its kind's converter would give back unchanged
    (so the column goes to pyarrow as it is, with no call per value): told from the values' types
    in one pass, and for integers their range. False says nothing: the converter then runs on each
    value (and meets a misfit, if there is one)."""
    if isinstance(kind, Json):
        return False
    types = set(map(type, values))
    types.discard(_NONE_TYPE)
    if not types:
        return True
    if isinstance(kind, Int) and kind.bits <= 64 and types == {int}:
        present = [v for v in values if v is not None]
        low, high = (-_EXACT_IN_DOUBLE, _EXACT_IN_DOUBLE) if kind.bits == 53 else (-_INT64, _INT64 - 1)
        return bool(low <= min(present) and max(present) <= high)
    return types <= _given_types(kind)


#: A blob inside a CQL value to its six parts (payload, label, kind, note, stored bytes,
#: confidence), given where it sits below its column (payload.columns.BlobReading.blob_parts there).
BlobParts = Callable[[Any, tuple[str, ...]], tuple[Any, Any, Any, Any, Any, Any]]


def compile_kind(kind: Kind, cql_json: Converter | None = None,
                 blob_parts: BlobParts | None = None) -> Converter:
    """The converter of `kind`: a value (None included) to what pyarrow takes for arrow_type(kind);
    raises Misfit for a value the kind does not hold. `cql_json`: how a CQL value without an
    Arrow type of its own (a custom type) is spelt as JSON text; `blob_parts`: how a blob inside a
    CQL value is read (a payload that does not fit its kind is null there, with its note, its
    stored bytes kept beside it)."""
    if isinstance(kind, Blob):
        return _blob_converter(kind, cql_json, blob_parts)
    if isinstance(kind, Null):
        return _null
    if isinstance(kind, Bool):
        return _bool
    if isinstance(kind, Int):
        return _int_converter(kind)
    if isinstance(kind, Float):
        return _float
    if isinstance(kind, Dec):
        return _dec_converter(kind)
    if isinstance(kind, Str):
        return _str
    if isinstance(kind, Json):
        return _json
    if isinstance(kind, List):
        return _list_converter(kind, cql_json, blob_parts)
    if isinstance(kind, Struct):
        return _struct_converter(kind, cql_json, blob_parts)
    if isinstance(kind, Map):
        return _map_converter(kind, cql_json, blob_parts)
    return _leaf_converter(kind.name, cql_json)


#: A place inside a value that did not fit its kind: where it is below the value ("status",
#: "customer.tier", "tags[2]"), the kind there (None: a key its record kind has no field for),
#: the value there.
Unfit = tuple[str, "Kind | None", Any]
#: A misfit's note names this many of the places that did not fit, then says how many more.
UNFIT_NAMED = 5


def fitted(kind: Kind, value: Any, cql_json: Converter | None = None,
           blob_parts: BlobParts | None = None) -> tuple[Any, list[Unfit]]:
    """`value` converted for `kind` as compile_kind's converter converts it, but each place inside
    that does not fit (a record's field, a list's item, a map's value) null there and a key its
    record kind has no field for left out: (the converted value, the places that did not fit, in
    the value's order). Raises Misfit where the value as a whole does not fit (another sort of
    value: a string where a record is; a vector of another size)."""
    unfit: list[Unfit] = []
    return _fit(kind, value, "", unfit, cql_json, blob_parts), unfit


def _below(where: str, name: str) -> str:
    return f"{where}.{name}" if where else name


def _fit_place(kind: Kind, value: Any, where: str, unfit: list[Unfit], cql_json: Converter | None,
               blob_parts: BlobParts | None) -> Any:
    """A place inside a value: converted, or null and said in `unfit`."""
    try:
        return _fit(kind, value, where, unfit, cql_json, blob_parts)
    except Misfit:
        unfit.append((where, kind, value))
        return None


def _fit(kind: Kind, value: Any, where: str, unfit: list[Unfit], cql_json: Converter | None,
         blob_parts: BlobParts | None) -> Any:
    if value is None:
        return None
    if isinstance(kind, Struct):
        if isinstance(value, Mapping):
            out = {name: _fit_place(k, value.get(name), _below(where, name), unfit, cql_json, blob_parts)
                   for name, k in kind.fields}
            unfit += [(_below(where, str(key)), None, item) for key, item in value.items() if key not in out]
            return out
        if not kind.cql:
            raise Misfit
        if isinstance(value, tuple):  # a CQL tuple, or a UDT as the driver's namedtuple: by position
            if len(value) > len(kind.fields):
                raise Misfit
            items = list(value) + [None] * (len(kind.fields) - len(value))
        else:
            items = [getattr(value, name, None) for name, _ in kind.fields]
        return {name: _fit_place(k, v, _below(where, name), unfit, cql_json, blob_parts)
                for (name, k), v in zip(kind.fields, items, strict=True)}
    if isinstance(kind, List):
        if type(value) is not list and (isinstance(value, (str, bytes, bytearray, Mapping))
                                        or not hasattr(value, "__iter__")):
            raise Misfit
        items = list(value)
        if kind.size is not None and len(items) != kind.size:
            raise Misfit
        return [_fit_place(kind.item, v, f"{where}[{i}]", unfit, cql_json, blob_parts)
                for i, v in enumerate(items)]
    if isinstance(kind, Map):
        pairs = value.items() if isinstance(value, Mapping) else value
        key_of = compile_kind(kind.key, cql_json, blob_parts)
        out_pairs = []
        for key, item in pairs:
            at = f"{where}[{json_text(key) if not isinstance(key, str) else jsonenc.string(key)}]"
            try:
                converted = key_of(key)
            except Misfit:  # a map's key is never null: the entry is left out, and said
                unfit.append((at, kind.key, key))
                continue
            out_pairs.append((converted, _fit_place(kind.value, item, at, unfit, cql_json, blob_parts)))
        return out_pairs
    return compile_kind(kind, cql_json, blob_parts)(value)


#: How a misfit's note begins (a load reads it: the value's places that are null for it).
UNFIT = "did not fit"


def unfit_head(kind: Kind, unfit: list[Unfit]) -> str:
    """A misfit note's head: "did not fit int64" for a value that does not fit as a whole, "did
    not fit struct (3 fields) at status (string), extra (no such field)" for the places inside
    one that did not (the first UNFIT_NAMED of them)."""
    head = f"{UNFIT} {type_text(kind)}"
    if not unfit:
        return head
    named = [f"{where or 'the value'} ({'no such field' if place is None else type_text(place)})"
             for where, place, _value in unfit[:UNFIT_NAMED]]
    more = len(unfit) - len(named)
    return f"{head} at {', '.join(named)}" + (f", and {more:,} more" if more > 0 else "")


def _null(value: Any) -> Any:
    if value is not None:
        raise Misfit
    return None


def _bool(value: Any) -> Any:
    if value is None or isinstance(value, bool):
        return value
    raise Misfit


def _int_converter(kind: Int) -> Converter:
    low, high = {53: (-_EXACT_IN_DOUBLE, _EXACT_IN_DOUBLE), 64: (-_INT64, _INT64 - 1),
                 128: (1 - 10**_DECIMAL_DIGITS, 10**_DECIMAL_DIGITS - 1)}[kind.bits]

    def convert(value: Any) -> Any:
        if value is None:
            return None
        if isinstance(value, int) and not isinstance(value, bool) and low <= value <= high:
            return int(value)
        raise Misfit

    return convert


def _float(value: Any) -> Any:
    if value is None or type(value) is float:
        return value
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) <= _EXACT_IN_DOUBLE:
        return float(value)
    if isinstance(value, float):
        return float(value)
    raise Misfit


_ZERO = Decimal(0)


def _dec_converter(kind: Dec) -> Converter:
    """Integers and decimals the kind holds exactly: no more digits before the point than its
    `digits`, none but zeros past its scale (1.50 fits a scale of 1: it is 1.5); a given type's
    (`precision`) floats too, as their shortest spelling."""
    scale, digits, floats = kind.scale, kind.digits, kind.precision is not None

    def convert(value: Any) -> Any:
        if value is None:
            return None
        if isinstance(value, bool):
            raise Misfit
        if isinstance(value, int):
            if _int_bits(value) is None or (value and len(str(abs(value))) > digits):
                raise Misfit
            return value
        if floats and isinstance(value, float):
            if value - value != 0:  # NaN, the infinities
                raise Misfit
            value = Decimal(repr(value))
        if isinstance(value, Decimal):
            if not value.is_finite():
                raise Misfit
            sign, places, exponent = value.as_tuple()
            assert isinstance(exponent, int)
            end = len(places)
            while exponent < -scale and end > 1 and places[end - 1] == 0:  # zeros past the scale
                end -= 1
                exponent += 1
            if not any(places[:end]):
                return _ZERO  # (pyarrow refuses a zero of a large exponent, 0E+30)
            if exponent < -scale or end + exponent > digits:
                raise Misfit
            return value
        raise Misfit

    return convert


def _str(value: Any) -> Any:
    if value is None or type(value) is str:
        return value
    if isinstance(value, str):
        return str(value)
    raise Misfit


def _json(value: Any) -> Any:
    return None if value is None else json_text(value)


def _blob_converter(kind: Blob, cql_json: Converter | None, blob_parts: BlobParts | None) -> Converter:
    payload = compile_kind(kind.payload, cql_json)
    steps = kind.steps

    def convert(value: Any) -> Any:
        if value is None:
            return None
        if isinstance(value, Mapping):  # read back from Arrow: its parts already
            return dict(value)
        if blob_parts is None:
            raise Misfit
        read, label, view_kind, note, stored, sure = blob_parts(value, steps)
        try:
            read = payload(read)
        except Misfit:
            try:
                read, unfit = fitted(kind.payload, read, cql_json)
            except Misfit:
                read, unfit = None, []
            note = f"{unfit_head(kind.payload, unfit)}: the value is in stored"
            stored = value.stored if hasattr(value, "stored") else bytes(value)
        return {"payload": read, "label": label, "kind": view_kind, "note": note, "stored": stored,
                "confidence": sure}

    return convert


def _list_converter(kind: List, cql_json: Converter | None, blob_parts: BlobParts | None = None) -> Converter:
    item = compile_kind(kind.item, cql_json, blob_parts)
    size = kind.size
    given = _given_types(kind.item)

    def convert(value: Any) -> Any:
        if value is None:
            return None
        if type(value) is list and (size is None or len(value) == size) \
                and given.issuperset(map(type, value)):
            return value  # items the item's converter would give back unchanged: the list as it is
        if type(value) is not list and (isinstance(value, (str, bytes, bytearray, Mapping))
                                        or not hasattr(value, "__iter__")):
            raise Misfit
        out = [item(v) for v in value]
        if size is not None and len(out) != size:
            raise Misfit
        return out

    return convert


def _given_types(kind: Kind) -> frozenset[type]:
    """The Python types a kind's converter gives back unchanged (None always): a field holding one
    is taken as it is, with no call (the common record: strings, floats, booleans, small ints)."""
    if isinstance(kind, Str):
        return frozenset((str, _NONE_TYPE))
    if isinstance(kind, Bool):
        return frozenset((bool, _NONE_TYPE))
    if isinstance(kind, Float):
        return frozenset((float, _NONE_TYPE))
    if isinstance(kind, Leaf) and kind.name in _AS_GIVEN:
        return frozenset((*_AS_GIVEN[kind.name], _NONE_TYPE))
    return frozenset((_NONE_TYPE,))


def _struct_converter(kind: Struct, cql_json: Converter | None,
                      blob_parts: BlobParts | None = None) -> Converter:
    pairs = [(name, compile_kind(k, cql_json, blob_parts)) for name, k in kind.fields]
    fields = [(name, _given_types(k), conv) for (name, k), (_, conv) in zip(kind.fields, pairs, strict=True)]
    known = frozenset(name for name, _ in pairs)

    def convert(value: Any) -> Any:
        if value is None:
            return None
        if type(value) is dict or isinstance(value, Mapping):  # a record, or a struct read back from Arrow
            if not known.issuperset(value):
                raise Misfit
            get = value.get
            return {name: v if type(v := get(name)) in given else conv(v) for name, given, conv in fields}
        if not kind.cql:
            raise Misfit
        if isinstance(value, tuple):  # a CQL tuple, or a UDT as the driver's namedtuple: by position
            if len(value) > len(pairs):
                raise Misfit
            items = list(value) + [None] * (len(pairs) - len(value))
            return {name: conv(v) for (name, conv), v in zip(pairs, items, strict=True)}
        return {name: conv(getattr(value, name, None)) for name, conv in pairs}

    return convert


def _map_converter(kind: Map, cql_json: Converter | None, blob_parts: BlobParts | None = None) -> Converter:
    key = compile_kind(kind.key, cql_json, blob_parts)
    val = compile_kind(kind.value, cql_json, blob_parts)

    def convert(value: Any) -> Any:
        if value is None:
            return None
        items = value.items() if isinstance(value, Mapping) else value  # pairs, read back from Arrow
        return [(key(k), val(v)) for k, v in items]

    return convert


#: The integers each integer leaf holds (a type given to a payload's values meets others).
_INT_RANGES = {"int8": 2**7, "int16": 2**15, "int32": 2**31, "int64": 2**63}
#: The largest finite float32: a double past it would be written as an infinity.
_FLOAT32_MAX = 3.4028234663852886e38


def _leaf_converter(name: str, cql_json: Converter | None) -> Converter:
    """A CQL leaf's converter; the leaves a schema may give a payload's values (integers,
    float32, binary) check what they take, raising Misfit for another value."""
    if name in _INT_RANGES:
        bound = _INT_RANGES[name]

        def integer(value: Any) -> Any:
            if value is None:
                return None
            if isinstance(value, int) and not isinstance(value, bool) and -bound <= value < bound:
                return int(value)
            raise Misfit
        return integer
    if name in ("float32", "float64"):
        limit = _FLOAT32_MAX if name == "float32" else math.inf

        def number(value: Any) -> Any:
            if value is None:
                return None
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                taken = float(value)
                if abs(taken) <= limit or taken - taken != 0:  # NaN and the infinities are floats
                    return taken
            raise Misfit
        return number
    if name == "bool":
        return _bool
    if name == "inet":
        def address(value: Any) -> Any:
            return None if value is None else str(value)
        return address
    if name == "string":
        return _str
    if name == "uuid":
        def uuid_bytes(value: Any) -> Any:
            if value is None or isinstance(value, bytes):
                return value
            return value.bytes
        return uuid_bytes
    if name == "binary":
        def stored(value: Any) -> Any:
            if value is None:
                return None
            if isinstance(value, (bytes, bytearray, memoryview)):
                return bytes(value)
            raise Misfit
        return stored
    if name == "timestamp":
        return timestamp_millis
    if name == "date":
        return date_days
    if name == "time":
        return time_nanos
    if name == "duration":
        return duration_parts
    # cql_json: the JSON writer's spelling (a value read back from Arrow is text already)
    spell = cql_json or json_text

    def as_json(value: Any) -> Any:
        if value is None or isinstance(value, str):
            return value
        return spell(value)

    return as_json


def timestamp_millis(value: Any) -> Any:
    """Milliseconds since the epoch, exactly: a datetime (naive is UTC, as the driver gives), or
    the integer cqlsh gives for a timestamp past datetime's range."""
    if value is None:
        return None
    if isinstance(value, datetime.datetime):
        epoch = _EPOCH if value.tzinfo is None else _EPOCH_UTC
        return (value - epoch) // datetime.timedelta(milliseconds=1)
    return int(value)


def date_days(value: Any) -> Any:
    """Days since the epoch: the driver's Date (any CQL date, past datetime's range too) or a date."""
    if value is None:
        return None
    days = getattr(value, "days_from_epoch", None)
    if days is not None:
        return int(days)
    if isinstance(value, datetime.datetime):
        value = value.date()
    if isinstance(value, datetime.date):
        return (value - _EPOCH_DATE).days
    return int(value)


def time_nanos(value: Any) -> Any:
    """Nanoseconds since midnight: the driver's Time, or a time of day."""
    if value is None:
        return None
    nanos = getattr(value, "nanosecond_time", None)
    if nanos is not None:
        return int(nanos)
    if isinstance(value, datetime.time):
        seconds = value.hour * 3600 + value.minute * 60 + value.second
        return seconds * 1_000_000_000 + value.microsecond * 1000
    return int(value)


def duration_parts(value: Any) -> Any:
    if value is None:
        return None
    if isinstance(value, Mapping):
        return dict(value)
    return {"months": int(value.months), "days": int(value.days), "nanoseconds": int(value.nanoseconds)}
