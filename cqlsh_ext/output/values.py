"""One CQL value as JSON text or as a CSV field, the way a script expects it: one spelling class per
machine output format (`JsonSpelling`, `CsvSpelling`), both on `BlobObjects`, a blob decoded the way
the table display decodes it, as a plain object any writer can spell.

JSON: numbers are numbers (decimal and varint keep every digit), timestamps ISO-8601 in UTC,
UUIDs, inet, date and time strings, collections arrays, maps and UDTs objects. A blob that decodes
becomes an object {"codec", "kind", "payload", ...}; the payload is embedded as JSON when it is a JSON
object or array. Blobs that do not decode stay "0x..." strings, as cqlsh prints them.
CSV: the same values as text; a decoded blob is its text, collections are their JSON text.

JSON is produced as text rather than through json.dumps of Python objects so that decimals and
huge varints are written exactly, without a float round trip; how each kind of value is spelled
(bytes, timestamps, floats, NaN) is cqlsh_ext.common.jsonenc's, shared with every other JSON we write,
the decoded records embedded here included.
"""

from __future__ import annotations

import datetime
import decimal
import json
import re
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from cassandra import cqltypes, util

from cqlsh_ext.common.jsonenc import blob_text, duration_text, float_text, time_text
from cqlsh_ext.common.jsonenc import string as _string
from cqlsh_ext.output.place import ValuePlace
from cqlsh_ext.payload.budget import Budget
from cqlsh_ext.payload.spec import ColumnSpecs
from cqlsh_ext.settings import NONE, DisplaySettings

if TYPE_CHECKING:
    from cqlsh_ext.payload.unwrap import BlobView

STRING_TYPES = frozenset({"text", "varchar", "ascii"})
INTEGER_TYPES = frozenset({"int", "bigint", "varint", "smallint", "tinyint", "counter"})
SEQUENCE_TYPES = frozenset({"list", "set", "tuple"})


def _typename(cqltype: Any) -> str | None:
    if cqltype is None:
        return None
    if isinstance(cqltype, type) and issubclass(cqltype, cqltypes.UserType):
        return "udt"
    if isinstance(cqltype, type) and issubclass(cqltype, cqltypes.VectorType):
        return "vector"
    return getattr(cqltype, "typename", None)


class BlobObjects:
    """A result's blobs decoded according to the display settings, as plain objects (dict or
    the '0x...' string): what every machine format writes, each in its own spelling."""

    def __init__(self, settings: DisplaySettings) -> None:
        self.mode = settings.mode
        self.cap = settings.cap
        self.raw = settings.raw_blobs
        self.spec_for = ColumnSpecs(settings.columns)

    def _view(self, value: bytes, place: ValuePlace | None) -> BlobView:
        """The blob decoded as the table display decodes it: by its column's setting, if any."""
        from cqlsh_ext.payload.unwrap import unwrap, unwrap_spec

        spec = self.spec_for(place)
        return unwrap(value, self.mode, self.cap) if spec is None else unwrap_spec(value, spec, self.cap)

    def blob_object(self, value: bytes, place: ValuePlace | None = None) -> dict[str, Any] | str:
        """A decoded blob as a dict, or the '0x...' string when it is in no known format; one that
        looks like a format but does not decode is {"kind": "undecoded", "payload": "0x...",
        "note": why}.

        With kind 'json' the payload is kept as (single-line) JSON text, to be embedded verbatim.
        """
        hexed = blob_text(value)
        if self.mode == NONE or not value:
            return hexed
        from cqlsh_ext.payload.unwrap import failed

        try:
            return self._blob_object(value, place, hexed)
        except Exception as err:  # the last-resort boundary: this value says why, the row goes on
            return self._undecoded(failed(value, err), hexed)

    def _undecoded(self, view: BlobView, hexed: str) -> dict[str, Any] | str:
        if view.quiet:
            return hexed
        return {"codec": None, "kind": "undecoded", "payload": hexed, "note": view.reason}

    def _blob_object(self, value: bytes, place: ValuePlace | None, hexed: str) -> dict[str, Any] | str:
        from cqlsh_ext.payload.unwrap import BINARY, RAW, STRUCTURED, TEXT, TEXT_LABEL

        view = self._view(value, place)
        if view.kind == RAW:
            return self._undecoded(view, hexed)
        cut: str | None = None
        # A value stored as plain text has no codec: its one layer is the "text" reading.
        codec = ">".join(layer.label for layer in view.layers if layer.label != TEXT_LABEL)
        obj: dict[str, Any] = {"codec": codec or None}
        if view.kind == TEXT:
            text = view.text or ""
            parsed = _json_container(text)
            obj["kind"] = "json" if parsed is not None else "text"
            obj["payload"] = text if parsed is None else parsed
        elif view.kind == STRUCTURED:
            from cqlsh_ext.payload.formats.tree import jsonable_cut

            obj["kind"] = view.payload_format
            obj["payload"], cut = jsonable_cut(view.tree, Budget.for_cap(self.cap))
        elif view.kind == BINARY:
            obj["kind"] = "binary"
            obj["payload"] = blob_text(view.data)
        else:  # STREAM_OBJECT: '<format>-object', its class in '<format>_class'
            obj["kind"] = f"{view.payload_format}-object"
            obj["payload"] = None
            obj[f"{view.payload_format}_class"] = view.text
        truncated = view.truncated_layer
        if truncated is not None:
            obj["truncated"] = True
            if truncated.declared_size:
                obj["size"] = truncated.declared_size
        if view.reason:
            obj["note"] = view.reason
        if cut:
            obj["cut"] = cut
        if self.raw:
            obj["raw"] = hexed
        return obj


class JsonSpelling(BlobObjects):
    """Values of one result as JSON text (JSON Lines)."""

    def value(self, value: Any, cqltype: Any = None, place: ValuePlace | None = None) -> str:
        """`place`: where the value sits (column settings apply to blobs by it)."""
        if value is None or isinstance(value, cqltypes.EmptyValue):
            return "null"
        name = _typename(cqltype)
        handler = self._json_by_type.get(name or "")
        if handler is not None:
            return handler(self, value, cqltype, place)
        return self._json_by_value(value, place)

    def _json_by_value(self, value: Any, place: ValuePlace | None) -> str:
        """Values whose column type is unknown or custom: go by the Python type."""
        if isinstance(value, bool):
            return "true" if value else "false"
        if isinstance(value, int):
            return str(value)
        if isinstance(value, float):
            return float_text(value)
        if isinstance(value, decimal.Decimal):
            return self._decimal(value, None)
        if isinstance(value, (bytes, bytearray, memoryview)):
            return self._blob(bytes(value), place)
        if isinstance(value, datetime.datetime):
            return _string(time_text(value, millis=True))
        if isinstance(value, util.Duration):
            return _string(duration_text(value))
        if isinstance(value, Mapping):
            return self._map_items(value.items(), None, None, place)
        if isinstance(value, (list, tuple, set, frozenset, util.SortedSet)):
            item = _child(place, "item")
            return "[" + ", ".join(self.value(v, None, item) for v in value) + "]"
        return _string(str(value))

    def _boolean(self, value: Any, _: Any, __: Any = None) -> str:
        return "true" if value else "false"

    def _integer(self, value: Any, _: Any, __: Any = None) -> str:
        return str(int(value))

    def _float(self, value: Any, cqltype: Any, _: Any = None) -> str:
        return float_text(float(value), single=_typename(cqltype) == "float")

    def _decimal(self, value: Any, _: Any, __: Any = None) -> str:
        if not value.is_finite():
            return _string(str(value))
        return str(value)

    def _text(self, value: Any, _: Any, __: Any = None) -> str:
        return _string(str(value))

    def _timestamp(self, value: Any, _: Any, __: Any = None) -> str:
        if isinstance(value, datetime.datetime):
            return _string(time_text(value, millis=True))
        # cqlsh's fallback for timestamps beyond Python's datetime: milliseconds since the epoch.
        return str(int(value))

    def _duration(self, value: Any, _: Any, __: Any = None) -> str:
        return _string(duration_text(value))

    def _sequence(self, value: Any, cqltype: Any, place: ValuePlace | None) -> str:
        items = list(value)
        subtypes = list(getattr(cqltype, "subtypes", ()) or ())
        if len(subtypes) == 1:
            subtypes = subtypes * len(items)
        elif len(subtypes) != len(items):
            subtypes = [None] * len(items)
        # A tuple's items are placed by position, a list's or set's all as "item".
        steps = ([str(i) for i in range(len(items))] if _typename(cqltype) == "tuple"
                 else ["item"] * len(items))
        return "[" + ", ".join(self.value(v, t, _child(place, step))
                               for v, t, step in zip(items, subtypes, steps, strict=True)) + "]"

    def _vector(self, value: Any, cqltype: Any, place: ValuePlace | None) -> str:
        subtype = getattr(cqltype, "subtype", None)
        item = _child(place, "item")
        return "[" + ", ".join(self.value(v, subtype, item) for v in value) + "]"

    def _map(self, value: Any, cqltype: Any, place: ValuePlace | None) -> str:
        subtypes = tuple(getattr(cqltype, "subtypes", ()) or ()) + (None, None)
        return self._map_items(value.items(), subtypes[0], subtypes[1], place)

    def _map_items(self, items: Any, key_type: Any, value_type: Any, place: ValuePlace | None) -> str:
        parts = []
        key_place, value_place = _child(place, "key"), _child(place, "value")
        for key, val in items:
            key_json = self.value(key, key_type, key_place)
            # JSON keys are strings: a key that encodes as a string is used as is, any other
            # (numbers, tuples, ...) as its JSON text, which is how Cassandra's toJson() does it.
            key_text = json.loads(key_json) if key_json.startswith('"') else key_json
            parts.append(f"{_string(key_text)}: {self.value(val, value_type, value_place)}")
        return "{" + ", ".join(parts) + "}"

    def _udt(self, value: Any, cqltype: Any, place: ValuePlace | None) -> str:
        names = list(cqltype.fieldnames)
        types = list(cqltype.subtypes)
        if isinstance(value, tuple):
            values = list(value)
        else:
            values = [getattr(value, n, None) for n in names]
        return "{" + ", ".join(f"{_string(n)}: {self.value(v, t, _child(place, n))}"
                               for n, v, t in zip(names, values, types, strict=False)) + "}"

    def _blob_json(self, value: Any, _: Any, place: ValuePlace | None) -> str:
        return self._blob(bytes(value), place)

    _json_by_type: dict[str, Callable[[JsonSpelling, Any, Any, Any], str]] = {
        "boolean": _boolean,
        **dict.fromkeys(INTEGER_TYPES, _integer),
        "float": _float,
        "double": _float,
        "decimal": _decimal,
        **dict.fromkeys(STRING_TYPES, _text),
        "timestamp": _timestamp,
        "duration": _duration,
        **dict.fromkeys(SEQUENCE_TYPES, _sequence),
        "vector": _vector,
        "map": _map,
        "udt": _udt,
        "blob": _blob_json,
    }

    def _blob(self, value: bytes, place: ValuePlace | None) -> str:
        obj = self.blob_object(value, place)
        if isinstance(obj, str):
            return _string(obj)
        parts = []
        for key, val in obj.items():
            if key == "payload" and obj["kind"] == "json":
                text = val  # already JSON text, embedded unchanged
            else:
                text = json.dumps(val, ensure_ascii=False)
            parts.append(f"{_string(key)}: {text}")
        return "{" + ", ".join(parts) + "}"


class CsvSpelling(BlobObjects):
    """Values of one result as CSV fields."""

    def __init__(self, settings: DisplaySettings) -> None:
        super().__init__(settings)
        #: Collections, UDTs and other values without a text form of their own are their JSON text.
        self.json = JsonSpelling(settings)

    def value(self, value: Any, cqltype: Any = None, place: ValuePlace | None = None) -> str:
        """A CSV field: plain text for scalars, JSON text for collections and UDTs."""
        if value is None or isinstance(value, cqltypes.EmptyValue):
            return ""
        name = _typename(cqltype)
        if name == "blob" or (name is None and isinstance(value, (bytes, bytearray))):
            return self._blob_csv(bytes(value), place)
        if name in STRING_TYPES or (name is None and isinstance(value, str)):
            return str(value)
        text = self.json.value(value, cqltype, place)
        if text.startswith('"'):
            return str(json.loads(text))  # strings (timestamps, uuids, ...) without JSON quotes
        return text

    def _blob_csv(self, value: bytes, place: ValuePlace | None) -> str:
        hexed = blob_text(value)
        if self.raw or self.mode == NONE or not value:
            return hexed
        from cqlsh_ext.payload.unwrap import RAW, STRUCTURED, TEXT, failed

        try:
            view = self._view(value, place)
            if view.kind == STRUCTURED:
                from cqlsh_ext.payload.formats.tree import jsonable

                return json.dumps(jsonable(view.tree, Budget.for_cap(self.cap)), ensure_ascii=False)
        except Exception as err:  # the last-resort boundary, as in the table
            view = failed(value, err)
        if view.kind == TEXT:
            return view.text or ""
        if view.kind == RAW:
            # As the table shows it: a value that looks like a format but does not decode says why.
            return hexed if view.quiet else f"{hexed} ({view.reason})"
        return blob_text(view.data) if view.data else str(view.text)


_JSON_STRING_OR_SPACE = re.compile(r'("(?:[^"\\]|\\.)*")|\s+')


def _json_container(text: str) -> str | None:
    """`text` without insignificant whitespace when it is a JSON object or array, else None.

    Embedded as is otherwise, so numbers keep their exact spelling; dropping the whitespace
    between tokens also puts the document on one line, as JSON Lines needs.
    """
    from cqlsh_ext.payload.unwrap import json_container  # loaded with the first blob, like unwrap

    stripped = text.strip()
    if json_container(stripped) is None:
        return None
    return _JSON_STRING_OR_SPACE.sub(lambda m: m.group(1) or "", stripped)


def _child(place: ValuePlace | None, step: str) -> ValuePlace | None:
    return None if place is None else place.child(step)


def column_types(result: Any) -> list[Any]:
    types = list(getattr(result, "column_types", None) or [])
    names = list(getattr(result, "column_names", None) or [])
    return types if len(types) == len(names) else [None] * len(names)


__all__ = ["BlobObjects", "CsvSpelling", "JsonSpelling", "column_types"]
