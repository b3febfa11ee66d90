"""An export's file written from rows in memory, as COPY (SELECT ...) TO reads and writes it (no
server): the statement parsed on a (pk text, ck int, data blob) table, its rows evaluated a page
at a time into a typed answer (on the native core the blobs as stored and the columns held by it;
without it the evaluator's views), and the answer rendered by the file's sink. Shared by the
engine tests (tests/native/test_file_columns.py, tests/test_one_engine.py)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, BinaryIO

from cassandra import cqltypes

from cqlsh_ext.query.grammar import Schema

SCHEMA = Schema({"pk": "text", "ck": "int", "data": "blob"}, ["pk"], {})
TYPES = {"pk": cqltypes.UTF8Type, "ck": cqltypes.Int32Type, "data": cqltypes.BytesType}
NAMES = ["pk", "ck", "data"]


class Target:
    """Where a sink writes (export.target.ExportFile's part)."""

    def __init__(self, folder: Path) -> None:
        self.temp = folder / "out"
        self.out: BinaryIO | None = None

    def output(self) -> BinaryIO:
        self.out = open(self.temp, "wb")  # noqa: SIM115 - closed by close(), as ExportFile's commit does
        return self.out

    def close(self) -> None:
        if self.out is not None:
            self.out.close()


def write_file(select: str, rows: Sequence[tuple[Any, ...]], folder: Path, fmt: str, settings: Any,
               on_core: bool, page: int = 97, row_group: int | None = None) -> Path:
    """`select` over `rows` (pk, ck, data), `page` rows at a time, written as `fmt` (parquet, json,
    csv) in `settings`: the file's path."""
    from cqlsh_ext.export.json_csv import TextSink
    from cqlsh_ext.output.spellings import blob_reading
    from cqlsh_ext.payload.columns import BlobReading
    from cqlsh_ext.payload.places import ValuePlace
    from cqlsh_ext.query.answer import Answer
    from cqlsh_ext.query.evaluate import Evaluator
    from cqlsh_ext.query.grammar import parse
    from cqlsh_ext.reading.select import answer_columns
    from cqlsh_ext.reading.typed import AnswerBatch, ReadNotes, TypedAnswer
    from cqlsh_ext.render.parquet import ROW_GROUP_SIZE, ParquetSink

    plan = parse(select, SCHEMA, plain=True)
    assert plan is not None
    evaluator = Evaluator(plan, settings.decoding(), "ks", views=not on_core, held=on_core,
                          text_trees=fmt == "parquet", text_gaps=fmt == "json")
    answer = Answer(plan, [])
    types = [TYPES[item.name] if item.kind == "column" else None for item in plan.items]
    columns = answer_columns(plan, answer, types)
    places = [ValuePlace("ks", "t", c.name, ()) for c in columns]

    def batches() -> Iterator[AnswerBatch]:
        for start in range(0, len(rows), page):
            chunk = rows[start:start + page]
            held = answer.add_page_columns(evaluator, NAMES, chunk)
            if held is not None:
                yield AnswerBatch(columns=held)
            else:
                yield AnswerBatch(answer.add_page(evaluator, NAMES, chunk))

    typed = TypedAnswer(columns, batches(), ReadNotes(answer), plan, places, BlobReading(settings.decoding()))
    target = Target(folder)
    if fmt == "parquet":
        sink: Any = ParquetSink(target, typed, blob_reading(settings),
                                row_group_size=row_group or ROW_GROUP_SIZE)
    else:
        sink = TextSink(fmt, target, columns, settings, places)  # type: ignore[arg-type]
    for batch in typed:
        sink.write(batch)
    sink.finish()
    target.close()
    return target.temp
