"""DESCRIBE PAYLOAD's aggregate: what one column's values hold, filled page by page and merged
exactly (an Aggregate, scanning/aggregate.py: the shell's own reading, its worker processes,
a sample's slices and Spark's tasks each fill one).

Per *place* of the column (the blob itself; in a map of blobs, each key's value, keys that look
like data folded into `m[*]`; a UDT's blob field `u.payload`; a list's blobs `l[]`; a text
column's text) it counts the values, their encodings (kind, label, cut: describe.views) and the
structure of their trees (describe.structure). A WHERE's payload conditions are a payload query's
evaluator (query.evaluate): the rows that do not match are read and counted, not described.
Values are decoded by the value engine, one per place, a page of a place's values at a time.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any

from cqlsh_ext.cql.types import SEQUENCES, UDT, CqlType, from_driver
from cqlsh_ext.describe import views
from cqlsh_ext.describe.sketch import EXACT, LONG_TEXT, P, Values
from cqlsh_ext.describe.structure import LONG_KEY, MAX_PATHS, Structure, data_kind
from cqlsh_ext.payload import budget
from cqlsh_ext.payload.arrow_rows import ArrowRows
from cqlsh_ext.payload.confidence import confidence_of
from cqlsh_ext.payload.describe_bounds import DescribeBounds
from cqlsh_ext.payload.described import DescribedValues, describe_page
from cqlsh_ext.payload.places import Decoding, Engines, ValuePlace
from cqlsh_ext.payload.server_rows import ServerRows
from cqlsh_ext.payload.view import FAILED
from cqlsh_ext.payload_select.keys import MAX_DEPTH, MAX_VISITS
from cqlsh_ext.query.answer import PathsSeen

if TYPE_CHECKING:
    from cqlsh_ext.scanning.estimate import Figure

#: Places a column is described in at the most: a map's keys past it fold into `m[*]`.
MAX_PLACES = 64
#: Distinct reasons kept per place for failed and cut values; more count as "other".
MAX_REASONS = 10
class DescribedPlace:
    """One place's values: how many, their encodings, the structure of their trees. `name` is how
    a query reaches it (`data`, `m['k']`, `u.payload`) or, where it cannot, how reports call it
    (`m[*]`, `l[]`)."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.values = 0
        #: (kind, label, cut, confidence) -> values
        self.encodings: dict[tuple[str, str, bool, str | None], int] = {}
        #: Why values failed or were cut -> values (at most MAX_REASONS, then "other").
        self.reasons: dict[str, int] = {}
        self.structure = Structure()
        #: A folded place (`m[*]`): what its keys looked like, and how many distinct.
        self.key_kinds: dict[str, int] = {}
        self.keys: Values | None = None

    def add(self, read: views.ViewRead) -> None:
        self.values += 1
        cut = read.cut
        if read.tree is not views.NO_TREE:
            cut = self.structure.add(read.tree) or cut
        key = (read.kind, read.label, cut, read.confidence)
        self.encodings[key] = self.encodings.get(key, 0) + 1
        if read.reason and (cut or read.kind == FAILED):
            _count(self.reasons, read.reason)

    def merge(self, other: DescribedPlace) -> None:
        self.values += other.values
        for key, n in other.encodings.items():
            self.encodings[key] = self.encodings.get(key, 0) + n
        for reason, n in other.reasons.items():
            _count(self.reasons, reason, n)
        for kind, n in other.key_kinds.items():
            self.key_kinds[kind] = self.key_kinds.get(kind, 0) + n
        if other.keys is not None:
            if self.keys is None:
                self.keys = Values()
            self.keys.merge(other.keys)
        self.structure.merge(other.structure)

    def add_key(self, key: Any) -> None:
        """A folded place's value came under `key`: what it looked like, and its distinct count."""
        text = key if isinstance(key, str) else str(key)
        kind = data_kind(text) or PAST_PLACES
        self.key_kinds[kind] = self.key_kinds.get(kind, 0) + 1
        if self.keys is None:
            self.keys = Values()
        self.keys.add(key if isinstance(key, (str, int, float, bytes)) else text)


def _count(reasons: dict[str, int], reason: str, n: int = 1) -> None:
    if reason not in reasons and len(reasons) >= MAX_REASONS:
        reason = "other"
    reasons[reason] = reasons.get(reason, 0) + n


def map_key(key: Any) -> str:
    """A map key as a path writes it: m['key'] (quotes doubled), m[5]."""
    if isinstance(key, str):
        return "'" + key.replace("'", "''") + "'"
    return str(key)


class Description:
    """The aggregate (see the module doc). `decoding`: how values decode (-d's mode, the cap, the
    column settings matched on each place below `place`, the column's); `evaluator`: the WHERE's
    payload conditions (a query.evaluate.Evaluator), None without any."""

    def __init__(self, query: str, column: str, decoding: Decoding, place: ValuePlace | None = None,
                 evaluator: Any = None) -> None:
        self.query = query
        self.column = column
        self.decoding = decoding
        self.place = place or ValuePlace(None, None, column)
        self.cap = decoding.cap
        self.evaluator = evaluator
        #: Rows read; rows the WHERE's payload conditions kept (all of them without any).
        self.read = 0
        self.matched = 0
        #: Kept rows whose column is null (or an empty collection).
        self.nulls = 0
        #: Values the WHERE could not read (undecodable or cut): such a row matches no condition.
        self.where_unread = 0
        self.places: dict[str, DescribedPlace] = {}
        #: The WHERE's paths: which some value had (a typo is otherwise only "0 rows matched").
        self.paths = PathsSeen()
        self.interrupted = False
        self.error: str | None = None
        self.scan = ""
        #: Errors retried by name (the reading's: scanning).
        self.retried: dict[str, int] = {}
        self.engines = Engines(decoding)
        self._names: list[str] = []
        self._index = -1
        self._cqltype: CqlType | None = None

    # ------------------------------------------------------------------ the Aggregate protocol

    @property
    def rows(self) -> int:
        return self.read

    def fresh(self) -> Description:
        """An empty part: a worker's, a slice's, a Spark task's (the engines are shared in this
        process; a worker process or an executor has its own)."""
        part = Description(self.query, self.column, self.decoding, self.place, self.evaluator)
        part.engines = self.engines
        if self._names:
            part._names, part._index, part._cqltype = self._names, self._index, self._cqltype
        return part

    @property
    def pages_in(self) -> bool:
        """Pages are read as the server sent them (scanning.pages_in) where the value engine reads
        them whole (payload.running.reads_pages_whole): the column's cells from the page's bytes
        (a WHERE's payload conditions in the same call, query.evaluate: else the driver's rows)."""
        from cqlsh_ext.payload.running import reads_pages_whole
        from cqlsh_ext.scanning import pages_in

        on_core = self.evaluator is None or self.evaluator.on_core
        return pages_in.enabled() and reads_pages_whole() and bool(on_core)

    def set_columns(self, names: Sequence[str], types: Sequence[Any]) -> None:
        self._names = list(names)
        if self.column not in self._names:
            raise ValueError(f"the result has no column {self.column}")
        self._index = self._names.index(self.column)
        self._cqltype = from_driver(types[self._index])

    def add_rows(self, rows: Sequence[Sequence[Any]]) -> None:
        self.read += len(rows)
        decoded: list[Any] | None = None
        if self.evaluator is not None:
            # The WHERE's reading is the description's: a kept row's blob comes with the view the
            # evaluator made of it (the column is what the WHERE's plan selects), decoded once.
            page = self.evaluator.answer_page(self._names, rows)
            self.where_unread += page.undecodable + page.cut
            self.paths.add(*self.evaluator.walked())
            rows = [rows[k] for k, _ in page.found]
            decoded = [result.views.get(self.column) for _, result in page.found]
        elif isinstance(rows, (ServerRows, ArrowRows)):  # the server's page (pages in), an Arrow batch
            self.matched += len(rows)
            if not self._page_whole(rows):  # the column alone made by the driver
                self.add_cells(rows.column(self._index))
            return
        self.matched += len(rows)
        self.add_cells([row[self._index] for row in rows], decoded)

    def merge(self, other: Description) -> None:
        self.read += other.read
        self.matched += other.matched
        self.nulls += other.nulls
        self.where_unread += other.where_unread
        self.paths.merge(other.paths)
        for name, theirs in other.places.items():
            mine = self.places.get(name)
            if mine is None:
                self.places[name] = mine = DescribedPlace(name)
            mine.merge(theirs)
        self.interrupted = self.interrupted or other.interrupted
        self.error = self.error or other.error

    def __getstate__(self) -> dict[str, Any]:
        # Sent back from a worker process or a Spark task: the engines (their remembered
        # containers) and the evaluator stay behind.
        state = dict(self.__dict__)
        state.update(engines=None, evaluator=None)
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self.engines = Engines(self.decoding)

    # ------------------------------------------------------------------ the values

    def add_cells(self, cells: list[Any], decoded: Sequence[Any] | None = None) -> None:
        """The column's values of the kept rows: grouped by place, each place's decoded together.
        `decoded`: per cell, the view a reading made of it already (a blob column's), or None."""
        cqltype = self._cqltype
        assert cqltype is not None, "set_columns first"
        if decoded is not None and cqltype.is_blob:
            place = self.places.get(self.column)
            if place is None:
                place = self.places[self.column] = DescribedPlace(self.column)
            for view in decoded:
                if view is not None:
                    place.add(views.read_view(view))
            place.structure.flush()
            cells = [cell for cell, view in zip(cells, decoded, strict=True) if view is None]
        by_place: dict[str, tuple[tuple[str, ...], list[Any]]] = {}
        folded: list[tuple[str, Any]] = []
        new = 0  # places this page adds
        if cqltype.is_blob or cqltype.is_text:
            # the column is the payload (what _found yields for each cell, without a walk a cell)
            present = [cell for cell in cells if cell is not None]
            self.nulls += len(cells) - len(present)
            if present:
                by_place[self.column] = ((), present)
            cells = []
        for cell in cells:
            found = False
            for name, steps, value, key in _found(cqltype, cell, self.column, ()):
                found = True
                group = by_place.get(name)
                if group is None:
                    if (key is not _NO_KEY and name not in self.places
                            and len(self.places) + new >= MAX_PLACES):
                        name = _folded(name)  # a map with more keys than places are described in
                    group = by_place.get(name)
                    if group is None:
                        group = by_place[name] = (steps, [])
                        new += name not in self.places
                group[1].append(value)
                if key is not _NO_KEY and name.endswith(_FOLD):
                    folded.append((name, key))
            if not found:
                self.nulls += 1
        for name, (steps, values) in by_place.items():
            place = self.places.get(name)
            if place is None:
                place = self.places[name] = DescribedPlace(name)
            self._describe(place, steps, values, cqltype)
            place.structure.flush()  # the page's leaves counted now: memory stays a page's
        for name, key in folded:
            self.places[name].add_key(key)

    def _page_whole(self, page: ServerRows | ArrowRows) -> bool:
        """A blob column of the server's page or an Arrow batch described by the value engine from
        the page itself (payload.described: on the native core from the page's bytes or Arrow's
        buffers, its nulls counted); False for a column of another type: the caller reads the
        page's column."""
        cqltype = self._cqltype
        assert cqltype is not None, "set_columns first"
        if not cqltype.is_blob:
            return False
        answer = describe_page(self.engines(self.place), page, BOUNDS, self._index)
        self.nulls += answer.nulls
        if page.row_count > answer.nulls:
            place = self.places.get(self.column)
            if place is None:
                place = self.places[self.column] = DescribedPlace(self.column)
            _merge(place, answer, self.cap)
            place.structure.flush()
        return True

    def _describe(self, place: DescribedPlace, steps: tuple[str, ...], values: list[Any],
                  cqltype: CqlType) -> None:
        """A page of one place's values described into `place` by the place's engine
        (payload.described: the values it read in one call merged, the views of the others read
        here)."""
        if cqltype.is_text:  # text is never decoded; its JSON read within a value's budget
            token = budget.enter(budget.Budget.for_cap(self.cap))
            try:
                for read in [views.read_text(v) for v in values]:
                    place.add(read)
            finally:
                budget.leave(token)
            return
        engine = self.engines(self.place.child(*steps))
        _merge(place, describe_page(engine, [bytes(v) for v in values], BOUNDS), self.cap)

    # ------------------------------------------------------------------ figures

    def figures(self) -> list[Figure]:
        """None: DESCRIBE PAYLOAD's sample is a number of rows, never a precision to reach
        (scanning.sample judges figures only for SAMPLE UNTIL)."""
        return []

    def snapshot(self) -> dict[tuple[str, ...], int]:
        """Additive counters, flat by key: one sample slice's totals (scanning.sample.Totals),
        from which the shares' intervals are estimated."""
        out: dict[tuple[str, ...], int] = {("rows",): self.read, ("matched",): self.matched,
                                           ("nulls",): self.nulls}
        for name, place in self.places.items():
            out[("values", name)] = place.values
            for (kind, label, cut, _sure), n in place.encodings.items():
                out[("encoding", name, kind, label, "cut" if cut else "")] = n
            out[("trees", name)] = place.structure.values
            for path, _depth, _step, node in place.structure.walk(name):
                out[("present", name, path)] = node.present
                out[("seen", name, path)] = node.seen
                for type_name, n in node.types.items():
                    out[("type", name, path, type_name)] = n
        return out


#: The bounds of structure.py and sketch.py a page's description keeps to.
BOUNDS = DescribeBounds(MAX_PATHS, MAX_VISITS, MAX_DEPTH, EXACT, LONG_TEXT, LONG_KEY, P)


def _merge(place: DescribedPlace, answer: DescribedValues, cap: int) -> None:
    """A page's description (payload.described) added to `place`: the values read in one call
    as a part merged, then each other value's view read as any view is."""
    if answer.structure is not None:
        part = DescribedPlace(place.name)
        for kind, label, n in answer.encodings:
            key = (kind, label, False, confidence_of(label, kind))  # read in one call: auto-detected
            part.encodings[key] = part.encodings.get(key, 0) + n
            part.values += n
        part.structure = Structure.from_partial(answer.structure)
        place.merge(part)
    for read in views.read_all(answer.views, cap):
        place.add(read)


_NO_KEY: Any = object()
#: How a map's place is called when its keys are data (or past MAX_PLACES): `m[*]`.
_FOLD = "[*]"
#: What the keys of a folded place looked like when they were no data but past MAX_PLACES.
PAST_PLACES = f"keys past {MAX_PLACES} places"


def _folded(name: str) -> str:
    return name[:name.rindex("[")] + _FOLD


def _found(cqltype: CqlType, value: Any, name: str, steps: tuple[str, ...], key: Any = _NO_KEY
           ) -> Iterator[tuple[str, tuple[str, ...], Any, Any]]:
    """(place name, steps below the column as column settings name them, value, the map key it
    is under or _NO_KEY) of each payload in a cell: a blob, or a text column's text. A map of
    blobs keyed by scalars names each key's value `m['key']`, or `m[*]` when the key looks like
    data (structure.data_kind)."""
    if value is None:
        return
    if cqltype.is_blob or (not steps and cqltype.is_text):
        yield name, steps, value, key
        return
    kind = cqltype.kind
    if kind in SEQUENCES and cqltype.params:
        for item in value:
            yield from _found(cqltype.params[0], item, f"{name}[]", (*steps, "item"))
    elif kind == "map" and len(cqltype.params) == 2:
        key_type, value_type = cqltype.params
        for map_key_value, item in value.items():
            yield from _found(key_type, map_key_value, f"{name}[key]", (*steps, "key"))
            text = map_key_value if isinstance(map_key_value, str) else str(map_key_value)
            if key_type.scalar and data_kind(text) is None:
                yield from _found(value_type, item, f"{name}[{map_key(map_key_value)}]", (*steps, "value"),
                                  map_key_value)
            else:
                yield from _found(value_type, item, f"{name}{_FOLD}", (*steps, "value"), map_key_value)
    elif kind == UDT:
        fields = cqltype.fields or ()
        items = list(value) if isinstance(value, tuple) else [getattr(value, f, None) for f in fields]
        for field_name, sub, item in zip(fields, cqltype.params, items, strict=False):
            yield from _found(sub, item, f"{name}.{field_name}", (*steps, field_name))
    elif kind == "tuple":
        for i, (sub, item) in enumerate(zip(cqltype.params, value, strict=False)):
            yield from _found(sub, item, f"{name}[{i}]", (*steps, str(i)))
