"""A payload query's plan as the value engine answers it a page at a time, in plain dataclasses:
query/evaluate.py compiles a plan into a PageProgram (places and their paths, the conditions with
their literals as Python values, the projected, ORDER BY and GROUP BY paths, the aggregates), and
payload.engine.query_program gives the program that answers a page in one call where the engine
reads every place whole (on the native core, whose own request only payload/native.py makes
from these). Its answer (PageProgramAnswer) is the page's: the rows the engine leaves to the
caller's Python evaluator (passed in as a function) are read by it and merged in there, so a
reader never learns which rows they were, nor which engine read the others.

Paths are referred to by (place, path): the place's index in `places`, the path's in its `paths`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, NamedTuple, Protocol, TypeAlias, TypeVar

from cqlsh_ext.payload.paths import Steps

__all__ = ["CompiledProgram", "Given", "GroupState", "PageProgram", "PageProgramAnswer", "PathSeen",
           "ProgramAggregate", "ProgramCondition", "ProgramPlace", "PythonReading", "Result", "TextNeedles"]

#: A path of a place: (the place's index, the path's index in it).
PathAt = tuple[int, int]


@dataclass(frozen=True)
class TextNeedles:
    """Strings a condition on a path asks for: a JSON text holding none of them (`any`) or not
    all of them, and no backslash, cannot meet it (its JSON need not be read)."""

    any: bool
    strings: tuple[str, ...]


@dataclass(frozen=True)
class ProgramPlace:
    """A blob place the plan reads (a column, or a map value or UDT field inside one): the paths
    read in its values, and the needles of the conditions on them ((path index, needles): they
    apply once some value had the path, from the page after: rejecting is a saving, never an
    answer)."""

    paths: tuple[Steps, ...]
    needles: tuple[tuple[int, TextNeedles], ...] = ()


@dataclass(frozen=True)
class ProgramCondition:
    """A condition: `op` (=, !=, <, <=, >, >=, IN, LIKE, CONTAINS, IS [NOT] NULL, IS [NOT]
    UNDECODABLE: of the place's blob itself, no path) on a path of a place, its literals as the
    statement gives them (None, bool, int, str, Decimal)."""

    op: str
    place: int
    path: int | None = None
    literals: tuple[Any, ...] = ()


@dataclass(frozen=True)
class ProgramAggregate:
    """An aggregate: `func` (count, min, max, sum, avg) of a path's values, or count(*) (`star`)."""

    func: str
    star: bool
    input: PathAt | None = None


@dataclass(frozen=True)
class Given:
    """How a payload query's answer gives the blobs it returns whole (a bare column, `*`): as the
    engine that read the statement's paths read them, so that no value is decoded twice.

    `held`: as the engine holds its reading (where every place's engine reads pages whole: the
    native core; ValueEngine.on_core, Engines.all_on_core): the page's kept rows as columns,
    the paths' values and the blobs given as the engine holds them (payload.columns: a blob's
    values are the views of that reading, payload.held_views), the rows it leaves read by the
    Python engine as views; else each blob given as the Python engine's view (on the native
    core, the view of the core's reading). `trees`: a text's JSON tree built with it (False: a
    file of text, JSON Lines or CSV, writes a text from its text); `gaps`: without `trees`, a
    JSON text's whitespace runs noted as its JSON is checked (JSON Lines writes it minified from
    them). `full`: each blob given as the Python engine's whole view, its layers and payload bytes
    (a writer re-encodes from them, edit.rewrite and rewrite.recode, and a held reading has
    neither): every place then read by the Python engine, each value once."""

    held: bool = False
    trees: bool = True
    gaps: bool = False
    full: bool = False


@dataclass(frozen=True)
class PageProgram:
    """A plan as a page's one call answers it (the module doc). `outputs` and `order`: per
    projected item and per ORDER BY key, its path (None for an item that is no path); `keys`: the
    GROUP BY paths; `undecodable_group`: the key of an undecodable value's group; `contents`: the
    places whose blobs the answer gives whole (their kept rows' contents held with their paths);
    `text_trees`, `text_gaps`: Given's `trees` and `gaps`."""

    places: tuple[ProgramPlace, ...]
    conditions: tuple[ProgramCondition, ...]
    outputs: tuple[PathAt | None, ...]
    order: tuple[PathAt | None, ...]
    keys: tuple[PathAt, ...]
    aggregates: tuple[ProgramAggregate, ...]
    grouped: bool
    cap: int
    undecodable_group: Any
    contents: tuple[int, ...] = ()
    text_trees: bool = True
    text_gaps: bool = False


@dataclass(slots=True)
class GroupState:
    """One aggregate's partial state of a group over a page (query.groups.Accumulator's fields):
    `frac_sum` the non-integer numbers' sum, exactly. (Not frozen: made per group and aggregate a
    page, where a frozen dataclass's __init__ costs four times as much.)"""

    count: int
    int_sum: int
    frac_sum: Fraction
    floats: bool
    num_min: Any
    num_max: Any
    str_min: str | None
    str_max: str | None
    skipped: int


class PathSeen(NamedTuple):
    """What a page's values told of a path: some value had it (`found`), else the deepest miss of
    the values read ((depth, the string keys there)) or None."""

    found: bool
    miss: tuple[int, list[str]] | None


Result = TypeVar("Result")
#: The caller's Python evaluator's reading of some of a page's rows (query.evaluate's
#: Evaluator.evaluate_page): (the row's index among those given, its result) of each row it keeps,
#: and the values undecodable and cut among them.
PythonReading: TypeAlias = Callable[[list[Sequence[Any]]], tuple[list[tuple[int, Result]], int, int]]


class PageProgramAnswer(Protocol):
    """A page's answer to a program. The engine's figures of the rows it read: `kept` (row
    indexes), `outputs` and `order` (per projected path and ORDER BY key, its value in each kept
    row), `held` (with `held` asked: per projected item its path's values as the engine holds
    them, a sequence of the same values; None for others), `contents` (per place of the program's
    `contents`, its kept rows' blobs), `kinds` ((kind, count) of the undecodable values: payload.view's
    kinds), `paths` (per place and path, a PathSeen), `groups` ((key, a GroupState per aggregate)).
    `rows()` and `columns()` give the page's whole answer: the rows the engine leaves read by
    the caller's `python` and merged in."""

    kept: list[int]
    outputs: list[list[Any]]
    order: list[list[Any]]
    held: list[Any]
    contents: list[Any]
    kinds: list[tuple[str, int]]
    paths: list[list[PathSeen]]
    groups: list[tuple[tuple[Any, ...], list[GroupState]]]

    def rows(self, kept: list[tuple[int, Result]],
             python: PythonReading[Result]) -> tuple[list[tuple[int, Result]], int, int, int]:
        """The page's matching rows, in its order, each (row index, result): `kept` (the kept rows
        as the reader makes them from `kept`, `outputs` and `order`) with the rows the engine
        leaves, as `python` reads them, merged in; the values undecodable and cut over the page,
        and how many rows matched."""
        ...

    def columns(self, columns: list[Sequence[Any]], python: PythonReading[Sequence[Any]]
                ) -> tuple[list[int], list[Sequence[Any]], int, int]:
        """The page's matching rows as columns: `columns` (per projected item, its values in the
        kept rows) with the rows the engine leaves, as `python` reads them (each row's values,
        one per column), put in their places; the rows' indexes in the page's order, and the
        values undecodable and cut over the page."""
        ...


class CompiledProgram(Protocol):
    """A PageProgram as the engine answers it a page at a time (payload.engine.query_program)."""

    def answer(self, rows: Sequence[Sequence[Any]], sources: Sequence[int | Sequence[Any]], *,
               held: bool, read_kept: bool) -> PageProgramAnswer | None:
        """A page's answer: `rows` the page (a list of rows, the server's page or an Arrow batch),
        `sources` per place its values (a sequence, one a row) or the index of the row's column
        that holds them (a bare blob column: the engine reads its cells from the page itself).
        `held`: the projected paths' values held by the engine (Given.held); the `contents`
        places' blobs always are (their kept rows', read with the paths); `read_kept`: of the
        server's page, the kept rows are made with those the engine leaves (else only the columns
        a reader asks for are made). None where the engine fails the call (it should not) or a sum
        overflows: the caller reads the page."""
        ...
