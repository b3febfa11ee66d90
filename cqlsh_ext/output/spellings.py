"""One CQL value as JSON text or as a CSV field, the way a script expects it: one spelling class per
machine output format (`JsonSpelling`, `CsvSpelling`), both reading a blob's view (payload.view)
from the value engine, as the table display does (`Blobs`).

JSON: numbers are numbers (decimal and varint keep every digit), timestamps ISO-8601 in UTC,
UUIDs, inet, date and time strings, collections arrays, maps and UDTs objects. A blob that decodes
becomes an object {"label", "kind", "payload", ...} in the view's words (docs/formats.md, "What a
value is"); the payload is embedded as JSON when it is a JSON object or array. A value in no known
format stays the "0x..." string cqlsh prints.
CSV: the same values as text; a decoded blob is its text, collections are their JSON text.

JSON is produced as text rather than through json.dumps of Python objects so that decimals and
huge varints are written exactly, without a float round trip; how each kind of value is spelled
(bytes, timestamps, floats, NaN) is cqlsh_ext.common.jsonenc's, shared with every other JSON we write,
the decoded records embedded here included.
"""

from __future__ import annotations

import copy
import datetime
import decimal
import functools
import json
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from cassandra import cqltypes, util

from cqlsh_ext.common.jsonenc import (
    blob_text,
    duration_text,
    float32_text,
    float_name,
    float_text,
    key_text,
    line_safe,
    strings,
    time_text,
)
from cqlsh_ext.common.jsonenc import string as _string
from cqlsh_ext.common.long_int import LongInt, integer_text
from cqlsh_ext.output.row_limit import VALUES
from cqlsh_ext.payload.budget import Budget
from cqlsh_ext.payload.columns import cut_text
from cqlsh_ext.payload.confidence import confidence_of, view_confidence
from cqlsh_ext.payload.places import ValuePlace
from cqlsh_ext.payload.view import BINARY, FAILED, JSON_PAST_BUDGET, RECORD, TEXT, UNKNOWN, BlobView
from cqlsh_ext.settings import NONE, DisplaySettings

#: Every key of a decoded blob's JSON object, as JsonSpelling spells it (its text and its tree):
#: a reader that must know a blob's object from a payload's (MCP's redaction) asks this, so a part
#: added here (confidence was) is known there too.
BLOB_OBJECT_KEYS = frozenset({"label", "kind", "confidence", "class", "payload", "cut", "size", "note",
                              "raw"})

if TYPE_CHECKING:
    from cqlsh_ext.payload.columns import BlobReading
    from cqlsh_ext.payload.places import Engines

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


class Blobs:
    """A result's blobs as the display decodes them (the session's mode and cap, the column
    settings by place): each value's view from the value engine, or None when decoding is off."""

    def __init__(self, settings: DisplaySettings) -> None:
        from cqlsh_ext.payload.places import Engines

        self.mode = settings.mode
        self.cap = settings.cap
        self.raw = settings.raw_blobs
        self.engines: Engines = Engines(settings.decoding())

    def view(self, value: bytes | bytearray | memoryview | BlobView,
             place: ValuePlace | None = None) -> BlobView | None:
        """The blob's view (a view handed in already decoded is taken as it is); None with
        decoding off (-d none) or for an empty value, which are their hex."""
        if isinstance(value, BlobView):
            return value
        if self.mode == NONE or not value:
            return None
        return self.engines(place).view(bytes(value))

    def chosen_rows(self, rows: Iterable[Sequence[Any]], names: Sequence[str],
                    places: Sequence[ValuePlace | None]) -> Iterable[Sequence[Any]]:
        """`rows` with the blobs whose chain a sibling column picks (payload.sibling) read beside
        their row, as views (value() takes a view as it is); the rows as they are when no column
        has such a setting."""
        if self.mode == NONE:
            return rows
        from cqlsh_ext.payload.places import sibling_index
        from cqlsh_ext.payload.sibling import Chosen

        picked = []
        for at, place in enumerate(places):
            column = self.engines.sibling(place) if place is not None else None
            by = sibling_index(column, names) if column is not None else None
            if by is not None:
                picked.append((at, by, self.engines(place)))
        if not picked:
            return rows
        out = []
        for row in rows:
            row = list(row)
            for at, by, engine in picked:
                value = row[at]
                if isinstance(value, (bytes, bytearray, memoryview)) and value:
                    row[at] = engine.view(Chosen(bytes(value), row[by]))
            out.append(row)
        return out

    @staticmethod
    def stored(value: bytes | bytearray | memoryview | BlobView) -> bytes:
        return value.stored if isinstance(value, BlobView) else bytes(value)


class JsonSpelling(Blobs):
    """Values of one result as JSON text (JSON Lines)."""

    def value(self, value: Any, cqltype: Any = None, place: ValuePlace | None = None) -> str:
        """`place`: where the value sits (column settings apply to blobs by it)."""
        if value is None or isinstance(value, cqltypes.EmptyValue):
            return "null"
        handler = self._by_type.get(_typename(cqltype) or "")
        spelt: str = handler(self, value, cqltype, place, False) if handler is not None \
            else self._by_value(value, place, False)
        return spelt

    def tree(self, value: Any, cqltype: Any = None, place: ValuePlace | None = None) -> Any:
        """value() as the JSON value its text is (json.loads(value(...))), without the text: for a
        reader that takes JSON values rather than text (cqlsh-ext mcp's answers, screened and
        measured before the SDK writes them; tests/mcp_server/test_pieces.py holds the two
        spellings to one JSON). Each handler below spells both (`tree`)."""
        if value is None or isinstance(value, cqltypes.EmptyValue):
            return None
        handler = self._by_type.get(_typename(cqltype) or "")
        if handler is not None:
            return handler(self, value, cqltype, place, True)
        return self._by_value(value, place, True)

    def _by_value(self, value: Any, place: ValuePlace | None, tree: bool) -> Any:
        """value() (or, `tree`, tree()) of a value whose column type is unknown or custom: by its
        Python type, spelt as the CQL type the driver makes such values of spells it."""
        if isinstance(value, int) and not isinstance(value, bool):
            if tree:
                return value if isinstance(value, LongInt) else int(value)  # a LongInt keeps its digits
            return integer_text(value)
        name = ("boolean" if isinstance(value, bool) else "double" if isinstance(value, float)
                else "decimal" if isinstance(value, decimal.Decimal)
                else "blob" if isinstance(value, (bytes, bytearray, memoryview, BlobView))
                else "timestamp" if isinstance(value, datetime.datetime)
                else "duration" if isinstance(value, util.Duration) else "map" if isinstance(value, Mapping)
                else "list" if isinstance(value, (list, tuple, set, frozenset, util.SortedSet)) else "text")
        return self._by_type[name](self, value, None, place, tree)

    def _boolean(self, value: Any, _: Any, __: Any, tree: bool) -> Any:
        return bool(value) if tree else "true" if value else "false"

    def _integer(self, value: Any, _: Any, __: Any, tree: bool) -> Any:
        return int(value) if tree else integer_text(int(value))

    def _float(self, value: Any, cqltype: Any, _: Any, tree: bool) -> Any:
        single = _typename(cqltype) == "float"
        return _float_tree(float(value), single) if tree else float_text(float(value), single=single)

    def _decimal(self, value: Any, _: Any, __: Any, tree: bool) -> Any:
        if tree:
            return _decimal_tree(value)
        return str(value) if value.is_finite() else _string(str(value))

    def _text(self, value: Any, _: Any, __: Any, tree: bool) -> Any:
        return str(value) if tree else _string(str(value))

    def _timestamp(self, value: Any, _: Any, __: Any, tree: bool) -> Any:
        if isinstance(value, datetime.datetime):
            text = time_text(value, millis=True)
            return text if tree else _string(text)
        # cqlsh's fallback for timestamps beyond Python's datetime: milliseconds since the epoch.
        return int(value) if tree else str(int(value))

    def _duration(self, value: Any, _: Any, __: Any, tree: bool) -> Any:
        return duration_text(value) if tree else _string(duration_text(value))

    def _array(self, items: Iterable[tuple[Any, Any, ValuePlace | None]], tree: bool) -> Any:
        """(value, CQL type, place) items as a JSON array."""
        if tree:
            return [self.tree(v, t, p) for v, t, p in items]
        return "[" + ", ".join(self.value(v, t, p) for v, t, p in items) + "]"

    def _sequence(self, value: Any, cqltype: Any, place: ValuePlace | None, tree: bool) -> Any:
        return self._array(_sequence_items(value, cqltype, place), tree)

    def _vector(self, value: Any, cqltype: Any, place: ValuePlace | None, tree: bool) -> Any:
        subtype, item = getattr(cqltype, "subtype", None), _child(place, "item")
        return self._array([(v, subtype, item) for v in value], tree)

    def _map(self, value: Any, cqltype: Any, place: ValuePlace | None, tree: bool) -> Any:
        key_type, value_type = _map_types(cqltype)
        key_place, value_place = _child(place, "key"), _child(place, "value")
        keys = self._keys
        if tree:
            out: dict[str, Any] = {}
            for key, val in value.items():
                key_tree = keys.tree(key, key_type, key_place)
                # A key that is a string is itself; any other is its JSON text (as the text's is).
                name = key_tree if isinstance(key_tree, str) else keys.value(key, key_type, key_place)
                out[name] = self.tree(val, value_type, value_place)
            return out
        parts = []
        for key, val in value.items():
            key_json = keys.value(key, key_type, key_place)
            # JSON keys are strings: a key that encodes as a string is used as is, any other
            # (numbers, tuples, ...) as its JSON text, which is how Cassandra's toJson() does it.
            key_text = json.loads(key_json) if key_json.startswith('"') else key_json
            parts.append(f"{_string(key_text)}: {self.value(val, value_type, value_place)}")
        return "{" + ", ".join(parts) + "}"

    @functools.cached_property
    def _keys(self) -> JsonSpelling:
        """The spelling of a map's keys: this one with each blob's stored bytes (`raw`) beside
        what it decodes to, so no two keys of a map spell alike (a JSON object keeps one value a
        key): the same document in gzip twice, the headers' times apart, is two keys."""
        if self.raw:
            return self
        keys = copy.copy(self)
        keys.raw = True
        return keys

    def _udt(self, value: Any, cqltype: Any, place: ValuePlace | None, tree: bool) -> Any:
        fields = _udt_fields(value, cqltype, place)
        if tree:
            return {n: self.tree(v, t, p) for n, v, t, p in fields}
        return "{" + ", ".join(f"{_string(n)}: {self.value(v, t, p)}" for n, v, t, p in fields) + "}"

    def _blob(self, value: Any, _: Any, place: ValuePlace | None, tree: bool) -> Any:
        """A blob: its "0x..." when it is in no known format (or decoding is off), else the object
        of its view: label, kind, payload, and why (note, cut) when there is something to say."""
        return self._blob_spelt(value, place, not tree)

    _by_type: dict[str, Callable[[JsonSpelling, Any, Any, Any, bool], Any]] = {
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
        "blob": _blob,
    }

    def _blob_spelt(self, value: Any, place: ValuePlace | None, text: bool) -> Any:
        """_blob's text (`text`, its views counted), or the JSON value it is (tree())."""
        from cqlsh_ext.payload.unwrap import failed

        stored = self.stored(value)
        try:
            view = self.view(value, place)
            if text and view is not None:
                VALUES.count(view.kind)
            if view is None or (view.kind == UNKNOWN and view.quiet):
                return _string(blob_text(stored)) if text else blob_text(stored)
            return self._view_spelt(view, stored, text)
        except Exception as err:  # the last-resort boundary: this value says why, the row goes on
            if text:
                VALUES.count(FAILED)
            return self._view_spelt(failed(stored, err), stored, text)

    def column(self, values: Iterable[Any], cqltype: Any, place: ValuePlace | None) -> list[str]:
        """value() of each of one column's values (one CQL type, one place): the type's spelling
        looked up once, its common values (an int of an integer type, a str of a text type) spelt
        here as value() spells them."""
        exact = self.common_type(cqltype)
        if exact is None:
            return [self.value(v, cqltype, place) for v in values]
        spell: Callable[[Any], str] = str if exact is int else _string
        values = values if isinstance(values, list) else list(values)
        if set(map(type, values)) == {exact}:  # all common (no null): spelt in C, no Python step a value
            try:
                return list(map(spell, values)) if exact is int else strings(values)
            except ValueError:  # a varint past Python's digit limit: integer_text spells it, or says why not
                pass
        if exact is int:
            spell = integer_text
        value = self.value
        return [spell(v) if type(v) is exact else value(v, cqltype, place) for v in values]

    @staticmethod
    def common_type(cqltype: Any) -> type | None:
        """The Python type of a CQL type's common values, spelt by str() (int, an integer type's)
        or as a JSON string (str, a text type's) in value() and in tree(); None for other types."""
        name = _typename(cqltype)
        return int if name in INTEGER_TYPES else str if name in STRING_TYPES else None

    def found_column(self, values: Iterable[Any], other: Callable[[Any], str]) -> list[str]:
        """value() of each of one column's values a path found or an aggregate computed (no CQL
        type): the scalars spelt by their exact type here, as value() spells them; the others by
        `other` (render.json_lines: value() of their machine_value)."""
        by_type = _FOUND_SPELLINGS
        return [spell(v) if (spell := by_type.get(type(v))) is not None else other(v) for v in values]

    def found_value(self, value: Any, other: Callable[[Any], str]) -> str:
        """found_column() of one value."""
        spell = _FOUND_SPELLINGS.get(type(value))
        return spell(value) if spell is not None else other(value)

    @staticmethod
    def blob_head(label: str, kind: str, compact: bool = False) -> str:
        """What _view_spelt writes before a decoded payload (label, kind, confidence): the native
        core writes the payload's text after it (payload.columns.json_lines); its rows are
        auto-detected, their confidence their label's and kind's. `compact`: without spaces, as
        an MCP answer spells _view_spelt's object (render.json_lines.JsonRows.answer_rows)."""
        sure = confidence_of(label, kind)
        sep, colon = (",", ":") if compact else (", ", ": ")
        head = f'{{"label"{colon}{_string(label)}{sep}"kind"{colon}{_string(kind)}{sep}'
        return head + (f'"confidence"{colon}{_string(sure)}{sep}"payload"{colon}' if sure else
                       f'"payload"{colon}')

    #: What _view_spelt writes after a payload; raw's before and after the hex; no known
    #: format's; a null blob (payload.columns.JsonSpelt.texts); and the same without spaces.
    BLOB_TEXTS = ("}", ', "raw": "0x', '"}', '"0x', '"', "null")
    COMPACT_BLOB_TEXTS = ("}", ',"raw":"0x', '"}', '"0x', '"', "null")

    def _view_spelt(self, view: BlobView, stored: bytes, text: bool) -> Any:
        """A view's object (BLOB_OBJECT_KEYS): as JSON text (`text`: a JSON text's payload embedded
        as stored, minified, so its numbers keep their spelling), else as the JSON value that text is."""
        out: dict[str, Any] = {}
        kind = view.kind
        if kind != UNKNOWN and kind != FAILED:
            out["label"] = view.label
        out["kind"] = kind
        sure = view_confidence(view)
        if sure is not None:
            out["confidence"] = sure
        cut: str | None = None
        if kind == TEXT:
            if not text:  # (a JSON text's tree is as json.loads reads it already: string keys, lists)
                out["payload"] = view.tree if view.tree is not None else (view.text or "")
            else:
                out["payload"] = _JsonText(_minified(view)) if view.tree is not None else view.text or ""
        elif kind == RECORD:
            from cqlsh_ext.payload.formats.tree import jsonable_cut

            tree, cut = jsonable_cut(view.record, Budget.for_cap(self.cap))
            out["payload"] = (_JsonText(line_safe(json.dumps(tree, ensure_ascii=False))) if text
                              else _as_loaded(tree))
        elif kind == BINARY:
            if view.object_class is not None:  # an object its stream's reader could not read
                out["payload"] = None
                out["class"] = view.object_class
            else:
                out["payload"] = blob_text(view.data)
        else:
            out["payload"] = blob_text(stored)
        truncated = view.truncated_layer
        if truncated is not None:
            out["cut"] = cut_text(view)
            if truncated.declared_size:
                out["size"] = int(truncated.declared_size)
        elif cut:
            out["cut"] = cut
        if view.reason:
            out["note"] = view.reason
        elif kind == TEXT and view.tree is None and (past := view.json_past_budget) is not None:
            out["note"] = JSON_PAST_BUDGET.format(past)
        if self.raw:
            out["raw"] = blob_text(stored)
        if not text:
            return out
        return "{" + ", ".join(f"{_string(key)}: {field if type(field) is _JsonText else _string(field)}"
                               for key, field in out.items()) + "}"


def _float_tree(value: float, single: bool) -> Any:
    """float_text's number as JSON reads it back (NaN and the infinities: their names)."""
    name = float_name(value)
    if name is not None:
        return name
    return float(float32_text(value)) if single else value


def _decimal_tree(value: decimal.Decimal) -> Any:
    """A decimal's text (_decimal) as JSON reads it, where that loses nothing: a whole number an
    int; a float where the float's own text is the same number (737.26, 1.50 as 1.5, -1E-26);
    else the exact text as a string ("12345678901234567890.123"), not the float nearest it."""
    if not value.is_finite():
        return str(value)
    text = str(value)
    if not any(c in text for c in ".eE"):
        return int(text)
    near = float(text)
    return near if float_name(near) is None and decimal.Decimal(repr(near)) == value else text


class _JsonText(str):
    """A blob object's field that is JSON text already (a payload embedded as it is)."""


def _as_loaded(tree: Any) -> Any:
    """A payload's tree as json.loads reads back its JSON text: arrays lists, object keys strings
    (as json.dumps writes a key that is not one), the rest as it is."""
    if isinstance(tree, dict):
        return {key_text(k): _as_loaded(v) for k, v in tree.items()}
    if isinstance(tree, (list, tuple)):
        return [_as_loaded(v) for v in tree]
    return tree


class CsvSpelling(Blobs):
    """Values of one result as CSV fields."""

    def __init__(self, settings: DisplaySettings) -> None:
        super().__init__(settings)
        #: Collections, UDTs and other values without a text form of their own are their JSON text.
        self.json = JsonSpelling(settings)
        #: The values cut at the output cap (a field holds no word of it: the writer says them once
        #: the result ends), and why the first was.
        self.cuts = 0
        self.first_cut = ""

    def _cut(self, why: str) -> None:
        self.cuts += 1
        self.first_cut = self.first_cut or why

    def value(self, value: Any, cqltype: Any = None, place: ValuePlace | None = None) -> str:
        """A CSV field: plain text for scalars, JSON text for collections and UDTs."""
        if value is None or isinstance(value, cqltypes.EmptyValue):
            return ""
        name = _typename(cqltype)
        if name == "blob" or (name is None and isinstance(value, (bytes, bytearray, BlobView))):
            return self._blob_csv(value, place)
        if name in STRING_TYPES or (name is None and isinstance(value, str)):
            return str(value)
        text = self.json.value(value, cqltype, place)
        if text.startswith('"'):
            return str(json.loads(text))  # strings (timestamps, uuids, ...) without JSON quotes
        return text

    def _blob_csv(self, value: bytes | BlobView, place: ValuePlace | None) -> str:
        stored = self.stored(value)
        hexed = blob_text(stored)
        if self.raw:
            return hexed
        from cqlsh_ext.payload.unwrap import failed

        try:
            view = self.view(value, place)
            if view is None:
                return hexed
            VALUES.count(view.kind)
            if view.truncated_layer is not None:
                self._cut(cut_text(view))
            if view.kind == RECORD:
                from cqlsh_ext.payload.formats.tree import jsonable_cut

                tree, cut = jsonable_cut(view.record, Budget.for_cap(self.cap))
                if cut and view.truncated_layer is None:
                    self._cut(cut)
                return line_safe(json.dumps(tree, ensure_ascii=False))
        except Exception as err:  # the last-resort boundary, as in the table
            view = failed(stored, err)
            VALUES.count(FAILED)
        if view.kind == TEXT:
            return view.text or ""
        if view.kind == UNKNOWN or view.kind == FAILED:
            # As the table shows it: a value that looks like a format but does not decode says why.
            return hexed if view.quiet else f"{hexed} ({view.reason})"
        return str(view.object_class) if view.object_class is not None else blob_text(view.data)


_JSON_STRING_OR_SPACE = re.compile(r'("(?:[^"\\]|\\.)*")|\s+')


#: found_column's spellings of a path's scalar values by their exact type: value()'s for them.
_FOUND_SPELLINGS: dict[type, Callable[[Any], str]] = {
    str: _string,
    int: str,
    float: float_text,
    bool: lambda flag: "true" if flag else "false",
    type(None): lambda _: "null",
}


def _minified(view: BlobView) -> str:
    """A text view's JSON (an object or array: view.tree is not None) without insignificant
    whitespace: embedded as stored, so numbers keep their exact spelling, and on one line, as JSON
    Lines needs (its strings' U+2028 and the like escaped: jsonenc.line_safe). Not parsed again:
    the view holds its tree."""
    return line_safe(_JSON_STRING_OR_SPACE.sub(lambda m: m.group(1) or "", (view.text or "").strip()))


def blob_reading(settings: DisplaySettings) -> BlobReading:
    """How a renderer of columns reads an answer's blobs in these settings (payload.columns): the
    session's decoding, the stored bytes kept with --raw-blobs, a blob inside a collection spelt
    as the JSON writer spells it."""
    from cqlsh_ext.payload.columns import BlobReading

    return BlobReading(settings.decoding(), settings.raw_blobs, JsonSpelling(settings).value)


def _sequence_items(value: Any, cqltype: Any, place: ValuePlace | None
                    ) -> list[tuple[Any, Any, ValuePlace | None]]:
    """A list's, set's or tuple's items with their CQL types and places (both spellings walk them
    so): a tuple's items are placed by position, a list's or set's all as "item"."""
    items = list(value)
    subtypes = list(getattr(cqltype, "subtypes", ()) or ())
    if len(subtypes) == 1:
        subtypes = subtypes * len(items)
    elif len(subtypes) != len(items):
        subtypes = [None] * len(items)
    if _typename(cqltype) == "tuple":
        return [(v, t, _child(place, str(i))) for i, (v, t) in enumerate(zip(items, subtypes, strict=True))]
    item = _child(place, "item")
    return [(v, t, item) for v, t in zip(items, subtypes, strict=True)]


def _map_types(cqltype: Any) -> tuple[Any, Any]:
    """A map's key and value types (None where the type does not say)."""
    subtypes = tuple(getattr(cqltype, "subtypes", ()) or ()) + (None, None)
    return subtypes[0], subtypes[1]


def _udt_fields(value: Any, cqltype: Any, place: ValuePlace | None
                ) -> list[tuple[str, Any, Any, ValuePlace | None]]:
    """A UDT value's fields: name, value, CQL type and place (a tuple's values by position)."""
    names = list(cqltype.fieldnames)
    values = list(value) if isinstance(value, tuple) else [getattr(value, n, None) for n in names]
    types = list(cqltype.subtypes)
    return [(n, v, t, _child(place, n)) for n, v, t in zip(names, values, types, strict=False)]


def _child(place: ValuePlace | None, step: str) -> ValuePlace | None:
    return None if place is None else place.child(step)


def column_types(result: Any) -> list[Any]:
    types = list(getattr(result, "column_types", None) or [])
    names = list(getattr(result, "column_names", None) or [])
    return types if len(types) == len(names) else [None] * len(names)


__all__ = ["Blobs", "CsvSpelling", "JsonSpelling", "blob_reading", "column_types"]
