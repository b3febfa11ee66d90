"""The columns of a Parquet export (and of Spark mode's), from the answer's columns.

- a CQL column: its CQL type's kind (cqlsh_ext.render.arrow_types.cql_kind);
- a path's value or an aggregate (no driver type): its kind read from the values;
- a blob column: five columns, the view the value engine gives (payload.view, as the JSON writer
  spells it):
    NAME          the decoded payload: a record as a struct (or JSON text, by the shape rule),
                  a text as a string; null when it did not decode or the budget cut it
    NAME:label    the value's label: its chain and how the payload reads ("<codec>>json",
                  "<codec>><format>", "json", "<codec>>text"); null when it did not decode
    NAME:kind     text, record, binary, unknown (no known format) or failed (a format that failed)
    NAME:note     why, when something is to be said (the reason, "cut: ...", an object's class)
    NAME:stored   the stored bytes: for every value whose payload is null (so nothing is lost),
                  and for every value with OUTPUT RAW ON / --raw-blobs / WITH RAW = true.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from cqlsh_ext.render.arrow_types import Kind, Leaf, Null, cql_kind

if TYPE_CHECKING:
    from cqlsh_ext.payload.native import HeldColumn, HeldContents

LABEL, KIND, NOTE, STORED = ":label", ":kind", ":note", ":stored"


@dataclass(frozen=True)
class ParquetColumn:
    name: str
    #: The kind it starts from (settled from the first row group where `inferred`).
    seed: Any
    #: Its kind is read from the values (paths, payloads, aggregates, CQL decimals and varints).
    inferred: bool


def _has_decimal(kind: Kind) -> bool:
    from cqlsh_ext.render.arrow_types import Dec, List, Map, Struct

    if isinstance(kind, Dec):
        return True
    if isinstance(kind, List):
        return _has_decimal(kind.item)
    if isinstance(kind, Map):
        return _has_decimal(kind.key) or _has_decimal(kind.value)
    if isinstance(kind, Struct):
        return any(_has_decimal(k) for _, k in kind.fields)
    return False


def is_blob(cqltype: Any) -> bool:
    """A blob column (a driver type; clustering order or frozen<> around it changes nothing)."""
    from cqlsh_ext.cql.types import from_driver

    return cqltype is not None and from_driver(cqltype).is_blob


def columns(names: Sequence[str], types: Sequence[Any]) -> list[ParquetColumn]:
    out: list[ParquetColumn] = []
    for name, cqltype in zip(names, types, strict=True):
        if cqltype is None:
            out.append(ParquetColumn(name, Null(), True))
        elif is_blob(cqltype):
            out.append(ParquetColumn(name, Null(), True))
            out += [ParquetColumn(name + suffix, Leaf(kind), False) for suffix, kind in
                    ((LABEL, "string"), (KIND, "string"), (NOTE, "string"), (STORED, "binary"))]
        else:
            kind = cql_kind(cqltype)
            out.append(ParquetColumn(name, kind, _has_decimal(kind)))
    return out


#: What an answer column is to the Splitter: a path's value or an aggregate, a blob, any other CQL value.
PATH, BLOB, CQL = "path", "blob", "cql"


def roles(types: Sequence[Any]) -> list[str]:
    return [PATH if t is None else BLOB if is_blob(t) else CQL for t in types]


def _plain_scalar(value: Any, kind: type) -> bool:
    """is_plain() of a value that is no list or dict."""
    if value is None or kind is str or kind is bool:
        return True
    if kind is int:
        return bool(value.bit_length() <= 14_000)
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


# ------------------------------------------------------------------ values the native core holds


class HeldPaths:
    """A path's values over a row group as the native core holds them (chunks of HeldColumn, a
    page's kept rows each): laid out by the core in the kind the writer settles, no Python object
    per value. The rows the core leaves to Python are spelt as Splitter.split_columns spells a
    path's value (`_spelt`), in the seam's room (payload.native.FilledPaths), and given to the
    core with the others."""

    parts = 1

    def __init__(self, chunks: Sequence[HeldColumn], budget: Any) -> None:
        from cqlsh_ext.payload import native

        nodes = budget.nodes
        self.held = native.FilledPaths(chunks, lambda value: _spelt(value, nodes, budget))
        self.laid: list[Any] | None = None

    def values(self, part: int, limit: int | None = None) -> list[Any]:
        """The values as Python objects, as split_columns gives them (the first `limit`)."""
        return self.held.values(limit)

    def sample(self, part: int, limit: int) -> list[Any]:
        """The values the first `limit` rows' kinds are read from: one of each shape, in order."""
        from cqlsh_ext.render.arrow_types import SHAPE_BOUNDS

        return self.held.sample(limit, SHAPE_BOUNDS)

    def arrays(self, kind_spec: tuple[Any, ...], name: str) -> tuple[list[Any] | None, list[Any]]:
        array, misfits = self.held.array(kind_spec, name)
        return (None if array is None else [array]), misfits


class HeldBlob:
    """A blob column's five export columns over a row group from the native core's reading of its
    values (chunks of HeldContents: kinds, labels, payloads held by the core, each value decoded
    once, by the query that read its paths or a page at a time here): laid out by the core, the
    payload in the kind the writer settles. The rows the core leaves to Python (values it hands
    back, cut, binary or failed, records the Python side spells) take their parts from the value's
    view (Splitter.blob_parts), in the seam's room (payload.native.FilledContents), and are given
    to the core with the others."""

    parts = 5

    def __init__(self, chunks: Sequence[HeldContents], splitter: Splitter, place: Any) -> None:
        from cqlsh_ext.payload import native

        self.held = native.FilledContents(chunks, lambda value: splitter.blob_parts(value, place),
                                          splitter.raw)
        self.laid: list[Any] | None = None

    def values(self, part: int, limit: int | None = None) -> list[Any]:
        """One of the five columns (payload, label, kind, note, stored) as Python objects, as
        Splitter.blob_columns gives them (the first `limit` rows)."""
        return self.held.values(part, limit)

    def sample(self, part: int, limit: int) -> list[Any]:
        """The payloads the first `limit` rows' kinds are read from: one of each shape, in order
        (the other parts are not read for kinds: their kinds are fixed)."""
        if part:
            return self.values(part, limit)
        from cqlsh_ext.render.arrow_types import SHAPE_BOUNDS

        return self.held.sample(limit, SHAPE_BOUNDS)

    def arrays(self, kind_spec: tuple[Any, ...], name: str) -> tuple[list[Any] | None, list[Any]]:
        return self.held.arrays(kind_spec, name)


@dataclass(frozen=True)
class HeldOutput:
    """One export column of values the native core holds (`source`'s column `part`)."""

    source: HeldPaths | HeldBlob
    part: int = 0


def _spelt(value: Any, nodes: int, budget: Any) -> Any:
    """A path's value as split_columns writes it."""
    from cqlsh_ext.render.path_values import SCALARS, machine_value

    if value is None or type(value) in SCALARS or is_plain(value, nodes):
        return value
    return machine_value(value, budget)


def _held_column(chunk: Any) -> bool:
    from cqlsh_ext.payload.native import is_held_column

    return is_held_column(chunk)


def _held_contents(chunk: Any) -> bool:
    from cqlsh_ext.payload.native import is_held_contents

    return is_held_contents(chunk)


def flat(chunks: Sequence[Any]) -> list[Any]:
    """A column's chunks (lists, or columns the native core holds) as one list of Python values."""
    out: list[Any] = []
    for chunk in chunks:
        if isinstance(chunk, list):
            out += chunk
        elif _held_contents(chunk):
            out += chunk.stored()
        elif _held_column(chunk):
            out += chunk.to_pylist()
        else:
            out += list(chunk)
    return out


def stored_sizes(column: Any) -> list[int]:
    """The stored sizes of a blob column's values (a list of bytes or views, or HeldContents)."""
    from cqlsh_ext.payload.view import BlobView

    if _held_contents(column):
        return column.sizes()
    return [0 if v is None else len(v.stored) if isinstance(v, BlobView) else len(v) for v in column]


class Splitter:
    """Answer rows to the export's columns, column by column: blobs decoded as the display
    decodes them (the session's settings, WITH's overrides), paths' values as JSON-able values.
    Plain data: Spark executors make their own from the same arguments."""

    def __init__(self, roles: Sequence[str], settings: Any, places: Sequence[Any], cap: int,
                 like: Splitter | None = None) -> None:
        from cqlsh_ext.output.spellings import Blobs, JsonSpelling
        from cqlsh_ext.payload.budget import Budget

        self.roles = list(roles)
        self.places = list(places)
        self.blobs: Blobs
        self.json: JsonSpelling
        self.raw: bool
        self.budget: Budget
        if like is not None:  # the same settings, for other columns
            self.blobs, self.json, self.raw, self.budget = like.blobs, like.json, like.raw, like.budget
            return
        self.blobs = Blobs(settings)
        self.json = JsonSpelling(settings)
        self.raw = bool(settings.raw_blobs)
        self.budget = Budget.for_cap(cap)

    def split_chunks(self, columns: Sequence[Sequence[Any]]) -> list[list[Any] | HeldOutput]:
        """The export's columns of the answer's columns given in chunks (each a list of values, or
        a column the native core holds: a page's kept rows): a path whose every chunk the core
        holds, and a blob on the core, as HeldOutputs (laid out by the core); the others as
        split_columns gives them."""
        out: list[list[Any] | HeldOutput] = []
        for i, role in enumerate(self.roles):
            chunks = columns[i]
            if role == PATH and chunks and all(_held_column(c) for c in chunks):
                out.append(HeldOutput(HeldPaths(chunks, self.budget)))
                continue
            if role == BLOB:
                held = self._held_blob(chunks, self.places[i])
                if held is not None:
                    out += [HeldOutput(held, part) for part in range(HeldBlob.parts)]
                    continue
            one = Splitter([role], None, [self.places[i]], 0, like=self)
            out += one.split_columns([flat(chunks)])
        return out

    def _held_blob(self, chunks: Sequence[Any], place: Any) -> HeldBlob | None:
        """A blob column's chunks as the core's reading (a chunk of stored values read now, a
        page at a time: hold_page); None where the core does not decode this column."""
        if self.blobs.mode == "none" or not chunks:
            return None
        engine = self.blobs.engines(place)
        if not all(_held_contents(c) for c in chunks) and not engine.on_core():
            return None
        from cqlsh_ext.payload import native

        held: list[Any] = []
        for chunk in chunks:
            if _held_contents(chunk):
                held.append(chunk)
                continue
            try:
                held.append(native.hold_page(list(chunk), engine.cap))
            except Exception:  # (should not happen) the Python road reads the column
                return None
        return HeldBlob(held, self, place)

    def split(self, rows: Sequence[Sequence[Any]]) -> list[list[Any]]:
        """The export's columns of answer rows."""
        width = len(self.roles)
        return self.split_columns([list(column) for column in zip(*rows, strict=True)] if rows
                                  else [[] for _ in range(width)])

    def split_columns(self, columns: Sequence[list[Any]]) -> list[list[Any]]:
        """The export's columns of the answer's columns (one list per answer column)."""
        from cqlsh_ext.render.path_values import SCALARS, machine_value

        out: list[list[Any]] = []
        budget = self.budget
        as_they_are = frozenset((type(None), *SCALARS))  # exactly these types: no walk, no call
        for i, role in enumerate(self.roles):
            values = columns[i]
            if role == PATH:
                # A scalar (machine_value returns it as it is) and a value parsed from JSON are
                # JSON-able as they are: only others are spelt.
                nodes = budget.nodes
                out.append([v if type(v) in as_they_are or is_plain(v, nodes) else machine_value(v, budget)
                            for v in values])
            elif role == BLOB:
                out += self.blob_columns(values, self.places[i])
            else:
                out.append(values)
        return out

    def blob_columns(self, values: Sequence[Any], place: Any) -> list[list[Any]]:
        """The five columns of a blob column's values (payload, label, kind, note, stored bytes):
        a page's stored values decoded together on the native core (payload.native.page_contents: its kinds,
        labels, texts and trees, no view made), what it cannot say alone read from the value's view
        (blob_parts), as the Python engine reads every value without the core."""
        from cqlsh_ext.payload.native import page_contents
        from cqlsh_ext.payload.view import RECORD, TEXT, UNKNOWN

        found = [i for i, v in enumerate(values) if type(v) is bytes and v]
        contents = None
        if found and self.blobs.mode != "none":
            contents = page_contents(self.blobs.engines(place), [values[i] for i in found])
        if contents is None:
            parts = [self.blob_parts(v, place) for v in values]
            return [list(column) for column in zip(*parts, strict=True)] if parts else [[] for _ in range(5)]
        payloads: list[Any] = [None] * len(values)
        labels: list[Any] = [None] * len(values)
        kinds: list[Any] = [None] * len(values)
        notes: list[Any] = [None] * len(values)
        stored: list[Any] = [None] * len(values)
        done = set(found)
        for i, v in enumerate(values):  # nulls, empty values, views the query made: one by one
            if i not in done:
                payloads[i], labels[i], kinds[i], notes[i], stored[i] = self.blob_parts(v, place)
        raw, budget, nodes = self.raw, self.budget, self.budget.nodes
        for j, i in enumerate(found):
            view = contents.viewed[j]
            if view is not None:
                payloads[i], labels[i], kinds[i], notes[i], stored[i] = self.blob_parts(view, place)
                continue
            kind = contents.kinds[j]
            kinds[i] = kind
            if kind == UNKNOWN:  # no known format: nothing but the stored bytes to say
                stored[i] = values[i]
                continue
            labels[i] = contents.labels[j]
            if raw:
                stored[i] = values[i]
            tree = contents.trees[j]
            if kind == TEXT:
                payloads[i] = contents.texts[j] if tree is None else tree
            elif kind == RECORD:
                if is_plain(tree, nodes):
                    payloads[i] = tree
                else:
                    from cqlsh_ext.payload.formats.tree import jsonable_cut

                    payload, cut = jsonable_cut(tree, budget)
                    if cut:
                        notes[i], stored[i] = f"cut: {cut}", values[i]
                    else:
                        payloads[i] = payload
        return [payloads, labels, kinds, notes, stored]

    def cql_json(self, value: Any) -> str:
        """A CQL value with no Arrow type of its own (a blob inside a collection, a custom type)
        as the JSON writer spells it."""
        return self.json.value(value)

    def blob_parts(self, value: Any, place: Any) -> tuple[Any, Any, Any, Any, Any]:
        """(payload, label, kind, note, stored bytes) of one blob value (bytes, or its view when
        the query decoded it already)."""
        from cqlsh_ext.payload.view import RECORD, TEXT, UNKNOWN

        if value is None:
            return None, None, None, None, None
        stored = self.blobs.stored(value)
        view = self.blobs.view(value, place)
        if view is None:  # decoding off, or an empty value
            return None, None, UNKNOWN, None, stored
        kind = view.kind
        if kind != TEXT and kind != RECORD:  # no payload to type: the stored bytes keep it
            note = view.object_class or (None if view.quiet else view.reason)
            return None, view.label or None, kind, note, stored
        if view.cut:
            from cqlsh_ext.output.spellings import cut_text

            return None, view.label, kind, f"cut: {cut_text(view)}", stored
        if kind == TEXT:
            tree = view.tree
            payload = view.text if tree is None else tree
        else:
            from cqlsh_ext.payload.formats.tree import jsonable_cut

            payload, cut = jsonable_cut(view.record, self.budget)
            if cut:
                return None, view.label, kind, f"cut: {cut}", stored
        return payload, view.label, kind, view.reason, stored if self.raw else None
