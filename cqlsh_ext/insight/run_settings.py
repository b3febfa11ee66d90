"""COMPRESSION SETTINGS: a table's SSTable compression options next to its measured data
(insight.table_settings)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from cqlsh_ext.insight import shellside as side

if TYPE_CHECKING:
    from cqlsh_ext.reading.context import ReadContext
    from cqlsh_ext.reading.read_requests import SettingsRequest
    from cqlsh_ext.reading.typed import ReportAnswer

#: COMPRESSION SETTINGS reads at most this many bytes of rows.
SETTINGS_SAMPLE_BYTES = 64 << 20


def settings_answer(ctx: ReadContext, request: SettingsRequest) -> ReportAnswer | None:
    """The report's answer, or None when nothing is reported (ctx.error said why)."""
    from cqlsh_ext.insight import table_settings as tsettings
    from cqlsh_ext.scanning.consume import consume

    ks, table, meta = side.named_table(ctx, request.keyspace, request.table, request.found)
    if not ks or not table:
        ctx.error("COMPRESSION SETTINGS: name a table as keyspace.table (or USE a keyspace first), "
                  "e.g. COMPRESSION SETTINGS ks.t;")
        return None
    try:
        found = list(ctx.session.execute("SELECT compression, compaction FROM system_schema.tables "
                                         "WHERE keyspace_name = %s AND table_name = %s", (ks, table)))
    except Exception as err:
        side.failed(ctx, err)
        return None
    if not found:
        ctx.error(f"COMPRESSION SETTINGS: table {ks}.{table} not found")
        return None
    row = found[0]
    get = (lambda k: row[k]) if isinstance(row, dict) else (lambda k: getattr(row, k))
    result = tsettings.TableSettings(ks, table, dict(get("compression") or {}), dict(get("compaction") or {}))
    sample = request.sample or tsettings.SETTINGS_SAMPLE_ROWS
    from cassandra.metadata import protect_name

    from cqlsh_ext.reading.read_requests import ReportTarget

    read = side.target(ctx, ReportTarget(ks, table, found=request.found), "SETTINGS",
                       f"SELECT * FROM {protect_name(ks)}.{protect_name(table)} LIMIT {sample}", sample)
    if read is None:
        return None
    from cqlsh_ext.payload.places import Decoding, Engines

    engines = Engines(Decoding(read.mode, read.cap))
    pk = [c.name for c in meta.partition_key] if meta is not None else []
    protocol = ctx.cluster.protocol_version
    reading = ctx.progress(f"COMPRESSION SETTINGS {ks}.{table} (reading the sample)", True, None)
    scanner = read.scanner(ctx, reading)
    stored_rows: list[bytes] = []
    plain_rows: list[bytes] = []

    def take(names: Sequence[str], types: Sequence[Any], rows: list[Any]) -> bool:
        st, pl = tsettings.collect(result, names, types, rows, pk, protocol, engines)
        stored_rows.extend(st)
        plain_rows.extend(pl)
        if sum(map(len, stored_rows)) > SETTINGS_SAMPLE_BYTES:
            result.notes.append(f"the sample stopped at {SETTINGS_SAMPLE_BYTES >> 20} MiB")
            return False
        if ctx.stop.is_set():
            scanner.interrupted = True
            return False
        return True

    consume(scanner, None, take)
    if scanner.progress is not None:
        scanner.progress.close()
    result.interrupted = scanner.interrupted
    if scanner.error is not None:
        side.failed(ctx, scanner.error)
        return None
    if result.sample_rows >= sample:
        tsettings.drop_partial_partition(result)
    result.estimate = tsettings.size_estimate(ctx.session, ks, table)
    tsettings.measure_ratios(result, stored_rows, plain_rows)
    from cqlsh_ext.reading.typed import INTERRUPTED
    from cqlsh_ext.scanning.cost import pricing

    tsettings.advise(result, pricing(ctx))
    return side.report("COMPRESSION SETTINGS", result.to_json, result.render,
                       INTERRUPTED if result.interrupted else None)

