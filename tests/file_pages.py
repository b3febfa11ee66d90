"""A SELECT's typed answer read from rows in memory as reading.select reads the server's pages
(no server): the statement parsed on a (pk text, ck int, data blob) table, its rows evaluated a
page at a time (on the native core the blobs given as it holds its reading of them; without it
the evaluator's views), and an export's file rendered from it by the file's sink, as COPY (SELECT
...) TO writes it. Shared by the engine tests (tests/native/test_file_columns.py,
tests/test_one_engine.py)."""

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


def typed_answer(select: str, rows: Sequence[tuple[Any, ...]], settings: Any, held: bool, page: int = 97,
                 trees: bool = True, gaps: bool = False) -> Any:
    """`select` over `rows` (pk, ck, data) read `page` rows at a time as reading.select reads a
    SELECT's pages into a typed answer (the plain road's columns where the evaluator answers in
    columns: Answer.add_page_columns, else its rows): the blobs given as the engine holds them
    (`held`: payload.program.Given), `trees` and `gaps` its."""
    from cqlsh_ext.payload.columns import BlobReading
    from cqlsh_ext.payload.places import ValuePlace
    from cqlsh_ext.payload.program import Given
    from cqlsh_ext.query.answer import Answer
    from cqlsh_ext.query.evaluate import Evaluator
    from cqlsh_ext.query.grammar import parse
    from cqlsh_ext.reading.select import answer_columns
    from cqlsh_ext.reading.typed import AnswerBatch, ReadNotes, TypedAnswer

    plan = parse(select, SCHEMA, plain=True)
    assert plan is not None
    evaluator = Evaluator(plan, settings.decoding(), "ks", Given(held, trees, gaps))
    answer = Answer(plan, NAMES if any(item.kind == "star" for item in plan.items) else [])
    types: list[Any] = []
    for item in plan.items:
        if item.kind == "star":
            types += [TYPES[name] for name in answer.star_columns]
        else:
            types.append(TYPES[item.name] if item.kind == "column" else None)
    columns = answer_columns(plan, answer, types)
    places = [ValuePlace("ks", "t", c.name, ()) for c in columns]

    def batches() -> Iterator[AnswerBatch]:
        for start in range(0, len(rows), page):
            chunk = rows[start:start + page]
            got = answer.add_page_columns(evaluator, NAMES, chunk) if evaluator.held else None
            if got is not None:
                yield AnswerBatch(columns=got)
            else:
                yield AnswerBatch(answer.add_page(evaluator, NAMES, chunk))
        final = [] if answer.streamed else answer.final()
        for start in range(0, len(final), page):
            yield AnswerBatch(final[start:start + page])

    return TypedAnswer(columns, batches(), ReadNotes(answer), plan, places, BlobReading(settings.decoding()))


def write_file(select: str, rows: Sequence[tuple[Any, ...]], folder: Path, fmt: str, settings: Any,
               on_core: bool, page: int = 97, row_group: int | None = None) -> Path:
    """`select` over `rows` (pk, ck, data), `page` rows at a time, written as `fmt` (parquet, json,
    csv) in `settings`: the file's path."""
    from cqlsh_ext.export.json_csv import TextSink
    from cqlsh_ext.output.spellings import blob_reading
    from cqlsh_ext.render.parquet import ROW_GROUP_SIZE, ParquetSink

    typed = typed_answer(select, rows, settings, on_core, page, trees=fmt == "parquet", gaps=fmt == "json")
    target = Target(folder)
    if fmt == "parquet":
        sink: Any = ParquetSink(target, typed, blob_reading(settings),
                                row_group_size=row_group or ROW_GROUP_SIZE)
    else:
        sink = TextSink(fmt, target, typed.columns, settings, typed.places)  # type: ignore[arg-type]
    for batch in typed:
        sink.write(batch)
    sink.finish()
    target.close()
    return target.temp
