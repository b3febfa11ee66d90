"""The answer's columns: the one currency every reading pays in and every renderer reads.

A reading (reading.select, reading.statement; Spark's tasks) answers batches of rows as columns,
one `ColumnValues` per answer column, whichever engine read each value: the native core's columns (a
path's values, a blob column's reading, held by the core with no Python object per value) and the
Python engine's values come out of here behind the same methods, the values the core hands back
filled in by the Python engine inside this module and payload/native.py. Above `payload/` nothing
names a held type or asks which engine read a value.

Each answer column is described by an `AnswerColumn`: its name, what it holds (`role`: a CQL
value, a blob, a path's value, an aggregate), its CQL type, and its `kind` (payload.arrow_types:
the Arrow type it is written as), fixed before its first batch leaves and never changed:

- a CQL column's kind is its CQL type's (`cql_kind`); a decimal's scale is read from the sample
  (below), a varint is decimal128(38, 0) by its type alone;
- a blob's payload, a path's value and an aggregate's kind are read from the answer's leading
  sample: its first `SAMPLE_ROWS` rows (every row of a shorter answer; another number given:
  reading.typed.TypedAnswer.typed_by), `sample_kind`'s rule;
- kinds given (db.query's schema=, COPY's SCHEMA: `given_types`, `with_given`) replace a
  column's, or a place's inside it, before the sample (a column) or after it (a path inside);
- what does not fit its column's kind afterwards (a 40-digit integer in an int64 column, a string
  where numbers were) is null there, or, where only places inside it do not fit (a record's field,
  a list's item, a key the sampled records did not have), those places alone are null (left out:
  the key), explained in `NAME:note` (the places, and a path's or an aggregate's exact JSON text; a
  blob's stored bytes are in `NAME:stored`) and counted (`Fitted.misfits`): nothing is coerced,
  nothing retyped. A CQL column with a decimal or a varint inside (any scale, any number of
  digits: more than decimal128 holds) has `NAME:exact` beside it, the exact text of each value
  its kind does not hold whole: no value is lost for its scale or digits.

Each renderer reads columns through one function here: `arrow_arrays` (Arrow: Parquet, the Python
API's tables and streams), `json_lines` (JSON Lines, as `--output-format json` spells it),
`csv_fields` (CSV), `ColumnValues.values()` (the terminal's rows, MCP's JSON values, the API's dicts),
`BlobReading.parts` (a blob's six parts). Spellings of CQL values (JSON text, CSV fields) are the
output layer's, handed in as functions.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from decimal import Decimal
from functools import partial
from typing import TYPE_CHECKING, Any, TypeVar

from cqlsh_ext.common import jsonenc
from cqlsh_ext.common.long_int import LongInt
from cqlsh_ext.payload import native
from cqlsh_ext.payload.arrow_types import (
    SHAPE_BOUNDS,
    Blob,
    BlobParts,
    Dec,
    Float,
    Int,
    Json,
    Kind,
    Leaf,
    List,
    Map,
    Misfit,
    Null,
    Str,
    Struct,
    Unfit,
    arrow_field,
    arrow_type,
    as_they_are,
    compile_kind,
    cql_kind,
    fitted,
    held_mapped,
    json_text,
    kind_spec,
    merge,
    settled,
    unfit_head,
    value_kind,
)
from cqlsh_ext.payload.budget import Budget
from cqlsh_ext.payload.confidence import view_confidence
from cqlsh_ext.payload.held_views import HeldView, quiet_reason
from cqlsh_ext.payload.path_values import SCALARS, machine_value
from cqlsh_ext.payload.paths import UNDECODABLE_GROUP
from cqlsh_ext.payload.places import Decoding, Engines, ValuePlace
from cqlsh_ext.payload.view import (
    BINARY,
    JSON_PAST_BUDGET,
    NOT_DETECTED,
    RECORD,
    TEXT,
    TOO_SHORT,
    UNDECODABLE_KINDS,
    UNKNOWN,
    BlobView,
)

if TYPE_CHECKING:
    from cqlsh_ext.payload.engine import ValueEngine

#: What an answer column holds: a CQL value as the server returns it; a blob, decoded (its payload,
#: label, kind, note and stored bytes); a value found by a payload path; an aggregate computed here.
CQL, BLOB, PATH, AGGREGATE = "cql", "blob", "path", "aggregate"
#: The payload type of a path's value, as a person reads it: JSON's.
PATH_TYPE = "json"
#: A blob column's companions, and any inferred column's note, after its name.
LABEL, KIND, NOTE, STORED, CONFIDENCE = ":label", ":kind", ":note", ":stored", ":confidence"
#: A CQL column with a decimal or a varint inside: the exact text of a value its Arrow type does
#: not hold, after its name.
EXACT = ":exact"
#: Every companion's suffix.
COMPANIONS = (LABEL, KIND, NOTE, STORED, CONFIDENCE, EXACT)
#: The leading sample the kinds of inferred columns are read from: the answer's first rows.
SAMPLE_ROWS = 5_000
#: A misfit's note holds its value's JSON text up to this many characters (then says how long it was).
NOTE_TEXT = 4_096
#: Why an undecodable GROUP BY key is null (its note).
UNDECODABLE_KEY = "undecodable: the group of the values no reading could read"


# ------------------------------------------------------------------ what a column is


@dataclass(frozen=True)
class AnswerColumn:
    """One column of an answer: its name; `role` (CQL, BLOB, PATH, AGGREGATE); `cql_type`, the
    driver's type of a column the server returns (None for a path's value or an aggregate);
    `source`, the path or the aggregate as written; `computed`: its numbers are computed here
    (sum, avg), not read as they are; `kind`: its Arrow kind (a blob's: its payload's), fixed
    before the first batch (None until then, for a kind read from the sample)."""

    name: str
    role: str
    cql_type: Any = None
    source: str | None = None
    computed: bool = False
    kind: Kind | None = None

    @property
    def is_count(self) -> bool:
        return self.role == AGGREGATE and self.source is not None and self.source.lower().startswith("count")

    @property
    def seed(self) -> Kind:
        """What its kind is known to be before any value: its CQL type's, bigint for a count, else
        nothing yet (Null)."""
        if self.is_count:
            return Int(64)
        if self.cql_type is not None and self.role == CQL:
            return cql_kind(self.cql_type)
        return Null()

    @property
    def inferred(self) -> bool:
        """Its kind is read from the sample: a path's value, an aggregate but a count, a blob's
        payload, a CQL type with a decimal (its scale) or a blob (its payload) inside."""
        if self.role == CQL:
            return kind_holds(self.seed, (Dec, Blob))
        return not self.is_count

    @property
    def fixed(self) -> Kind:
        """Its kind, fixed: the seed where nothing is read from the sample."""
        if self.kind is not None:
            return self.kind
        assert not self.inferred, f"{self.name}'s kind is read from the sample: AnswerSchema.fix first"
        return self.seed

    @property
    def plain(self) -> bool:
        """Every value fits its kind: a CQL column or a count of its own type (none inferred, none
        given another)."""
        return not self.inferred and (self.kind is None or self.kind == self.seed)

    @property
    def noted(self) -> bool:
        """It has a NAME:note beside it (a value may not fit its kind): an inferred column, or one
        given another type than its own (db.query's schema=)."""
        return self.role != BLOB and not self.plain

    @property
    def exact(self) -> bool:
        """It has a NAME:exact beside it: a CQL column with a decimal or a varint inside, whose
        Arrow decimal does not hold every value (a scale or digits past the sample's)."""
        return self.role == CQL and self.cql_type is not None and kind_holds(self.seed, (Dec,))

    def fields(self) -> list[tuple[str, Kind]]:
        """Its Arrow fields, in order: a blob's payload, label, kind, note, stored bytes and
        confidence; an inferred column's value, note and, with a decimal inside, exact text;
        any other column's value."""
        kind = self.fixed
        if self.role == BLOB:
            return [(self.name, kind), (self.name + LABEL, Str()), (self.name + KIND, Str()),
                    (self.name + NOTE, Str()), (self.name + STORED, Leaf("binary")),
                    (self.name + CONFIDENCE, Str())]
        out = [(self.name, kind)]
        if self.noted:
            out.append((self.name + NOTE, Str()))
        if self.exact:
            out.append((self.name + EXACT, Str()))
        return out

    @property
    def type_text(self) -> str:
        """Its type as a person reads it: the CQL type ('int', 'map<text, blob>'), `json` for a
        path's value, the aggregate's ('bigint' for count, else `json` or a number)."""
        if self.cql_type is not None:
            from cqlsh_ext.cql.types import from_driver

            return str(from_driver(self.cql_type))
        if self.is_count:
            return "bigint"
        if self.role == AGGREGATE and self.computed:
            return "number"
        return PATH_TYPE

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"name": self.name, "role": self.role, "type": self.type_text}
        if self.source is not None:
            out["source"] = self.source
        return out


def name_said_twice(columns: Sequence[AnswerColumn]) -> str | None:
    """Why an answer's rows cannot be objects of a value a name (MCP's rows, the API's records):
    a column name its statement says twice (SELECT a AS x, b AS x), one line; None: none is."""
    names = [column.name for column in columns]
    twice = next((name for i, name in enumerate(names) if name in names[:i]), None)
    if twice is None:
        return None
    return (f"the answer names column {twice!r} twice, and a row object holds one value a name: "
            "name each column once (AS, in a SELECT of CQL columns alone), or read them in two statements")


def kind_holds(kind: Kind, found: tuple[type, ...]) -> bool:
    """Whether `kind`, or a kind inside it (a list's item, a map's key or value, a record's field),
    is one of `found`: a CQL kind with a decimal or a varint inside (Dec), with something read
    from the sample inside (Dec: a decimal's scale; Blob: a blob's payload), JSON text inside."""
    if isinstance(kind, found):
        return True
    if isinstance(kind, List):
        return kind_holds(kind.item, found)
    if isinstance(kind, Map):
        return kind_holds(kind.key, found) or kind_holds(kind.value, found)
    if isinstance(kind, Struct):
        return any(kind_holds(k, found) for _, k in kind.fields)
    return False


def arrow_schema(columns: Sequence[AnswerColumn], metadata: dict[str, str] | None = None) -> Any:
    """The pyarrow.Schema of fixed columns (every field nullable)."""
    import pyarrow as pa

    fields = [arrow_field(name, kind) for column in columns for name, kind in column.fields()]
    meta = {k.encode(): v.encode() for k, v in (metadata or {}).items()}
    return pa.schema(fields, metadata=meta or None)


# ------------------------------------------------------------------ a column's values


class ColumnValues:
    """One answer column's values over a batch's rows, whichever engine read them: `len()`, a
    slice (`column[a:b]`), `values()` (the Python values: a CQL value as the driver gives it, a
    path's value as read, a blob as its stored bytes or the view the reading made)."""

    __slots__ = ()

    def __len__(self) -> int:
        raise NotImplementedError

    def __getitem__(self, index: slice) -> ColumnValues:
        raise NotImplementedError

    def values(self) -> list[Any]:
        raise NotImplementedError

    def __iter__(self) -> Iterator[Any]:
        return iter(self.values())


class ValueColumn(ColumnValues):
    """Python values (the Python engine's, the driver's, an aggregate's)."""

    __slots__ = ("_values",)

    def __init__(self, values: Sequence[Any]) -> None:
        self._values = values if isinstance(values, list) else list(values)

    def __len__(self) -> int:
        return len(self._values)

    def __getitem__(self, index: slice) -> ValueColumn:
        return ValueColumn(self._values[index])

    def values(self) -> list[Any]:
        return self._values


class _OnCore(ColumnValues):
    """A column the native core holds: sliced as the core slices it."""

    __slots__ = ("held",)

    def __init__(self, held: Any) -> None:
        self.held = held

    def __len__(self) -> int:
        return len(self.held)

    def __getitem__(self, index: slice) -> _OnCore:
        return type(self)(self.held[index])


class _PathsOnCore(_OnCore):
    """A path's values the native core holds (a page's kept rows): `values()` makes the Python
    objects, the rows the core leaves to Python being the Python evaluator's values."""

    __slots__ = ()

    def values(self) -> list[Any]:
        return native.held_values(self.held)


class _BlobsOnCore(_OnCore):
    """A blob column's values the native core read (kind, label, payload each): `values()` are
    their views as the core read them (payload.held_views.HeldView: nothing decoded again), a
    null blob None, a value the core leaves to the Python engine that engine's view (`known`: the
    views made already, by row; else made by `engine`, the place's, once, where the reading gave
    one: BlobReading.read; else its stored bytes, which a reader of views decodes)."""

    __slots__ = ("_values", "engine", "known")

    def __init__(self, held: Any, engine: ValueEngine | None = None,
                 known: Mapping[int, BlobView] | None = None) -> None:
        super().__init__(held)
        self.engine = engine
        self.known: Mapping[int, BlobView] = known or {}
        self._values: list[Any] | None = None

    def __getitem__(self, index: slice) -> _BlobsOnCore:
        start, stop, _step = index.indices(len(self.held))
        known = {i - start: view for i, view in self.known.items() if start <= i < stop}
        return _BlobsOnCore(self.held[index], self.engine, known)

    def placed(self, engine: ValueEngine) -> _BlobsOnCore:
        """This column with its place's engine, which reads the values the core leaves."""
        return self if self.engine is engine else _BlobsOnCore(self.held, engine, self.known)

    def python_value(self, row: int, stored: Any) -> Any:
        """A row the core leaves to the Python engine, as a reader of values takes it: its view."""
        found = self.known.get(row)
        if found is not None:
            return found
        if isinstance(stored, BlobView) or self.engine is None or type(stored) is not bytes or not stored:
            return stored
        return self.engine.view(stored)

    def values(self) -> list[Any]:
        if self._values is None:
            payload = partial(native.held_payload, self.held)
            self._values = native.contents_views(
                self.held, lambda stored, kind, label, text, decoded, row: HeldView(
                    stored, kind, label, text, decoded, payload, row), self.python_value)
        return self._values


def column_of(values: Any, engine: ValueEngine | None = None) -> ColumnValues:
    """A reading's column as a ColumnValues: a ColumnValues as it is, a column the native core holds (a
    path's values or a blob column's reading: Evaluator.held; `engine`, its place's, reads the
    values the core leaves), or a sequence of Python values."""
    if isinstance(values, ColumnValues):
        return values
    if native.is_held_contents(values):
        return _BlobsOnCore(values, engine)
    if native.is_held_column(values):
        return _PathsOnCore(values)
    return ValueColumn(values)


def concat(chunks: Sequence[ColumnValues]) -> list[Any]:
    """The Python values of a column given in chunks."""
    out: list[Any] = []
    for chunk in chunks:
        out += chunk.values()
    return out


# ------------------------------------------------------------------ a blob column's reading


@dataclass
class BlobReading:
    """How an answer's blobs are read for writing them out: the session's decoding (-d's mode, the
    output cap, the column settings), `raw`: the stored bytes kept for every value too. Counts the
    values it read that were undecodable, by kind (`undecodable`), and cut (`cut`), once each.
    `trees`, `gaps`: as payload.program.Given's, for the core's page (False: a file of text, whose
    texts need no JSON tree; `gaps`: JSON Lines, which writes a JSON text minified from the
    whitespace runs its check notes)."""

    decoding: Decoding
    raw: bool = False
    #: How a CQL value with no Arrow type of its own (a blob inside a collection, a custom type)
    #: is spelt: the JSON writer's text (output.spellings.JsonSpelling.value: the value, and its
    #: CQL type where known), handed in.
    cql_json: Callable[..., str] | None = None
    trees: bool = True
    gaps: bool = False
    engines: Engines = field(init=False)
    budget: Budget = field(init=False)
    undecodable: dict[str, int] = field(default_factory=dict)
    cut: int = 0

    def __post_init__(self) -> None:
        self.engines = Engines(self.decoding)
        self.budget = Budget.for_cap(self.decoding.cap)

    @property
    def off(self) -> bool:
        """Decoding is off (-d none): a blob is its stored bytes."""
        return self.decoding.mode == "none"

    @property
    def cap(self) -> int:
        return self.decoding.cap

    def engine(self, place: ValuePlace | None) -> ValueEngine:
        return self.engines(place)

    def view(self, value: bytes | bytearray | memoryview | BlobView,
             place: ValuePlace | None) -> BlobView | None:
        """The blob's view (a view the reading made is taken as it is); None with decoding off or
        for an empty value (both their hex)."""
        if isinstance(value, BlobView):
            return value
        if self.off or not value:
            return None
        return self.engines(place).view(bytes(value))

    def read(self, column: ColumnValues, place: ValuePlace | None) -> ColumnValues:
        """A blob column's stored values read, a page in one call: on the native core, the core's
        reading (each value decoded once, no view made); without it, the Python engine's views.
        A column the core or a reading read already is taken as it is. Its undecodable and cut
        values are counted here."""
        if self.off:
            return column
        if isinstance(column, _BlobsOnCore):  # read by the query: the values it leaves, by this place
            return column.placed(self.engines(place))
        values = column.values()
        if not values or all(v is None or isinstance(v, BlobView) for v in values):
            return column
        engine = self.engines(place)
        if engine.on_core():
            try:
                held = native.hold_page(values, engine.cap, self.trees, self.gaps)
            except Exception:  # (should not happen) the Python engine reads the column
                held = None
            if held is not None:
                engine.take_peeled(values, held.peeled())
                return _BlobsOnCore(held, engine, self._count(*held.kinds(), values, place))
        views: list[Any] = list(values)
        found = [i for i, v in enumerate(values) if type(v) is bytes and v]
        for i, view in zip(found, engine.views([values[i] for i in found]), strict=True):
            views[i] = view
            self._count_view(view)
        return ValueColumn(views)

    def _count(self, kinds: Sequence[str | None], python: Sequence[int], values: Sequence[Any],
               place: ValuePlace | None) -> dict[int, BlobView]:
        """The page's undecodable and cut values counted: the core's by their kinds, the others'
        by their views, made here by the Python engine (once: given back, by row)."""
        views: dict[int, BlobView] = {}
        for i in python:
            view = self.view(values[i], place)
            if view is not None:
                self._count_view(view)
                views[i] = view
        # the core's kinds counted in C, not a Python step a row (a row the core leaves has None)
        for kind, count in Counter(kinds).items():
            if kind in UNDECODABLE_KINDS:
                self.undecodable[kind] = self.undecodable.get(kind, 0) + count
        return views

    def _count_view(self, view: BlobView) -> None:
        if view.kind in UNDECODABLE_KINDS:
            self.undecodable[view.kind] = self.undecodable.get(view.kind, 0) + 1
        elif view.cut:
            self.cut += 1

    def take_counts(self) -> tuple[dict[str, int], int]:
        """The undecodable values by kind and the cut ones counted since the last call."""
        out = self.undecodable, self.cut
        self.undecodable, self.cut = {}, 0
        return out

    # -- the six parts of a blob value (payload, label, kind, note, stored bytes, confidence)

    def filled(self, chunks: Sequence[_BlobsOnCore], place: ValuePlace | None) -> native.FilledContents:
        """The core's reading of a blob column's chunks, the rows it leaves given their parts here."""
        return native.FilledContents([c.held for c in chunks], lambda v: self.blob_parts(v, place), self.raw,
                                     [c.known for c in chunks])

    def parts(self, chunks: Sequence[ColumnValues], place: ValuePlace | None) -> list[list[Any]]:
        """A blob column's six columns (payload, label, kind, note, stored bytes, confidence) as
        Python values, as the Parquet file's columns NAME, NAME:label, NAME:kind, NAME:note,
        NAME:stored, NAME:confidence hold them."""
        out: list[list[Any]] = [[], [], [], [], [], []]
        for chunk in chunks:
            chunk = self.read(chunk, place)
            if isinstance(chunk, _BlobsOnCore):
                filled = self.filled([chunk], place)
                parts = [filled.values(at) for at in range(6)]
                # the core reads a value no reading can read with no reason: its quiet note here
                parts[3] = [quiet_note(kind, stored) if note is None else note
                            for kind, note, stored in zip(parts[2], parts[3], parts[4], strict=True)]
                for at in range(6):
                    out[at] += parts[at]
                continue
            for value in chunk.values():
                for column, item in zip(out, self.blob_parts(value, place), strict=True):
                    column.append(item)
        return out

    def blob_parts(self, value: Any, place: ValuePlace | None) -> tuple[Any, Any, Any, Any, Any, Any]:
        """(payload, label, kind, note, stored bytes, confidence) of one blob value (bytes, or its
        view): a text's JSON tree, or a record JSON-able, its NaN and infinities floats (a number
        place holds them, as a JSON text's do)."""
        if value is None:
            return None, None, None, None, None, None
        stored = value.stored if isinstance(value, BlobView) else bytes(value)
        view = self.view(value, place)
        if view is None:  # decoding off, or an empty value
            return None, None, UNKNOWN, OFF_NOTE if self.off and stored else None, stored, None
        kind = view.kind
        sure = view_confidence(view)
        if kind != TEXT and kind != RECORD:  # no payload to type: the stored bytes keep it
            note = view.object_class or view.reason or quiet_note(kind, stored)
            return None, view.label or None, kind, note, stored, sure
        if view.cut:
            return None, view.label, kind, f"cut: {cut_text(view)}", stored, sure
        note = view.reason
        if kind == TEXT:
            tree = view.tree
            payload = view.text if tree is None else tree
            if tree is None and note is None and (past := view.json_past_budget) is not None:
                note = JSON_PAST_BUDGET.format(past)  # shown as stored: why, as JSON output says
        else:
            from cqlsh_ext.payload.formats.tree import jsonable_cut

            # NaN and the infinities stay floats: a typed column holds them as a JSON text does
            payload, cut = jsonable_cut(view.record, self.budget, floats=True)
            if cut:
                return None, view.label, kind, f"cut: {cut}", stored, sure
        return payload, view.label, kind, note, stored if self.raw else None, sure


#: The note of a value read with decoding off (-d none): nothing was looked for in it.
OFF_NOTE = "not decoded: decoding is off (-d none)"
#: The note of a binary payload (its reading gives no reason: it is what it is).
BINARY_NOTE = "a binary payload: neither text nor a record format"


def quiet_note(kind: str | None, stored: bytes | None) -> str | None:
    """Why a value no reading could read shows no payload, where its reading gave no reason (the
    quiet ones the display keeps to itself, and every such value the native core reads): no
    compression detected, too short to detect (auto mode's, by the value's size, as
    payload.unwrap decides them), a binary payload. None for any other kind, and for an empty
    value (nothing stored: not undecodable). So every undecodable
    value's NAME:note says why; the display and the JSON output, which spell such a value as its
    hex exactly as cqlsh does, are not changed by it."""
    if kind == UNKNOWN:
        if not stored:  # an empty value: nothing stored, nothing undecodable
            return None
        return quiet_reason(stored)
    if kind == BINARY:
        return BINARY_NOTE
    return None


def _with_quiet_notes(arrays: list[Any]) -> list[Any]:
    """A blob column's six arrays the core laid out, each value it read that no reading can read
    given its quiet note (quiet_note), where its note is null. quiet_note's rule a column at once
    in Arrow's compute (a binary payload's note; a value in no known format's by its stored size,
    none for an empty one): a Python call and a bytes object a quiet row cost more than the rest
    of its row's Python (the orders table: one row in six)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    from cqlsh_ext.codecs.registry import MIN_AUTO_LENGTH

    kinds, notes = as_pyarrow(arrays[2]), as_pyarrow(arrays[3])
    unknown, binary = (pc.fill_null(pc.equal(kinds, kind), False) for kind in (UNKNOWN, BINARY))
    quiet = pc.and_(pc.is_null(notes), pc.or_(unknown, binary))
    if not pc.any(quiet).as_py():
        return arrays
    size = pc.binary_length(as_pyarrow(arrays[4]))  # (null where nothing is stored)
    short, detected, binary_note, none = (pa.scalar(text, notes.type)
                                          for text in (TOO_SHORT, NOT_DETECTED, BINARY_NOTE, None))
    reason = pc.if_else(pc.less(size, MIN_AUTO_LENGTH), short, detected)
    reason = pc.if_else(pc.greater(size, 0), reason, none)  # empty: nothing stored, nothing undecodable
    quiet_notes = pc.if_else(binary, binary_note, pc.if_else(unknown, reason, none))
    return [*arrays[:3], pc.if_else(quiet, quiet_notes, notes), *arrays[4:]]


def cut_text(view: BlobView) -> str:
    """Why a view is cut, in words: 'first 4.0 MiB of 1.0 GiB' (what the output cap kept)."""
    from cqlsh_ext.common.units import human_size

    cut = view.truncated_layer
    if cut is None:
        return ""
    total = f" of {human_size(cut.declared_size)}" if cut.declared_size else ""
    return f"first {human_size(cut.output_size)}{total}: past the output cap"


# ------------------------------------------------------------------ kinds, fixed from the sample


def sample_kind(seed: Kind, values: Sequence[tuple[Any, int]]) -> Kind:
    """The kind of an inferred column from its sampled values (the rule docs/export.md states):

    - the column holds the sort of value most sampled values are (text, a number, a boolean, a
      list, a record; the first met on a tie): the others will not fit (null, with a note);
    - of those, the narrowest kind holding every one: integers and floats a double while the
      integers are exact in one, integers and decimals a decimal, records the union of their keys;
      inside a record or a list, a place where values of different sorts meet is JSON text;
    - a value no typed place holds on its own (a decimal that is not finite, a record keyed by
      other than strings) is left out: it will not fit; but a column of numbers one of which no
      number type holds (an integer or a decimal past 38 digits) is JSON text, each number as
      written;
    - a column, or a place inside one, where no value was seen (only nulls) is JSON text, which
      holds whatever comes.

    `values`: (a value, how many sampled values it stands for: the native core gives one value of
    each shape)."""
    kinds: dict[str, list[Kind]] = {}
    votes: dict[str, int] = {}
    unheld = False  # a number no number type holds: past 38 digits
    for value, weight in values:
        if value is None or value is UNDECODABLE_GROUP:
            continue
        found = value_kind(value, seed)
        if isinstance(found, Json) and not isinstance(seed, Json):
            unheld = unheld or (_long_number(value) and not isinstance(seed, (Int, Float, Dec)))
            continue
        sort = _sort_of(found)
        kinds.setdefault(sort, []).append(found)
        votes[sort] = votes.get(sort, 0) + weight
    if not kinds:
        return _null_to_json(settled(seed))
    sort = max(votes, key=lambda name: votes[name])  # (max keeps the first of equals)
    if unheld and sort == "number":
        return _JSON_TEXT
    kind = seed
    for found in kinds[sort]:
        kind = merge(kind, found)
    if isinstance(kind, Json) and sort == "number":  # a big integer beside floats: floats hold most
        kind = Float()
    return _whole_type(_null_to_json(settled(kind)))


#: The kind of JSON text.
_JSON_TEXT = Json()


def _long_number(value: Any) -> bool:
    """A finite number past the 38 digits decimal128 holds (an int, a LongInt, a Decimal)."""
    if isinstance(value, bool) or not isinstance(value, (int, Decimal)):
        return False
    return not isinstance(value, Decimal) or value.is_finite()


def _whole_type(kind: Kind) -> Kind:
    """A kind read from a sample as its Arrow type holds it: integers the whole of int64 (a later
    2**60 fits an int64 column sampled with small ones), decimals every digit their scale leaves
    of 38 (a later 123.4 fits a decimal128(38, 3) column sampled with 1.234)."""
    if isinstance(kind, Int) and kind.bits < 64:
        return Int(64)
    if isinstance(kind, Dec):
        return Dec(kind.scale, 38 - kind.scale)
    return held_mapped(kind, _whole_type)


def _sort_of(kind: Kind) -> str:
    """The sort of value a kind is (sample_kind's vote): text, number, boolean, list, record."""
    if isinstance(kind, (Int, Float, Dec)):
        return "number"
    if isinstance(kind, List):
        return "list"
    if isinstance(kind, (Struct, Map)):
        return "record"
    return type(kind).__name__


def _null_to_json(kind: Kind) -> Kind:
    """Places where only nulls were seen: JSON text (they hold whatever comes)."""
    if isinstance(kind, Null):
        return Json()
    return held_mapped(kind, _null_to_json)


def _cql_sample_kind(seed: Kind, values: Sequence[Any], reading: BlobReading,
                     place: ValuePlace | None) -> Kind:
    """A CQL column with a decimal or a blob inside: its seed, the decimals' scale read from the
    sample (a varint is decimal128(38, 0) by its type: its seed says so), each blob's payload kind
    read from the payloads there as a blob column's is (sample_kind)."""
    kind = seed
    payloads: dict[tuple[str, ...], list[tuple[Any, int]]] = {}
    for value in values:
        if value is not None:
            kind = _cql_merged(seed, kind, value_kind(value, seed))
            _blob_payloads(seed, value, reading, place, payloads)
    return _whole_type(_with_payloads(kind, payloads))


#: A CQL decimal place whose sampled values no decimal128 holds (more than 38 digits, whole and
#: scale together: 123456789012345678901.5 beside 1E-26): each value's exact text, a string, the
#: JSON writer's spelling of it. Not decimal256: polars 2.1 panics taking one from Arrow and
#: refuses one in Parquet, DuckDB 2.0 reads one as a double. (A varint is decimal128(38, 0) by
#: its type alone: one past 38 digits does not fit, as docs/export.md says.)
DECIMAL_TEXT = Leaf("cql_json")


def _cql_merged(seed: Kind, kind: Kind, found: Kind) -> Kind:
    """A CQL column's kind (`seed` its type's) with a sampled value's (`found`, value_kind's)
    merged in: its decimal places widened to the scale and digits they need up to decimal128's 38,
    past that their exact text (DECIMAL_TEXT); where only JSON text would hold both otherwise,
    `kind` (the value then does not fit, with its note)."""
    if isinstance(seed, Dec) and seed != _VARINT:
        if DECIMAL_TEXT in (kind, found):
            return DECIMAL_TEXT
        merged = merge(kind, found)  # (Json here: a decimal past 38 digits, or two that are together)
        return DECIMAL_TEXT if isinstance(merged, Json) else merged
    if isinstance(seed, List) and isinstance(kind, List) and isinstance(found, List):
        return List(_cql_merged(seed.item, kind.item, found.item), kind.size)
    if isinstance(seed, Map) and isinstance(kind, Map) and isinstance(found, Map):
        return Map(_cql_merged(seed.key, kind.key, found.key),
                   _cql_merged(seed.value, kind.value, found.value))
    if isinstance(seed, Struct) and isinstance(kind, Struct) and isinstance(found, Struct) \
            and len(seed.fields) == len(kind.fields) == len(found.fields):
        places = zip(seed.fields, kind.fields, found.fields, strict=True)
        return Struct(tuple((name, _cql_merged(s, k, f)) for (name, s), (_, k), (_, f) in places), kind.cql)
    merged = merge(kind, found)
    return kind if kind_holds(merged, (Json,)) else merged


#: A varint's kind, by its type (arrow_types.cql_kind).
_VARINT = Dec(0, 38)


def _blob_payloads(kind: Kind, value: Any, reading: BlobReading, place: ValuePlace | None,
                   out: dict[tuple[str, ...], list[tuple[Any, int]]]) -> None:
    """The payloads of the blobs inside a CQL value, by where each sits (a Blob kind's steps)."""
    if value is None:
        return
    if isinstance(kind, Blob):
        blob_place = place.child(*kind.steps) if place is not None else None
        out.setdefault(kind.steps, []).append((reading.blob_parts(value, blob_place)[0], 1))
    elif isinstance(kind, List):
        for item in value:
            _blob_payloads(kind.item, item, reading, place, out)
    elif isinstance(kind, Map) and hasattr(value, "items"):
        for key, item in value.items():
            _blob_payloads(kind.key, key, reading, place, out)
            _blob_payloads(kind.value, item, reading, place, out)
    elif isinstance(kind, Struct) and kind.cql:
        items = list(value) if isinstance(value, tuple) else \
            [getattr(value, name, None) for name, _ in kind.fields]
        for (_name, field_kind), item in zip(kind.fields, items, strict=False):
            _blob_payloads(field_kind, item, reading, place, out)


def _with_payloads(kind: Kind, payloads: dict[tuple[str, ...], list[tuple[Any, int]]]) -> Kind:
    """`kind` with each Blob's payload kind read from its sampled payloads."""
    if isinstance(kind, Blob):
        return Blob(sample_kind(Null(), payloads.get(kind.steps, [])), kind.steps)
    return held_mapped(kind, lambda held: _with_payloads(held, payloads))


def fix_kinds(columns: Sequence[AnswerColumn], sample: Sequence[Sequence[ColumnValues]], reading: BlobReading,
              places: Sequence[ValuePlace | None]) -> list[AnswerColumn]:
    """The answer's columns with their kinds fixed from `sample` (the leading batches' columns, in
    the answer's order): what every Arrow reader of the answer writes."""
    out: list[AnswerColumn] = []
    for i, column in enumerate(columns):
        if column.kind is not None:
            out.append(column)
            continue
        if not column.inferred:
            out.append(replace(column, kind=column.seed))
            continue
        chunks = [batch[i] for batch in sample]
        if column.role == BLOB:
            kind = sample_kind(Null(), _payload_sample(chunks, reading, places[i]))
        elif column.role == CQL:
            kind = _cql_sample_kind(column.seed, concat(chunks), reading, places[i])
        else:
            kind = sample_kind(Null(), _path_sample(chunks, reading.budget))
        out.append(replace(column, kind=kind))
    return out


# ------------------------------------------------------------------ kinds given (schema=, SCHEMA)

#: The Arrow types a schema gives an answer's columns, resolved against them: by column index,
#: (the path of struct fields below the column, () for the column itself; the pyarrow.DataType).
GivenTypes = dict[int, list[tuple[tuple[str, ...], Any]]]


def given_types(columns: Sequence[AnswerColumn], schema: Any) -> GivenTypes:
    """A schema (a pyarrow.Schema, or a mapping of column names or payload paths, "data.total",
    to Arrow types or their names, "decimal128(20, 2)") read against an answer's columns. A name
    types the column of that name (a blob column's payload) and the place it names inside any
    column whose name comes before a dot in it ("data.total": the field `total` of the `data`
    column's records too): one payload place, typed alike wherever the answer holds it. Each type
    is one a kind writes (arrow_types.given_kind). A pyarrow.Schema's companion fields
    (NAME:note, ...: an answer's own schema) are passed over. ValueError, one line, for anything
    else: nothing is read before it is said."""
    import pyarrow as pa

    from cqlsh_ext.payload.arrow_types import arrow_type_named, given_kind, given_type

    if isinstance(schema, pa.Schema):
        items: list[tuple[Any, Any]] = [(f.name, given_type(f)) for f in schema]
    elif isinstance(schema, Mapping):
        items = list(schema.items())
    else:
        raise ValueError(f"schema takes a pyarrow.Schema or a dict of column names or paths to Arrow types "
                         f"or type names, not {type(schema).__name__}")
    names = {c.name: i for i, c in enumerate(columns)}
    out: GivenTypes = {}
    for name, given in items:
        if not isinstance(name, str) or not name:
            raise ValueError(f"schema: a column name or a path is text, not {name!r}")
        try:
            arrow = arrow_type_named(given) if isinstance(given, str) else given
        except ValueError as err:
            raise ValueError(f"schema: {name}: {err}") from None
        if not isinstance(arrow, pa.DataType):
            raise ValueError(f"schema: {name}: a type is a pyarrow.DataType or its name, not {given!r}")
        companion = next((c for c in COMPANIONS if name.endswith(c) and name[:-len(c)] in names), None)
        if companion is not None:
            if isinstance(schema, pa.Schema):
                continue  # an answer's own schema: its companions come with their columns
            raise ValueError(f"schema: {name} is a companion of {name[:-len(companion)]}: its type is fixed")
        for index, path in _named(columns, names, name):
            column = columns[index]
            like: Kind | None = column.seed if column.role == CQL or column.is_count else None
            for step in path:
                if like is None or isinstance(like, Null):
                    like = None
                    break
                if not isinstance(like, Struct) or step not in dict(like.fields):
                    raise ValueError(f"schema: {name}: {column.name} is {column.type_text}, "
                                     f"with no field {step!r}")
                like = dict(like.fields)[step]
            try:
                given_kind(arrow, _like(like))
            except ValueError as err:
                raise ValueError(f"schema: {name}: {err}") from None
            out.setdefault(index, []).append((path, arrow))
    return out


def _named(columns: Sequence[AnswerColumn], names: dict[str, int],
           name: str) -> list[tuple[int, tuple[str, ...]]]:
    """The columns a schema's name types: the column of that name, and each column it is a path
    inside (a column's name, a dot, the fields below it: "data.total" in the `data` column),
    with the path of fields below it. The same payload place is typed alike wherever the answer
    holds it."""
    out: list[tuple[int, tuple[str, ...]]] = [(names[name], ())] if name in names else []
    for owner, index in names.items():
        if name.startswith(owner + "."):
            path = tuple(name[len(owner) + 1:].split("."))
            if not all(path):
                raise ValueError(f"schema: {name}: a path's fields are named between dots")
            out.append((index, path))
    if not out:
        shown = ", ".join(c.name for c in columns)
        raise ValueError(f"schema: {name} is no column of this answer, nor a path inside one "
                         f"(its columns: {shown})")
    return out


def with_given(columns: Sequence[AnswerColumn], given: GivenTypes, whole: bool) -> list[AnswerColumn]:
    """The columns with the kinds `given` in place: `whole`, the columns given whole (before the
    sample: nothing is read from it for them); else the paths inside columns (after it, in the
    kinds the sample gave: a field given is added to a record kind without it, and a place of
    another kind, JSON text say, becomes a record of the fields given)."""
    from cqlsh_ext.payload.arrow_types import given_kind

    out = list(columns)
    for index, places in given.items():
        column = out[index]
        for path, arrow in sorted(places, key=lambda place: len(place[0])):
            if (path == ()) != whole:
                continue
            if whole:
                out[index] = replace(column, kind=given_kind(arrow, _like(column.seed)))
            else:
                out[index] = column = replace(column, kind=_given_at(column.fixed, path, arrow))
    return out


def _like(kind: Kind | None) -> Kind | None:
    """What a kind given at a place reads its values as: the CQL kind there (a UDT's fields by
    position, a timestamp's own type), none for a kind read from values."""
    return kind if isinstance(kind, (Leaf, Int, Dec, List, Struct, Map)) else None


def _given_at(kind: Kind, path: tuple[str, ...], arrow: Any) -> Kind:
    from cqlsh_ext.payload.arrow_types import given_kind

    if not path:
        return given_kind(arrow, _like(kind))
    step, rest = path[0], path[1:]
    if isinstance(kind, Struct):
        fields = dict(kind.fields)
        fields[step] = _given_at(fields.get(step, Null()), rest, arrow)
        return Struct(tuple(fields.items()), kind.cql)
    return Struct(((step, _given_at(Null(), rest, arrow)),))


def _path_sample(chunks: Sequence[ColumnValues], budget: Budget) -> list[Any]:
    """The values a path's kind is read from: one of each shape of the values the core holds,
    every value the Python side gives, as an export writes them."""
    out: list[Any] = []
    nodes = budget.nodes
    for chunk in chunks:
        if isinstance(chunk, _PathsOnCore):
            filled = native.FilledPaths([chunk.held], lambda v: _spelt(v, nodes, budget))
            out += filled.sample(len(chunk), SHAPE_BOUNDS)
        else:
            out += [(_spelt(v, nodes, budget), 1) for v in chunk.values()]
    return out


def _payload_sample(chunks: Sequence[ColumnValues], reading: BlobReading,
                    place: ValuePlace | None) -> list[Any]:
    out: list[Any] = []
    for chunk in chunks:
        chunk = reading.read(chunk, place)
        if isinstance(chunk, _BlobsOnCore):
            filled = reading.filled([chunk], place)
            out += filled.sample(len(chunk), SHAPE_BOUNDS)
        else:
            out += [(reading.blob_parts(v, place)[0], 1) for v in chunk.values()]
    return out


# ------------------------------------------------------------------ Arrow


@dataclass
class Fitted:
    """What arrow_arrays made of a column: its arrays (one per field, each exportable through the
    Arrow C data interface) and how many values did not fit its kind (null, with a note)."""

    arrays: list[Any]
    misfits: int = 0


def arrow_arrays(column: AnswerColumn, chunks: Sequence[ColumnValues], reading: BlobReading,
                 place: ValuePlace | None) -> Fitted:
    """One answer column's values (its chunks, in order) as Arrow arrays of its fixed kind, one per
    field (AnswerColumn.fields): laid out by the native core where it holds them, else converted
    here (pyarrow). A value that does not fit is null, its note saying what it was; a value that
    fits but for places inside it (a record's field, a list's item) has those places null, the
    note naming them."""
    kind = column.fixed
    if column.role == BLOB:
        return _blob_arrays(column, kind, [reading.read(c, place) for c in chunks], reading, place)
    if column.role == CQL and column.plain:
        values = concat(chunks)
        return Fitted([_plain_array(kind, values, reading)])
    if column.role == CQL:
        return _converted(column, kind, concat(chunks), reading, lambda value: value, place)
    # a path's value or an aggregate
    budget, nodes = reading.budget, reading.budget.nodes
    held = [c.held for c in chunks if isinstance(c, _PathsOnCore)]
    if held and len(held) == len(chunks):
        laid = _paths_on_core(column, kind, held, reading)
        if laid is not None:
            return laid
    return _converted(column, kind, concat(chunks), reading, lambda value: _spelt(value, nodes, budget))


def _refitted(kind: Kind, value: Any, reading: BlobReading, blob: str | None = None,
              blob_parts: BlobParts | None = None) -> tuple[Any, str]:
    """A value that did not fit `kind`: (the value with the places inside it that do not fit
    null, or None where it does not fit as a whole; its note)."""
    try:
        value_fitted, unfit = fitted(kind, value, reading_json(reading), blob_parts)
    except Misfit:
        return None, misfit_note(kind, value, blob)
    return value_fitted, misfit_note(kind, value, blob, unfit or None)


def _paths_on_core(column: AnswerColumn, kind: Kind, held: list[Any], reading: BlobReading) -> Fitted | None:
    """A path's values the core holds, laid out by it; a row that misfits has the places that
    do not fit null (or is null), with its note. None where the core does not lay out this kind."""
    budget = reading.budget
    nodes = budget.nodes
    filled = native.FilledPaths(held, lambda v: _spelt(v, nodes, budget))
    notes: dict[int, str] = {}

    def refit(row: int, value: Any) -> None:
        value_fitted, notes[row] = _refitted(kind, value, reading)
        filled.set(row, value_fitted)

    array = _laid_by_core(lambda: filled.array(kind_spec(kind), column.name), refit)
    return None if array is None else Fitted([array, _notes_array(len(array), notes)], len(notes))


def _laid_by_core(lay: Callable[[], tuple[Any, list[Any]]], refit: Callable[[int, Any], None]) -> Any:
    """What the core lays out (`lay`: its arrays, or None and the (row, value) pairs that do not
    fit), each misfit given its row's refitted value (`refit`) and laid out again; None where it
    still does not, or the core does not lay out the kind or write a value (ValueError: the
    Python side converts)."""
    for _attempt in range(2):
        try:
            laid, misfits = lay()
        except ValueError:
            return None
        if laid is not None:
            return laid
        for row, value in misfits:
            refit(row, value)
    return None


def _converted(column: AnswerColumn, kind: Kind, values: list[Any], reading: BlobReading,
               spelt: Callable[[Any], Any], place: ValuePlace | None = None) -> Fitted:
    """Values converted here (pyarrow), each that does not fit null with its note, or, where only
    places inside it do not, those places null (a blob inside a CQL value read at its place); a
    CQL value with a decimal inside that is not held whole has its exact text in NAME:exact."""

    def blob_parts(value: Any, steps: tuple[str, ...]) -> tuple[Any, Any, Any, Any, Any, Any]:
        return reading.blob_parts(value, place.child(*steps) if place is not None else None)

    convert = compile_kind(kind, reading_json(reading), blob_parts)
    out: list[Any] = []
    notes: dict[int, str] = {}
    exact: dict[int, str] = {}
    for i, value in enumerate(values):
        if value is UNDECODABLE_GROUP:
            out.append(None)
            notes[i] = UNDECODABLE_KEY
            continue
        value = spelt(value)
        try:
            out.append(convert(value))
        except Misfit:
            value_fitted, notes[i] = _refitted(kind, value, reading, blob_parts=blob_parts)
            out.append(value_fitted)
            if column.exact:
                exact[i] = exact_text(reading, column, value)
    misfits = sum(1 for note in notes.values() if note is not UNDECODABLE_KEY)
    try:
        arrays = [_array(out, kind)]
    except UnicodeEncodeError:  # (rare: looked for only when Arrow refuses the column)
        arrays = [_array(_unicode_values(out, notes), kind)]
    if column.noted:
        arrays.append(_notes_array(len(values), notes))
    if column.exact:
        arrays.append(_notes_array(len(values), exact))
    return Fitted(arrays, misfits)


def exact_text(reading: BlobReading, column: AnswerColumn, value: Any) -> str:
    """A CQL value's exact text, as JSON Lines writes it (a decimal's digits: -1E-26)."""
    if reading.cql_json is None:
        return json_text(value)
    return reading.cql_json(value, column.cql_type)


def _plain_array(kind: Kind, values: list[Any], reading: BlobReading) -> Any:
    """A CQL column of a kind every value fits (its type's)."""
    if as_they_are(kind, values):
        return _array(values, kind)
    convert = compile_kind(kind, reading_json(reading))
    return _array([convert(v) for v in values], kind)


def _blob_arrays(column: AnswerColumn, kind: Kind, chunks: list[ColumnValues], reading: BlobReading,
                 place: ValuePlace | None) -> Fitted:
    """A blob column's six arrays: laid out by the core from its reading where every chunk is on
    the core, else from the values' parts. A payload that does not fit has the places inside it
    that do not null (or is null), its note saying which, its stored bytes kept."""
    held = [c for c in chunks if isinstance(c, _BlobsOnCore)]
    if chunks and len(held) == len(chunks):
        filled = reading.filled(held, place)
        refitted: list[int] = []

        def refit(row: int, value: Any) -> None:
            label, view_kind = filled.label_kind(row)
            payload, note = _refitted(kind, value, reading, column.name)
            filled.set(row, (payload, label, view_kind, note, filled.stored(row), filled.confidence(row)))
            refitted.append(row)

        arrays = _laid_by_core(lambda: filled.arrays(kind_spec(kind), column.name), refit)
        if arrays is not None:
            return Fitted(_with_quiet_notes(list(arrays)), len(refitted))
    payloads, labels, kinds, notes, stored, sure = reading.parts(chunks, place)
    convert = compile_kind(kind, reading_json(reading))
    out: list[Any] = []
    misfits = 0
    for i, payload in enumerate(payloads):
        try:
            out.append(convert(payload))
        except Misfit:
            payload_fitted, notes[i] = _refitted(kind, payload, reading, column.name)
            out.append(payload_fitted)
            if stored[i] is None:
                stored[i] = _stored_of(chunks, i)
            misfits += 1
    try:
        payload_array = _array(out, kind)
    except UnicodeEncodeError:  # (rare: looked for only when Arrow refuses the column)
        payload_array = _array(_unicode_values(out, notes), kind)
    return Fitted([payload_array, _array(labels, Str()), _array(kinds, Str()), _array(notes, Str()),
                   _array(stored, Leaf("binary")), _array(sure, Str())], misfits)


def _unicode_values(values: list[Any], notes: list[str | None] | dict[int, str]) -> list[Any]:
    """Values whose strings hold a lone surrogate (a document's "\\ud800" escape: valid JSON, no
    Unicode character), which Arrow's UTF-8 strings cannot, with U+FFFD in its place, each said in
    the value's note."""
    out = []
    for i, value in enumerate(values):
        value, replaced = jsonenc.unicode_only(value)
        if replaced:
            many = "s" if replaced > 1 else ""
            said = f"{replaced:,} lone surrogate{many} (no Unicode character) read as U+FFFD"
            before = notes[i] if isinstance(notes, list) else notes.get(i)
            notes[i] = f"{before}; {said}" if before else said
        out.append(value)
    return out


def _stored_of(chunks: Sequence[ColumnValues], i: int) -> bytes:
    for chunk in chunks:
        if i < len(chunk):
            value = chunk.values()[i]
            return value.stored if isinstance(value, BlobView) else bytes(value)
        i -= len(chunk)
    raise IndexError(i)


def misfit_note(kind: Kind, value: Any, blob: str | None = None, unfit: list[Unfit] | None = None) -> str:
    """Why a value is null in a column of `kind`, or why places inside it are (`unfit`): what the
    column holds (and the places that did not fit), and the value itself (its JSON text, cut past
    NOTE_TEXT) or, for a blob's payload, where its bytes are."""
    head = unfit_head(kind, unfit or [])
    if blob is not None:
        return f"{head}: the value is in {blob}{STORED}"
    text = json_text(value) if not isinstance(value, (bytes, bytearray)) else f"{len(value)} bytes"
    if len(text) > NOTE_TEXT:
        text = f"{text[:NOTE_TEXT]}… ({len(text):,} characters)"
    return f"{head}: {text}"


def reading_json(reading: BlobReading) -> Callable[..., str]:
    """How a CQL value without an Arrow type of its own is spelt: the reading's (JSON text)."""
    return reading.cql_json or json_text


def _notes_array(size: int, notes: dict[int, str]) -> Any:
    values: list[Any] = [None] * size
    for i, note in notes.items():
        values[i] = note
    return _array(values, Str())


def _array(values: list[Any], kind: Kind) -> Any:
    """Converted values as an Arrow array of the kind's type: laid out by the native core where it
    runs (a column of ints, doubles, booleans or text), else by pyarrow."""
    import pyarrow as pa

    arrow = arrow_type(kind)
    laid = native.cql_array(values, str(arrow))
    if laid is None:
        storage = arrow_type(kind, storage=True)
        array = pa.array(values, type=storage)
        return array if storage == arrow else array.cast(arrow)
    array = pa.array(laid)  # its __arrow_c_array__: the core's buffers, not copied
    if array.type != arrow:  # (the core lays out the kind's own type: should not happen)
        raise TypeError(f"the core laid out {array.type} for a column of {arrow}")
    return array


def as_pyarrow(array: Any) -> Any:
    """An array arrow_arrays made (pyarrow's, or one the core laid out) as a pyarrow.Array, through
    the C data interface (no copy)."""
    import pyarrow as pa

    if isinstance(array, pa.Array):
        return array
    return pa.array(array)  # its __arrow_c_array__


def _spelt(value: Any, nodes: int, budget: Budget) -> Any:
    """A path's value as a file writes it: scalars as they are, records JSON-able."""
    if value is None or type(value) in SCALARS or value is UNDECODABLE_GROUP or is_plain(value, nodes):
        return value
    return machine_value(value, budget)


def _plain_scalar(value: Any, kind: type) -> bool:
    """is_plain() of a value that is no list or dict."""
    if value is None or kind is str or kind is bool:
        return True
    if kind is int:
        return bool(value.bit_length() <= 14_000)
    if kind is LongInt:  # a document's integer, within its budget: written as the document writes it
        return True
    if kind is float:
        return bool(value - value == 0)  # finite
    return False


def is_plain(value: Any, nodes: int) -> bool:
    """Whether `value` is JSON-able as it stands (what JSON parsing gives: str keys, finite floats,
    integers JSON writes, no tags or bytes), so machine_value would return it unchanged. A value
    of more than `nodes` nodes counted as walked (a decoded tree is within the budget's nodes; a
    graph of shared parts, from a format's back-references, is not) is not: machine_value
    meters it."""
    kind = type(value)
    if kind is not list and kind is not dict:  # a scalar, most path values: no walk
        return _plain_scalar(value, kind)
    left = nodes

    def plain(value: Any, depth: int) -> bool:
        nonlocal left
        left -= 1
        kind = type(value)
        if kind is not list and kind is not dict:
            return _plain_scalar(value, kind)
        if depth > 32 or left < 0:
            return False
        depth += 1
        # Loops, not all() over generators: this walk runs for every list or record a path gives.
        # A string, null or boolean inside is counted without a call (plain() would say True).
        if kind is list:
            for item in value:
                if type(item) is str or item is None or type(item) is bool:
                    left -= 1
                elif not plain(item, depth):
                    return False
            return True
        for key, item in value.items():
            if type(key) is not str:
                return False
            if type(item) is str or item is None or type(item) is bool:
                left -= 1
            elif not plain(item, depth):
                return False
        return True

    return plain(value, 0)


# ------------------------------------------------------------------ JSON Lines and CSV


@dataclass(frozen=True)
class JsonSpelt:
    """How one answer column's values are spelt as JSON text (the output layer's spellings,
    handed in): `value`, one value; `many`, a list of values at once; for a blob column the texts
    around a payload the core writes (`head(label, kind)` before it; after it, raw's before and
    after the hex, no known format's before and after its hex, a null's: JsonSpelling.held_json's
    texts), whether the raw hex is written; for a path's or an aggregate's column `found`: the core
    spells its scalars as `value` would."""

    value: Callable[[Any], str]
    many: Callable[[list[Any]], list[str]]
    head: Callable[[str, str], str] | None = None
    texts: tuple[str, str, str, str, str, str] | None = None
    raw: bool = False
    found: bool = False
    #: Every value spelt so, none looked at (a column an MCP answer redacts whole).
    same: str | None = None


def json_lines(keys: Sequence[str], columns: Sequence[ColumnValues], spelt: Sequence[JsonSpelt]) -> bytes:
    """A batch's rows as JSON Lines, one UTF-8 buffer, each line ended by a newline: `keys` (each
    key's JSON text) with each row's values as `spelt` spells them; a blob column the core read
    and a path's column the core holds laid out by the core (their texts written there, no str a
    row)."""
    def lay(layout: list[Any], rows: int) -> bytes:
        if not native.available():  # the Python engine: no column is on the core, every piece is text
            return _python_lines(layout, rows).encode()
        return native.json_lines(layout, rows)

    return _laid(keys, columns, spelt, None, lay, b"")


def answer_rows(keys: Sequence[str], columns: Sequence[ColumnValues], spelt: Sequence[JsonSpelt],
                answer: tuple[int, int]) -> tuple[list[bytes | None], list[int]]:
    """json_lines() of an MCP answer's rows (`answer`: chars, items), compact (`keys` and `spelt`
    the answer's spellings), a row at a time: each row's JSON (no newline), or None for a row with
    a value the answer's cut changes or one the core does not spell as the answer does (its line
    held a NUL: native.answer_rows); and each row's quotes and backslashes (what escaping it in a
    JSON string adds), counted as it was written."""
    def lay(layout: list[Any], rows: int) -> tuple[list[bytes | None], list[int]]:
        if native.available():
            return native.answer_rows(layout, rows, answer)
        text = _python_lines(layout, rows)
        lines = [None if "\0" in line else line.encode() for line in text.split("\n")[:-1]]
        return lines, [0 if line is None else line.count(b'"') + line.count(b"\\") for line in lines]

    nothing: tuple[list[bytes | None], list[int]] = ([], [])
    return _laid(keys, columns, spelt, answer, lay, nothing)


def json_text_escaped(text: bytes) -> bytes:
    """A JSON text (UTF-8: an MCP answer's JSON) as the inside of a JSON string: its quotes and
    backslashes escaped, a backslash each (a JSON text holds no raw control character, the one
    other thing a JSON string escapes); by the core when it runs."""
    if native.available():
        return native.json_text_escaped(text)
    return text.replace(b"\\", b"\\\\").replace(b'"', b'\\"')


_Laid = TypeVar("_Laid")


def _laid(keys: Sequence[str], columns: Sequence[ColumnValues], spelt: Sequence[JsonSpelt],
          answer: tuple[int, int] | None, lay: Callable[[list[Any], int], _Laid], empty: _Laid) -> _Laid:
    """`lay` of the batch's layout (_layout) and its rows; `empty` for no row."""
    rows = len(columns[0]) if columns else 0
    if rows == 0:
        return empty
    try:
        return lay(_layout(keys, columns, spelt, None, answer is not None), rows)
    except UnicodeEncodeError:  # (rare: looked for only when UTF-8 refuses a line)
        return lay(_layout(keys, columns, spelt, jsonenc.escaped_surrogates, answer is not None), rows)


def _python_lines(layout: list[Any], rows: int) -> str:
    """The lines of a layout whose every piece is text (the Python engine: no column on the core)."""
    return "".join("".join(piece if isinstance(piece, str) else piece[row] for piece in layout)
                   for row in range(rows))


def _layout(keys: Sequence[str], columns: Sequence[ColumnValues], spelt: Sequence[JsonSpelt],
            escaped: Callable[[str], str] | None, compact: bool) -> list[Any]:
    """json_lines' pieces of a line (native.json_lines); `escaped`: what each text spelt in Python
    goes through (a lone surrogate in a decoded string, which UTF-8 cannot write, as its JSON
    escape: exactly what the document holds); `compact`: an answer's rows, no spaces."""
    def through(spell: Callable[[Any], str]) -> Callable[[Any], str]:
        return spell if escaped is None else (lambda value: escaped(spell(value)))

    between, after = (",", ":") if compact else (", ", ": ")
    layout: list[Any] = []
    for at, (key, column, how) in enumerate(zip(keys, columns, spelt, strict=True)):
        layout.append(("{" if at == 0 else between) + key + after)
        if how.same is not None:
            layout.append(how.same)
        elif isinstance(column, _BlobsOnCore) and how.head is not None and how.texts is not None:
            layout.append(native.held_json(column.held, how.head, how.texts, how.raw,
                                           through(_with_known(column, how.value))))
        elif isinstance(column, _PathsOnCore) and how.found:
            layout.append(native.HeldFound(column.held, through(how.value)))
        else:
            texts = how.many(column.values())
            layout.append(texts if escaped is None else [escaped(text) for text in texts])
    layout.append("}\n")
    return layout


def csv_fields(column: ColumnValues, field_of: Callable[[Any], str],
               blob_text: Callable[[bytes], str] | None = None, raw: bool = False) -> list[str]:
    """A column's CSV fields: each value by `field_of`; a blob column the core read from its
    reading (its payload's text; the hex, `blob_text`, of a value in no known format or with
    `raw`), the values it leaves to Python by `field_of` of their stored bytes."""
    if not isinstance(column, _BlobsOnCore):
        return [field_of(v) for v in column.values()]
    assert blob_text is not None
    kinds, _labels, texts, stored = native.held_texts(column.held, False, _with_known(column, field_of))
    out: list[str] = []
    for i, kind in enumerate(kinds):
        if kind == native.SPELT:
            out.append(texts[i])
        elif kind is None:  # a null blob
            out.append("")
        elif raw or kind == UNKNOWN:
            out.append(blob_text(stored[i]))
        else:
            out.append(texts[i])
    return out


def _with_known(column: _BlobsOnCore, spell: Callable[[Any], str]) -> Callable[[Any], str]:
    """`spell` of a row the core leaves to Python, from the view the reading made of it already
    (BlobReading.read: `known`, made once), by its stored bytes; else from the bytes."""
    if not column.known:
        return spell
    views = {view.stored: view for view in column.known.values()}
    return lambda stored: spell(views.get(stored, stored))


def decoded_bytes(column: ColumnValues) -> int:
    """What a read blob column's values take decoded (their sizes under their last container),
    as far as the reading knows them: a reading bounds the memory a batch holds by it."""
    if isinstance(column, _BlobsOnCore):
        return sum(column.held.decoded_sizes())
    return sum(v.payload_size for v in column.values() if isinstance(v, BlobView))


def stored_sizes(column: ColumnValues) -> list[int]:
    """The stored sizes of a blob column's values (a row group ends at a byte bound)."""
    if isinstance(column, _BlobsOnCore):
        return list(column.held.sizes())
    return [0 if v is None else len(v.stored) if isinstance(v, BlobView) else len(v) for v in column.values()]


__all__ = ["AGGREGATE", "BLOB", "CONFIDENCE", "CQL", "KIND", "LABEL", "NOTE", "PATH", "PATH_TYPE",
           "SAMPLE_ROWS", "STORED", "AnswerColumn", "BlobReading", "ColumnValues", "Fitted", "JsonSpelt",
           "ValueColumn", "arrow_arrays", "decoded_bytes",
           "arrow_schema", "as_pyarrow", "column_of", "concat", "csv_fields", "cut_text", "fix_kinds",
           "is_plain", "json_lines", "kind_holds", "misfit_note", "sample_kind", "stored_sizes"]
