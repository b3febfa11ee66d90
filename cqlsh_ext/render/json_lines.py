"""A typed answer's rows as JSON objects, one a line, exactly as `--output-format json` prints the
same SELECT (output.writers' JsonLinesWriter, output.spellings' JsonSpelling: a blob as its label,
kind and payload; a path's or an aggregate's value as render.path_values.machine_value spells it).
`cqlsh-ext mcp` answers its rows with it; COPY (SELECT ...) TO 'f.jsonl' writes it.

A row is spelt from its columns: the keys once per answer, each value by its column's spelling.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import partial
from json.encoder import encode_basestring as encode_string
from typing import TYPE_CHECKING, Any

from cqlsh_ext.common import jsonenc
from cqlsh_ext.common.long_int import PAST_PYTHON_DIGITS

if TYPE_CHECKING:
    from cqlsh_ext.payload.columns import AnswerColumn, ColumnValues, JsonSpelt
    from cqlsh_ext.payload.places import ValuePlace
    from cqlsh_ext.settings import DisplaySettings

Row = Sequence[Any]


class JsonRows:
    """The spelling of one answer's rows (`columns`: its AnswerColumns; `places`: where each
    column's values sit, for the column settings)."""

    def __init__(self, columns: Sequence[AnswerColumn], settings: DisplaySettings,
                 places: Sequence[ValuePlace | None]) -> None:
        from cqlsh_ext.output.spellings import JsonSpelling
        from cqlsh_ext.payload.budget import Budget

        self.names = [c.name for c in columns]
        self.keys = [jsonenc.string(name) for name in self.names]
        self.types = [c.cql_type for c in columns]
        self.places = list(places)
        self.spelling = JsonSpelling(settings)
        #: Columns whose values a path found or an aggregate computed (no CQL type).
        self.found = [c.cql_type is None for c in columns]
        self.budget = Budget.for_cap(settings.cap)
        self._columns_spelt: list[JsonSpelt] | None = None

    def values(self, row: Row) -> dict[str, Any]:
        """One row's JSON object as JSON values, what json.loads of its line gives, made from the
        values themselves (no text spelt and read back: JsonSpelling.tree)."""
        from cqlsh_ext.payload.path_values import machine_value

        tree, budget = self.spelling.tree, self.budget
        out: dict[str, Any] = {}
        for name, value, cqltype, place, found in zip(self.names, row, self.types, self.places, self.found,
                                                      strict=True):
            if found:
                value = machine_value(value, budget)
            out[name] = tree(value, cqltype, place)
        return out

    def _found(self, place: ValuePlace | None, value: Any) -> str:
        """A found value that is no scalar (a record's part, an undecodable group) as its line spells it."""
        from cqlsh_ext.payload.path_values import machine_value

        return self.spelling.value(machine_value(value, self.budget), None, place)

    def _spelt(self, cqltype: Any, place: ValuePlace | None, found: bool) -> JsonSpelt:
        """How one column's values are spelt (payload.columns.JsonSpelt)."""
        from cassandra import cqltypes

        from cqlsh_ext.payload.columns import JsonSpelt

        spelling = self.spelling
        if found:
            other = partial(self._found, place)
            return JsonSpelt(lambda v: spelling.found_value(v, other),
                             lambda values: spelling.found_column(values, other), found=True)
        many = partial(spelling.column, cqltype=cqltype, place=place)
        if cqltype is not None and is_blob_type(cqltype):
            return JsonSpelt(lambda stored: spelling.value(stored, cqltypes.BytesType, place), many,
                             spelling.blob_head, spelling.BLOB_TEXTS, bool(spelling.raw))
        return JsonSpelt(lambda v: spelling.value(v, cqltype, place), many)

    def batch_bytes(self, columns: Sequence[ColumnValues]) -> bytes:
        """A batch's rows (its columns: payload.columns.ColumnValues) as one UTF-8 buffer, a JSON
        object a line, each ended by a newline (a file's batch): each column spelt at once, a blob
        column the native core read and a path's column it holds laid out by the core
        (payload.columns.json_lines)."""
        from cqlsh_ext.payload.columns import json_lines

        if self._columns_spelt is None:
            self._columns_spelt = [self._spelt(t, p, f)
                                   for t, p, f in zip(self.types, self.places, self.found, strict=True)]
        return json_lines(self.keys, columns, self._columns_spelt)


    def answer_rows(self, columns: Sequence[ColumnValues], cut: tuple[int, int], text: Callable[[Any], str],
                    screens: Sequence[str | Callable[[Any], Any] | None],
                    ) -> tuple[list[bytes | None], list[int]]:
        """An MCP answer's rows of a batch (mcp_server/answers.py): values() of each row as compact
        JSON, laid out as batch_bytes lays a file's out (payload.columns.answer_rows), the core
        writing what it read compact with the answer's `cut` (chars, items) looked at there; None
        for a row the answer spells from values(): `text` (a value's JSON value's compact JSON)
        gave a NUL where the answer spells the value otherwise; and each row's quotes and
        backslashes. `screens`, each column's: None (as it is), a JSON text (every value answered
        so) or a function of its JSON value (the column's values made JSON values here)."""
        from cqlsh_ext.payload.columns import answer_rows

        spelt = [self._answer_spelt(t, p, f, screen, text, cut[0])
                 for t, p, f, screen in zip(self.types, self.places, self.found, screens, strict=True)]
        return answer_rows(self.keys, columns, spelt, cut)

    def _answer_spelt(self, cqltype: Any, place: ValuePlace | None, found: bool,
                      screen: str | Callable[[Any], Any] | None, text: Callable[[Any], str],
                      chars: int) -> JsonSpelt:
        """How one column's values are spelt in an MCP answer (answer_rows): a CQL column's
        common values (an int Python spells, a str of at most `chars` characters) spelt here as
        `text` spells them, no JSON value made."""
        from cqlsh_ext.payload.columns import JsonSpelt
        from cqlsh_ext.payload.path_values import machine_value

        spelling, budget = self.spelling, self.budget
        if isinstance(screen, str):
            return JsonSpelt(lambda value: screen, lambda values: [screen] * len(values), same=screen)

        def tree(value: Any) -> Any:
            if found:
                value = machine_value(value, budget)
            return spelling.tree(value, cqltype, place)

        if screen is not None:
            redacted = screen

            def spell(value: Any) -> str:
                return text(redacted(tree(value)))

            return JsonSpelt(spell, lambda values: list(map(spell, values)))

        def plain(value: Any) -> str:
            return text(tree(value))

        def many(values: list[Any]) -> list[str]:
            return list(map(plain, values))

        exact = spelling.common_type(cqltype)

        def common(values: list[Any]) -> list[str]:
            if exact is int:
                return [str(v) if type(v) is int and -PAST_PYTHON_DIGITS < v < PAST_PYTHON_DIGITS
                        else plain(v) for v in values]
            return [encode_string(v) if type(v) is str and len(v) <= chars else plain(v) for v in values]

        if found:
            return JsonSpelt(plain, many, found=True)
        if cqltype is not None and is_blob_type(cqltype):
            return JsonSpelt(plain, many, partial(spelling.blob_head, compact=True),
                             spelling.COMPACT_BLOB_TEXTS, bool(spelling.raw))
        return JsonSpelt(plain, common if exact is not None else many)


def is_blob_type(cqltype: Any) -> bool:
    """Whether a column of this driver type holds blobs (the JSON and CSV rows spell them so)."""
    from cqlsh_ext.cql.types import from_driver

    return bool(from_driver(cqltype).is_blob)
