"""INSPECT: every blob value of a result described, one report per value (insight.inspect)."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from cqlsh_ext.common.text import plural
from cqlsh_ext.insight import shellside as side

if TYPE_CHECKING:
    from cqlsh_ext.upstream.protocol import Parsed, Shell


def run(shell: Shell, parsed: Parsed) -> None:
    from cqlsh_ext.codecs._common import reason
    from cqlsh_ext.common import jsonenc as jsonout
    from cqlsh_ext.cql.types import columns_holding, extractor
    from cqlsh_ext.insight.inspect import inspect_value, unreadable
    from cqlsh_ext.payload.places import ValuePlace
    from cqlsh_ext.scanning.consume import consume

    read = side.target(shell, parsed, "INSPECT")
    if read is None:
        return
    mode, cap = read.mode, read.cap
    decoding = shell.settings.display.decoding()  # DECODE's column settings: the value's spec
    as_json = side.wants_json(shell, parsed)
    keys = [c.name for c in read.meta.primary_key] if read.meta is not None else None
    scanner = read.scanner(shell)
    row_no = values = nulls = 0
    extract: list[tuple[int, Any]] = []
    key_idx: list[int] = []

    def start(names: Sequence[str], types: Sequence[Any]) -> bool:
        cols = columns_holding(names, types)
        if not cols:
            shell.printerr("INSPECT: the result has no blob column")
            return False
        blob_idx = {i for i, _, _ in cols}
        key_idx.extend([i for i, n in enumerate(names) if (n in keys if keys else i not in blob_idx)][:6])
        extract.extend((i, extractor(n, t)) for i, n, t in cols)
        return True

    def take(names: Sequence[str], _types: Sequence[Any], rows: list[Any]) -> None:
        nonlocal row_no, values, nulls
        for row in rows:
            row_no += 1
            key = {names[i]: row[i] for i in key_idx}
            for i, ex in extract:
                if row[i] is None:
                    nulls += 1
                    continue
                for path, _schema, value in ex(row[i]):
                    values += 1
                    where = {"row": row_no, "column": path, "key": key}
                    column, *steps = path.split(".")
                    spec = decoding.spec(ValuePlace(read.keyspace, read.table, column, tuple(steps)))
                    rep = inspect_value(value, where, mode, cap, spec)
                    try:
                        lines = [jsonout.dumps(rep.to_json())] if as_json else [*rep.render(), ""]
                    except Exception as err:  # one value's report, never the command
                        rep = unreadable(value, where, f"could not be inspected: {reason(err)}")
                        lines = [jsonout.dumps(rep.to_json())] if as_json else [*rep.render(), ""]
                    side.write(shell, lines if as_json else side.fit_report(shell, lines))

    if consume(scanner, start, take) is None:
        return
    if scanner.error is not None:
        side.failed(shell, scanner.error)
        return
    if not as_json:
        note = " (interrupted)" if scanner.interrupted else ""
        null_note = f", {nulls} null" if nulls else ""
        counted = f"{plural(values, 'blob value')} in {plural(row_no, 'row')}"
        side.write(shell, [f"({counted}{null_note}){note}"])
    elif scanner.interrupted:
        print("INSPECT interrupted", file=sys.stderr)
