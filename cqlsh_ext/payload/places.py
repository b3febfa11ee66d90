"""Where a value sits and how it decodes there: the one way to get a value engine for a place.

A place is a column of a table and, inside collections, tuples and UDTs, the steps to a blob
(ValuePlace); column settings (DECODE, --decode) match on it. `Decoding` is how a reader's
values decode: -d's mode, the output cap, the column settings; `Engines` gives one value engine
(payload.engine.ValueEngine) per place, made on first use, with the setting of that place as
its mode. Every reader that decodes the values of places takes its engines here: the display,
the JSON, CSV and Parquet writers, payload queries (query.evaluate), DESCRIBE PAYLOAD, COMPRESSION
STATS and ADVISE, key completion's sample.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from cqlsh_ext.codecs.base import DEFAULT_CAP
from cqlsh_ext.payload.engine import ValueEngine
from cqlsh_ext.payload.sibling import chosen
from cqlsh_ext.payload.spec import place_candidates


@dataclass(frozen=True, slots=True)
class ValuePlace:
    """Where a value sits in a result: keyspace, table, column and, inside collections, tuples
    and UDTs, the path to it. Column settings match on it; reports name values by it."""

    keyspace: str | None
    table: str | None
    column: str
    #: Steps below the column: "item" (list, set, vector), "key" / "value" (map), a tuple's
    #: position ("0", "1", ...) or a UDT field's name.
    path: tuple[str, ...] = ()

    def child(self, *steps: str) -> ValuePlace:
        """The place `steps` below this one."""
        return ValuePlace(self.keyspace, self.table, self.column, (*self.path, *steps))

    def __str__(self) -> str:
        """keyspace.table.column[.step...]; parts that are not known are left out."""
        head = ".".join(part for part in (self.keyspace, self.table) if part)
        name = f"{head}.{self.column}" if head else self.column
        return ".".join((name, *self.path))


@dataclass(frozen=True)
class Decoding:
    """How a reader's values decode: -d's mode ('auto', a codec's name, or 'none': display off,
    paths refused), the output cap (--max-output-size), and the column settings (`settings`: a
    setting key, `ks.table.column[.step]` as DECODE writes it, to its spec text). Plain data: it
    travels to worker processes and Spark's executors."""

    mode: str = "auto"
    cap: int = DEFAULT_CAP
    settings: Mapping[str, str] = field(default_factory=dict)

    def spec(self, place: ValuePlace | None) -> str | None:
        """The column setting of a place (the most specific key that names it), or None: the one
        lookup of DECODE and --decode settings."""
        if place is None or not self.settings:
            return None
        settings = self.settings
        return next((settings[key] for key in place_candidates(str(place)) if key in settings), None)


def column_place(name: str) -> ValuePlace:
    """The place of a result's column named `name` where its table is not known (a payload
    column of a report: `data`, or a place inside it as cql.types spells it, `m.value`)."""
    return ValuePlace(None, None, name)


class Engines:
    """One value engine per place, made on first use (see the module doc)."""

    __slots__ = ("_by_place", "decoding")

    def __init__(self, decoding: Decoding) -> None:
        self.decoding = decoding
        self._by_place: dict[ValuePlace | None, ValueEngine] = {}

    def __call__(self, place: ValuePlace | None) -> ValueEngine:
        """The place's engine (None: a value whose place is not known, no column setting)."""
        engine = self._by_place.get(place)
        if engine is None:
            decoding = self.decoding
            engine = self._by_place[place] = ValueEngine(decoding.mode, decoding.cap, decoding.spec(place))
        return engine

    def all_on_core(self, places: Iterable[ValuePlace | None]) -> bool:
        """Whether every place's engine reads pages whole on the native core (auto mode, no column
        setting, the core on): a reading then takes the blobs it gives as the engine holds them
        (payload.program.Given.held)."""
        return all(self(place).on_core() for place in places)

    def sibling(self, place: ValuePlace | None) -> str | None:
        """The column whose value picks the chain of this place's values, row by row (a `by`
        setting: payload.sibling), else None."""
        choice = self(place).choice
        return None if choice is None else choice.column

    def with_siblings(self, place: ValuePlace | None, values: Sequence[Any], names: Sequence[str],
                      rows: Sequence[Sequence[Any]]) -> list[Any]:
        """`values` (the page's values of `place`, one a row of `rows`, whose columns are `names`)
        as this place's engine takes them: with their row's sibling value when a `by` setting picks
        their chain and the sibling column is among `names` (payload.sibling.chosen); as they are
        otherwise (the engine then notes which column to read beside them)."""
        column = self.sibling(place)
        if column is None:
            return list(values)
        at = sibling_index(column, names)
        if at is None:
            return list(values)
        return chosen(values, [row[at] for row in rows])


def sibling_index(column: str, names: Sequence[str]) -> int | None:
    """Where the sibling column is among a result's column names (CQL folds unquoted names)."""
    wanted = column.strip('"') if column.startswith('"') else column
    for at, name in enumerate(names):
        if name == wanted or (not column.startswith('"') and name.lower() == wanted):
            return at
    return None


__all__ = ["Decoding", "Engines", "ValuePlace", "column_place", "sibling_index"]
