"""INSPECT: every blob value of a result described, one report per value (insight.inspect).

`inspect_values` reads the values and hands each report, spelt as the caller spells it (its JSON
object, or its text), to whoever asked: the shell prints them as they come (`print_values`, the
printer inspect_value's Statement names), then how many (`Inspected.closing`); `cqlsh-ext mcp` and
the Python API keep them as data."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

from cqlsh_ext.common.text import plural
from cqlsh_ext.insight import shellside as side

if TYPE_CHECKING:
    from cqlsh_ext.insight.inspect import ValueReport
    from cqlsh_ext.reading.context import ReadContext
    from cqlsh_ext.reading.read_requests import InspectRequest
    from cqlsh_ext.upstream.protocol import Out

T = TypeVar("T")


@dataclass
class Inspected:
    """What INSPECT read: rows, blob values described, null values; how it ended."""

    rows: int = 0
    values: int = 0
    nulls: int = 0
    interrupted: bool = False

    def closing(self) -> str:
        """The line after the text reports: how many values in how many rows, and how it ended."""
        note = " (interrupted)" if self.interrupted else ""
        null_note = f", {self.nulls} null" if self.nulls else ""
        return f"({plural(self.values, 'blob value')} in {plural(self.rows, 'row')}{null_note}){note}"


def inspect_values(ctx: ReadContext, request: InspectRequest, spell: Callable[[Any], T],
                   on_value: Callable[[T], bool]) -> Inspected | None:
    """Each blob value of the statement's result described (insight.inspect), spelt by `spell`
    (a report that cannot be: one that says why) and given to `on_value`, which answers False
    when it wants no more; None when nothing was inspected (ctx.error said why)."""
    from cqlsh_ext.codecs._common import reason
    from cqlsh_ext.cql.types import columns_holding, extractor
    from cqlsh_ext.insight.inspect import inspect_value, unreadable
    from cqlsh_ext.payload.places import ValuePlace
    from cqlsh_ext.scanning.consume import consume

    read = side.target(ctx, request.target, "INSPECT")
    if read is None:
        return None
    mode, cap = read.mode, read.cap
    decoding = ctx.display.decoding()  # DECODE's column settings: the value's spec
    keys = [c.name for c in read.meta.primary_key] if read.meta is not None else None
    scanner = read.scanner(ctx)
    seen = Inspected()
    extract: list[tuple[int, Any]] = []
    key_idx: list[int] = []

    def start(names: Sequence[str], types: Sequence[Any]) -> bool:
        cols = columns_holding(names, types)
        if not cols:
            ctx.error("INSPECT: the result has no blob column")
            return False
        blob_idx = {i for i, _, _ in cols}
        key_idx.extend([i for i, n in enumerate(names) if (n in keys if keys else i not in blob_idx)][:6])
        extract.extend((i, extractor(n, t)) for i, n, t in cols)
        return True

    def take(names: Sequence[str], _types: Sequence[Any], rows: list[Any]) -> bool:
        for row in rows:
            seen.rows += 1
            key = {names[i]: row[i] for i in key_idx}
            for i, ex in extract:
                if row[i] is None:
                    seen.nulls += 1
                    continue
                for path, _schema, value in ex(row[i]):
                    seen.values += 1
                    where = {"row": seen.rows, "column": path, "key": key}
                    column, *steps = path.split(".")
                    spec = decoding.spec(ValuePlace(read.keyspace, read.table, column, tuple(steps)))
                    rep = inspect_value(value, where, mode, cap, spec)
                    try:
                        spelt = spell(rep)
                    except Exception as err:  # one value's report, never the command
                        spelt = spell(unreadable(value, where, f"could not be inspected: {reason(err)}"))
                    if not on_value(spelt):
                        return False
            if ctx.stop.is_set():
                scanner.interrupted = True
                return False
        return True

    if consume(scanner, start, take) is None:
        return None
    if scanner.error is not None:
        side.failed(ctx, scanner.error)
        return None
    seen.interrupted = scanner.interrupted
    return seen


def print_values(ctx: ReadContext, request: InspectRequest, as_json: bool, out: Out, width: int) -> None:
    """INSPECT in the shell (inspect_value's Statement names it): each value's report on `out` as it
    comes, its JSON object or its text laid out for `width` columns (0: the natural width, block
    characters where `out`'s encoding has them), then how many (text only; JSON says an
    interruption on stderr)."""
    import sys

    from cqlsh_ext.common import jsonenc
    from cqlsh_ext.common.text import draws_blocks, fit
    from cqlsh_ext.render.text_report import write_lines

    blocks = draws_blocks(getattr(out, "encoding", None))

    def spell(report: ValueReport) -> list[str]:
        return [jsonenc.dumps(report.to_json())] if as_json else [*report.render(), ""]

    def show(lines: list[str]) -> bool:
        write_lines(out, lines if as_json else fit(lines, width, blocks))
        return True

    seen = inspect_values(ctx, request, spell, show)
    if seen is None:
        return
    if not as_json:
        write_lines(out, [seen.closing()])
    elif seen.interrupted:
        print("INSPECT interrupted", file=sys.stderr)
