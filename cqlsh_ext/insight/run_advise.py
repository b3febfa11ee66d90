"""COMPRESSION ADVISE: a sample of decompressed payloads re-compressed with every codec (insight.advise)."""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from cqlsh_ext.insight import shellside as side

if TYPE_CHECKING:
    from cqlsh_ext.insight.advise import AdviseSample, ColumnAdvice, SavedDictionary
    from cqlsh_ext.insight.shellside import InsightTarget
    from cqlsh_ext.reading.context import ReadContext
    from cqlsh_ext.reading.read_requests import AdviseRequest
    from cqlsh_ext.reading.typed import ReportAnswer
    from cqlsh_ext.scanning.scan import Scanner


#: Seconds of measuring what was read after a Ctrl-C while reading the sample: the press asked to
#: stop, so the report comes within a second or two, with the codecs measured by then.
AFTER_INTERRUPT_S = 1.0


def advise_answer(ctx: ReadContext, request: AdviseRequest) -> ReportAnswer | None:
    """The report's answer, or None when nothing is reported (ctx.error said why); with
    SAVE DICTIONARY's file, the dictionaries trained on the sample written there."""
    from cqlsh_ext.insight.advise import Advice
    from cqlsh_ext.scanning.scan import error_text

    read = side.target(ctx, request.target, "ADVISE")
    if read is None:
        return None
    started = time.perf_counter()
    scanner = read.scanner(ctx, ctx.progress("COMPRESSION ADVISE (reading the sample)", True, None))
    taken = _read_sample(ctx, read, request, scanner)
    if taken is None:
        return None
    sample, rows_read = taken
    advice = Advice(read.query, _measure(ctx, sample, scanner.interrupted), rows_read,
                    interrupted=scanner.interrupted)
    if request.dictionaries_to is not None:
        advice.saved = _save_dictionaries(sample, request.dictionaries_to, read)
    if scanner.error is not None:
        advice.error = error_text(scanner.error)
    advice.elapsed = time.perf_counter() - started
    from cqlsh_ext.reading.typed import FAILED, INTERRUPTED

    stopped = FAILED if advice.error else INTERRUPTED if scanner.interrupted else None
    return side.report("COMPRESSION ADVISE", advice.to_json, advice.render, stopped)


def _read_sample(ctx: ReadContext, read: InsightTarget, request: AdviseRequest,
                 scanner: Scanner) -> tuple[AdviseSample, int] | None:
    """The sample `scanner` read and the rows it took, or None when nothing is reported (ctx.error
    said why): no payload column, or the reading failed before its first row."""
    from cqlsh_ext.cql.types import payload_columns, payload_extractor
    from cqlsh_ext.insight.advise import ADVISE_SAMPLE_BYTES, ADVISE_SAMPLE_VALUES, AdviseSample
    from cqlsh_ext.scanning.consume import consume
    from cqlsh_ext.scanning.cost import pricing

    sample = AdviseSample(request.sample or ADVISE_SAMPLE_VALUES, read.mode, read.cap,
                    ADVISE_SAMPLE_BYTES, pricing(ctx))
    layout: list[tuple[int, Any]] = []
    rows_read = 0

    def start(names: Sequence[str], types: Sequence[Any]) -> bool:
        layout.extend((i, payload_extractor(n, t)) for i, n, t in payload_columns(names, types))
        if not layout:
            ctx.error("COMPRESSION ADVISE: the result has no blob or text column")
            return False
        return True

    def take(_names: Sequence[str], _types: Sequence[Any], rows: list[Any]) -> bool:
        nonlocal rows_read
        for row in rows:
            if sample.full:
                break
            rows_read += 1
            for i, ex in layout:
                for _path, schema, value in ex(row[i]):
                    sample.add(schema, value)
        if ctx.stop.is_set():
            scanner.interrupted = True
            return False
        return not sample.full

    if consume(scanner, start, take) is None:
        return None
    if scanner.error is not None and not rows_read:
        side.failed(ctx, scanner.error)
        return None
    return sample, rows_read


def _measure(ctx: ReadContext, sample: AdviseSample, interrupted: bool) -> list[ColumnAdvice]:
    """Each column of `sample` re-compressed with every codec, as far as the measuring got."""
    # Measuring takes seconds (every codec, several timed passes): a line says which codec runs;
    # Ctrl-C stops it and the report covers the codecs measured (advise.advise_column). The press
    # is ours while measuring, whatever handler the reading left: it stops at the next pass. After
    # a Ctrl-C while reading, what was read is measured for AFTER_INTERRUPT_S only.
    from cqlsh_ext.common.interrupt import CtrlC

    measuring = ctx.progress("COMPRESSION ADVISE", True, None)
    until = time.monotonic() + AFTER_INTERRUPT_S if interrupted else None
    try:
        with CtrlC() as ctrl_c:
            return sample.advise(
                step=None if measuring is None
                else lambda what, done: measuring.step(f"measuring {what}", done),
                stop=lambda: ctrl_c.pressed or ctx.stop.is_set()
                or (until is not None and time.monotonic() > until))
    finally:
        if measuring is not None:
            measuring.close()


def _save_dictionaries(sample: AdviseSample, to: str, read: InsightTarget) -> list[SavedDictionary]:
    """SAVE DICTIONARY: the dictionaries trained on `sample` written to `to`."""
    from cassandra.metadata import protect_name

    from cqlsh_ext.insight.advise import save_dictionaries

    table = f"{protect_name(read.keyspace)}.{protect_name(read.table)}" if read.keyspace and read.table \
        else None
    return save_dictionaries(sample, to, table, read.meta.columns if read.meta is not None else ())
