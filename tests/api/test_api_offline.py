"""The API's parts that need no server: `import cqlsh_ext` loads none of it until it is asked for,
and a missing optional library is one line naming the extra."""

from __future__ import annotations

import subprocess
import sys

import pytest

import cqlsh_ext


def test_import_cqlsh_ext_loads_the_api_only_when_asked():
    code = ("import sys, cqlsh_ext\n"
            "print(sorted(m for m in sys.modules if m.startswith('cqlsh_ext')))\n"
            "cqlsh_ext.decode\n"
            "print('cqlsh_ext.api' in sys.modules, 'cqlsh_ext.shell' in sys.modules)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.splitlines() == ["['cqlsh_ext']", "True False"]


def test_without_pyarrow_one_line_names_the_extra(monkeypatch):
    from cqlsh_ext.api.query_answer import need

    monkeypatch.setitem(sys.modules, "pyarrow", None)  # as if it were not installed
    with pytest.raises(cqlsh_ext.Error) as missing:
        need("pyarrow")
    # In this checkout's .venv the way to add it is bin/setup's (common.install.install_hint).
    assert str(missing.value).startswith("pyarrow is not installed: run ")
    assert str(missing.value).endswith("--api") and "\n" not in str(missing.value)


def test_an_unknown_name_is_an_attribute_error():
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        cqlsh_ext.nope  # noqa: B018


class _File:
    """Where ParquetSink writes (export.target.ExportFile's part)."""

    def __init__(self, folder) -> None:
        self.temp = folder / "out.parquet"

    def output(self):
        return open(self.temp, "wb")  # noqa: SIM115 (the writer closes it)


def _answer(batches, columns):
    """A typed answer of `batches` (lists of rows), as a reading gives one."""
    from cqlsh_ext.reading.typed import AnswerBatch, ReadNotes, TypedAnswer

    return TypedAnswer(columns, iter([AnswerBatch(rows) for rows in batches]), ReadNotes(None))


def test_kinds_are_fixed_from_the_leading_sample_and_a_later_misfit_is_null_with_its_note(tmp_path,
                                                                                         monkeypatch):
    """A path's column typed from the answer's first rows (two here): int64; a later integer past 64
    bits and a string are null there, each with its note giving the value, counted; the table in
    memory (the API's) and the file (COPY's) have that one schema and the same values."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from cqlsh_ext.api.query_answer import QueryAnswer
    from cqlsh_ext.output.spellings import blob_reading
    from cqlsh_ext.payload.columns import PATH, AnswerColumn
    from cqlsh_ext.reading import typed
    from cqlsh_ext.render.parquet import ParquetSink
    from cqlsh_ext.settings import DisplaySettings

    monkeypatch.setattr(typed, "SAMPLE_ROWS", 2)
    batches = [[(1,), (2,)], [(10**20,), (3,)], [("seven",), (None,)]]
    column = AnswerColumn("v", PATH, source="data.v")
    api = QueryAnswer(_answer(batches, [column]), DisplaySettings())
    table = api.to_arrow()
    answer = _answer(batches, [column])
    sink = ParquetSink(_File(tmp_path), answer, blob_reading(DisplaySettings()), row_group_size=2)
    for batch in answer:
        sink.write(batch)
    summary = sink.finish()
    written = pq.read_table(tmp_path / "out.parquet")
    assert table.schema == written.schema == pa.schema([("v", pa.int64()), ("v:note", pa.string())])
    assert table.to_pylist() == written.to_pylist() == [
        {"v": 1, "v:note": None}, {"v": 2, "v:note": None},
        {"v": None, "v:note": "did not fit int64: 100000000000000000000"}, {"v": 3, "v:note": None},
        {"v": None, "v:note": 'did not fit int64: "seven"'}, {"v": None, "v:note": None}]
    assert api.notes["misfits"] == {"v": 2} and summary.misfits == {"v": 2}


def test_an_empty_answer_iterates_streams_and_collects_to_nothing_with_its_schema():
    import pyarrow as pa
    from cassandra import cqltypes

    from cqlsh_ext.api.query_answer import QueryAnswer
    from cqlsh_ext.payload.arrow_types import JSON_TEXT_METADATA
    from cqlsh_ext.payload.columns import CQL, PATH, AnswerColumn
    from cqlsh_ext.settings import DisplaySettings

    columns = [AnswerColumn("k", CQL, cqltypes.Int32Type), AnswerColumn("s", PATH, source="data.s")]
    # a path no row had: JSON text (a string, its field marked), which holds whatever comes
    schema = pa.schema([("k", pa.int32()), pa.field("s", pa.string(), metadata=JSON_TEXT_METADATA),
                        ("s:note", pa.string())])
    assert list(QueryAnswer(_answer([], columns), DisplaySettings())) == []
    streamed = QueryAnswer(_answer([[]], columns), DisplaySettings())
    assert streamed.schema.equals(schema, check_metadata=True)
    reader = streamed.to_reader()
    assert reader.schema.equals(schema, check_metadata=True) and list(reader) == []
    collected = QueryAnswer(_answer([], columns), DisplaySettings()).to_arrow()
    assert collected.schema.equals(schema, check_metadata=True) and collected.num_rows == 0


@pytest.mark.parametrize(("call", "said"), [
    (lambda db: db.rewrite("ks.t.data", "zstd", pace=0),
     "rewrite: pace is at least 1, not 0; nothing was written"),
    (lambda db: db.rewrite("ks.t.data", "zstd", every_row="yes"),
     "rewrite: every_row takes true or false (true: the preview reads every row (ALL), not a sample), "
     "not 'yes'; nothing was written"),
    (lambda db: db.write("ks.t", [], ttl=-1), "write: ttl is at least 0, not -1; nothing was written"),
    (lambda db: db.write("ks.t", [], encode="snappy"),
     "write: encode takes an object (each blob column's chain: {'data': 'snappy>json'}), not 'snappy'; "
     "nothing was written"),
    (lambda db: db.undo("journal.jsonl", cut=1),
     "undo: cut takes true or false (true: a journal without its closing line is taken (the rows it holds)), "
     "not 1; nothing was written"),
    (lambda db: db.resume("journal.jsonl", confirm="yes"),
     "resume: confirm takes true or false (true: write (journaled); else a preview that writes nothing), "
     "not 'yes'; nothing was written"),
    (lambda db: db.edit("UPDATE ks.t SET data.a = 1 WHERE id = 1", confirm=1),
     "edit: confirm takes true or false (true: write (journaled); else a preview that writes nothing), "
     "not 1; nothing was written"),
])
def test_a_write_method_s_arguments_are_checked_against_its_declaration(call, said):
    # Every write method checks its call at the one function every front end checks with
    # (features.calling.checked, through api.writes.checked_call), before it reads anything: a
    # connection made of nothing is never reached.
    from cqlsh_ext.api.database import Database

    db = Database.__new__(Database)
    with pytest.raises(cqlsh_ext.Error) as refused:
        call(db)
    assert str(refused.value) == said
