"""The answer's columns as Arrow (payload.columns): a column typed once, from its leading sample,
before its first batch; every value afterwards either itself in that type or null with a note
saying what it was. Hypothesis writes documents of mixed kinds (strings, numbers of every size,
booleans, nulls, records of varying keys, mixed lists, nested), as a path or an aggregate gives
them, and the Arrow table of the answer is held to the documents written by an oracle that knows
JSON, not the converters: each value itself, or null, or null at the places inside it the note
names, the rest of it itself."""

from __future__ import annotations

import json
from decimal import Decimal
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cqlsh_ext.payload.arrow_types import is_json_text

pa = pytest.importorskip("pyarrow")

SCALARS = st.one_of(
    st.none(), st.booleans(), st.text(max_size=8),
    st.integers(min_value=-(2**70), max_value=2**70), st.integers(min_value=-1000, max_value=1000),
    st.floats(allow_nan=False, allow_infinity=False, width=64),
)
KEYS = st.sampled_from(["a", "b", "status", "n", "x y"])
DOCUMENTS = st.recursive(SCALARS, lambda inner: st.one_of(st.lists(inner, max_size=4),
                                                          st.dictionaries(KEYS, inner, max_size=4)),
                         max_leaves=12)


def same(arrow: Any, value: Any, place: Any) -> bool:
    """Whether an Arrow value of the pyarrow.Field `place` (as pyarrow's to_pylist gives it) holds the
    document `value`: a JSON place (a string field marked JSON text) holds its JSON text; a struct
    holds a record's keys (the keys it lacks null); numbers equal as numbers."""
    kind = place.type
    if value is None:
        return arrow is None
    if is_json_text(place):
        return isinstance(arrow, str) and json.loads(arrow) == json.loads(json.dumps(value))
    if isinstance(value, bool) or isinstance(arrow, bool):
        return type(arrow) is type(value) and arrow == value
    if isinstance(value, dict):
        return pa.types.is_struct(kind) and isinstance(arrow, dict) and set(value) <= set(arrow) and all(
            same(arrow[field.name], value.get(field.name), field) for field in kind)
    if isinstance(value, list):
        return pa.types.is_list(kind) and isinstance(arrow, list) and len(arrow) == len(value) and all(
            same(a, v, kind.value_field) for a, v in zip(arrow, value, strict=True))
    if isinstance(value, (int, float)):
        return isinstance(arrow, (int, float, Decimal)) and not isinstance(arrow, bool) and arrow == value
    return bool(arrow == value)


def null_places(arrow: Any, value: Any, place: Any, where: str = "") -> list[str]:
    """Where Arrow holds null or nothing of a document that holds something (the places the note
    must name), in the document's order: a struct's fields in the struct's order, then the keys it
    has no field for; a list's items by index ("tags[2]"). Every other place must hold the
    document's value there (same): AssertionError where it does not."""
    kind = place.type
    if value is None:
        assert arrow is None, (arrow, where)
        return []
    if arrow is None:
        return [where]
    if isinstance(value, dict) and pa.types.is_struct(kind):
        names = [field.name for field in kind]
        out: list[str] = []
        for field in kind:
            out += null_places(arrow[field.name], value.get(field.name), field,
                               f"{where}.{field.name}" if where else field.name)
        return out + [f"{where}.{key}" if where else key for key in value if key not in names]
    if isinstance(value, list) and pa.types.is_list(kind):
        assert isinstance(arrow, list) and len(arrow) == len(value), (arrow, value)
        return [inner for i, (a, v) in enumerate(zip(arrow, value, strict=True))
                for inner in null_places(a, v, kind.value_field, f"{where}[{i}]")]
    assert same(arrow, value, place), (arrow, value, where)
    return []


def _answer(values: list[Any], sample: int, monkeypatch: pytest.MonkeyPatch) -> Any:
    from cqlsh_ext.api.query_answer import QueryAnswer
    from cqlsh_ext.payload.columns import PATH, AnswerColumn
    from cqlsh_ext.reading import typed
    from cqlsh_ext.reading.typed import AnswerBatch, ReadNotes, TypedAnswer
    from cqlsh_ext.settings import DisplaySettings

    monkeypatch.setattr(typed, "SAMPLE_ROWS", sample)
    batches = [AnswerBatch([(i, v) for i, v in enumerate(values[start:start + 7], start)])
               for start in range(0, len(values), 7)]
    columns = [AnswerColumn("i", PATH, source="data.i"), AnswerColumn("v", PATH, source="data.v")]
    return QueryAnswer(TypedAnswer(columns, iter(batches), ReadNotes(None)), DisplaySettings())


@settings(max_examples=150, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(values=st.lists(DOCUMENTS, min_size=1, max_size=30), sample=st.integers(min_value=1, max_value=30))
def test_arrow_holds_each_value_or_says_why_not(values: list[Any], sample: int,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    table = _answer(values, sample, monkeypatch).to_arrow()
    assert table.schema.names == ["i", "i:note", "v", "v:note"]
    kind = table.schema.field("v")
    for row, value in zip(table.to_pylist(), values, strict=True):
        note = row["v:note"]
        if note is None:
            assert same(row["v"], value, kind), (row, value)
            continue
        # null, or null at the places inside that do not fit (the note names them), and the note
        # says what the value was
        assert value is not None and note.startswith("did not fit ")
        places = null_places(row["v"], value, kind)
        if row["v"] is not None:
            assert places, (row, value)
            head, text = _partial(note)
            named = head.split(" at ", 1)[1]
            listed = [f"{place} (" for place in places[:5]]
            assert named.startswith(listed[0]) and all(part in named for part in listed), (named, places)
            if len(places) > 5:
                assert named.endswith(f", and {len(places) - 5:,} more"), named
        else:
            head, text = note.split(": ", 1)
            assert " at " not in head
        if "… (" not in text:
            assert json.loads(text) == json.loads(json.dumps(value))
    # the schema is known before any row: the same as the collected table's
    assert _answer(values, sample, monkeypatch).schema == table.schema


def _partial(note: str) -> tuple[str, str]:
    """A partial misfit's note as its head ("did not fit T at a (t), b (t)") and its value's text:
    the head ends at the first ": " after the places' last closing bracket."""
    head_end = note.index(" at ")
    depth, i = 0, head_end
    while i < len(note):
        if note[i] == "(":
            depth += 1
        elif note[i] == ")":
            depth -= 1
        elif note.startswith(": ", i) and depth == 0:
            return note[:i], note[i + 2:]
        i += 1
    raise AssertionError(note)


def test_a_column_is_typed_by_the_sort_most_of_its_sample_has(monkeypatch: pytest.MonkeyPatch) -> None:
    """Strings with a 7 among them: a string column, the 7 null with its note; integers with a
    40-digit one: JSON text, each as written (no Arrow number holds it: once an int64 column, the
    big one null and its digits only in a cut note); numbers with floats: float64; a place inside
    records where sorts meet: JSON text there."""
    from cqlsh_ext.payload.arrow_types import Float, Int, Json, Null, Str, Struct
    from cqlsh_ext.payload.columns import sample_kind

    def kind(values: list[Any]) -> Any:
        return sample_kind(Null(), [(v, 1) for v in values])

    assert kind(["NEW", "PAID", 7]) == Str()
    assert kind([1, 2, 10**40]) == Json()
    assert kind([1, 2, 10**37]) == Int(128)  # decimal128(38, 0) holds it
    assert kind([1, 2.5, 3]) == Float()
    assert kind([None, None]) == Json()
    assert kind([{"a": 1}, {"a": "x"}, {"a": 2}]) == Struct((("a", Json()),))
    assert kind(["x", 1, 2, 3]) == Int(64)  # numbers are most: the string will not fit


def test_large_blobs_are_read_and_given_in_parts_of_bounded_size(monkeypatch: pytest.MonkeyPatch) -> None:
    """A page of large values is read a part at a time, each part given out before the next is read
    (so a stream holds about BATCH_BYTES decoded, whatever the page): the first part BLOB_FIRST_ROWS
    rows, the next ones as many rows as the decoded size seen so far says fit; every row given
    once, in order, each blob read."""
    import gzip

    from cassandra import cqltypes

    from cqlsh_ext.payload.columns import BLOB, CQL, AnswerColumn, BlobReading, decoded_bytes
    from cqlsh_ext.payload.places import Decoding
    from cqlsh_ext.reading import typed
    from cqlsh_ext.reading.typed import AnswerBatch, ReadNotes, TypedAnswer

    monkeypatch.setattr(typed, "BATCH_BYTES", 40_000)
    monkeypatch.setattr(typed, "BLOB_FIRST_ROWS", 2)
    documents = [json.dumps({"k": k, "text": "x" * 10_000}).encode() for k in range(30)]
    rows = [(k, gzip.compress(doc)) for k, doc in enumerate(documents)]
    columns = [AnswerColumn("k", CQL, cqltypes.Int32Type), AnswerColumn("data", BLOB, cqltypes.BytesType)]
    answer = TypedAnswer(columns, iter([AnswerBatch(rows)]), ReadNotes(None), places=[None, None],
                         reading=BlobReading(Decoding()))
    parts = list(answer)
    assert [len(p) for p in parts][:1] == [2] and len(parts) > 3
    for part in parts[1:]:
        assert decoded_bytes(part.column(1)) <= 40_000 + 10_100  # the bound, and one row past it at most
    assert [k for p in parts for k in p.column(0).values()] == list(range(30))


def test_the_leading_sample_of_large_blobs_holds_about_one_part(monkeypatch: pytest.MonkeyPatch) -> None:
    """The kinds are fixed before the first batch from the leading sample, which stops at about
    BATCH_BYTES decoded where the blobs are large: a stream of megabyte documents gives its first
    batch having read a part of the answer, not all of its first SAMPLE_ROWS rows."""
    import gzip

    from cassandra import cqltypes

    from cqlsh_ext.payload.columns import BLOB, CQL, AnswerColumn, BlobReading
    from cqlsh_ext.payload.places import Decoding
    from cqlsh_ext.reading import typed
    from cqlsh_ext.reading.typed import AnswerBatch, ReadNotes, TypedAnswer

    monkeypatch.setattr(typed, "BATCH_BYTES", 40_000)
    monkeypatch.setattr(typed, "BLOB_FIRST_ROWS", 2)
    documents = [json.dumps({"k": k, "text": "x" * 10_000}).encode() for k in range(30)]
    pages = [AnswerBatch([(k, gzip.compress(documents[k]))]) for k in range(30)]  # a row a page
    given: list[int] = []

    def arriving():
        for k, page in enumerate(pages):
            given.append(k)
            yield page

    columns = [AnswerColumn("k", CQL, cqltypes.Int32Type), AnswerColumn("data", BLOB, cqltypes.BytesType)]
    answer = TypedAnswer(columns, arriving(), ReadNotes(None), places=[None, None],
                         reading=BlobReading(Decoding()))
    fixed = answer.fixed()
    assert fixed[1].kind is not None  # the payload's kind, from the sample
    assert 3 <= len(given) <= 6, given  # about 40,000 bytes of 10 KB documents read ahead
    assert [k for batch in answer for k in batch.column(0).values()] == list(range(30))


def test_the_quiet_notes_of_a_column_are_each_value_s_quiet_note() -> None:
    # Parquet's blob column fills its quiet notes a column at once (Arrow's compute), the Python
    # engine's views one value at a time (quiet_note): the two must say the same of every value.
    from cqlsh_ext.codecs.registry import MIN_AUTO_LENGTH
    from cqlsh_ext.payload.columns import _with_quiet_notes, quiet_note
    from cqlsh_ext.payload.view import BINARY, TEXT, UNKNOWN

    sizes = [None, 0, 1, MIN_AUTO_LENGTH - 1, MIN_AUTO_LENGTH, MIN_AUTO_LENGTH + 1, 4096]
    grid = [(kind, note, size) for kind in (UNKNOWN, BINARY, TEXT, "undecodable", None)
            for note in (None, "its own reason") for size in sizes]
    kinds = pa.array([kind for kind, _note, _size in grid], pa.string())
    notes = pa.array([note for _kind, note, _size in grid], pa.string())
    stored = pa.array([None if size is None else b"x" * size for _kind, _note, size in grid], pa.binary())
    untouched = [pa.array([0] * len(grid)), pa.array([1] * len(grid))]
    out = _with_quiet_notes([*untouched, kinds, notes, stored, pa.array([2] * len(grid))])
    expected = [note if note is not None else quiet_note(kind, None if size is None else b"x" * size)
                for kind, note, size in grid]
    assert out[3].to_pylist() == expected
    assert expected.count(None) < len(expected) - 4  # the grid holds quiet values of each sort
    assert [a.to_pylist() for a in (*out[:3], *out[4:])] == \
        [a.to_pylist() for a in (*untouched, kinds, stored, pa.array([2] * len(grid)))]
