"""A file's columns from what the native core holds: an export's reading on the core gives the
kept rows' path values and blobs as the core holds them (HeldColumn, HeldContents: each value
decoded once, no Python object per value) and the Parquet writer has the core lay them out as
Arrow arrays; the same export on the Python engine alone (the reference) makes views and Python
values. The files must be the same: Parquet's tables and bytes, JSON Lines and CSV byte for byte,
over the corpora (values the core hands back, cut, binary, failed, records the Python side
spells, integers past 64 bits, values that do not fit a column's kind after the leading sample)."""

from __future__ import annotations

import dataclasses
import gzip
import json
import sys
from pathlib import Path
from typing import Any

import pytest

from cqlsh_ext.payload import native
from cqlsh_ext.settings import DisplaySettings
from tests.file_pages import write_file

sys.path.insert(0, str(Path(__file__).resolve().parent))
import corpora  # noqa: E402

pytestmark = pytest.mark.usefixtures("native_core")
pq = pytest.importorskip("pyarrow.parquet")

SELECTS = [
    "SELECT pk, ck, data.status, data.n, data FROM t",
    "SELECT pk, ck, data.status, data.n FROM t",
    "SELECT ck, data, data.customer, data.items, data.id FROM t",
    "SELECT pk, data FROM t",
    "SELECT ck, data.n, data FROM t WHERE data.status IS NOT NULL ALLOW FILTERING",
]


def export(select: str, values: list[bytes | None], folder: Path, fmt: str, settings: DisplaySettings,
           on_core: bool, page: int = 97, row_group: int = 150) -> Path:
    """`select` over rows (pk, ck, data) of `values`, a page at a time, written as COPY (SELECT
    ...) TO writes it (tests/file_pages.py): on the core, the blobs as stored and the columns held;
    without it, the evaluator's views (the Python engine alone)."""
    rows = [(f"p{i % 7}", i, v) for i, v in enumerate(values)]
    return write_file(select, rows, folder, fmt, settings, on_core, page, row_group)


def both(select: str, values: list[bytes | None], tmp_path: Path, fmt: str, settings: DisplaySettings,
         monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    held = tmp_path / "core"
    python = tmp_path / "python"
    held.mkdir(parents=True)
    python.mkdir(parents=True)
    core_file = export(select, values, held, fmt, settings, True)
    with monkeypatch.context() as patched:
        patched.setattr(native, "available", lambda: False)
        python_file = export(select, values, python, fmt, settings, False)
    return core_file, python_file


def corpus() -> list[bytes | None]:
    values: list[bytes | None] = [*corpora.orders(700), *corpora.seeds(), *corpora.produced()[::2],
                                  *corpora.nested(), *corpora.demo()]
    values[::53] = [None] * len(values[::53])  # null blobs among them
    return values


@pytest.mark.parametrize("select", SELECTS)
def test_parquet_files_on_the_core_are_the_python_engine_s(select: str, tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    values = corpus()
    core_file, python_file = both(select, values, tmp_path, "parquet", DisplaySettings(), monkeypatch)
    core, python = pq.read_table(core_file), pq.read_table(python_file)
    assert core.schema == python.schema
    assert core.num_rows == python.num_rows > 0
    for name in core.column_names:
        assert core[name].to_pylist() == python[name].to_pylist(), name
    assert core_file.read_bytes() == python_file.read_bytes()


def test_raw_blobs_and_a_small_cap_on_the_core_are_the_python_engine_s(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    settings = dataclasses.replace(DisplaySettings(), raw_blobs=True, cap=300)
    core_file, python_file = both(SELECTS[0], corpus(), tmp_path, "parquet", settings, monkeypatch)
    assert pq.read_table(core_file).equals(pq.read_table(python_file))
    assert core_file.read_bytes() == python_file.read_bytes()


@pytest.mark.parametrize("fmt", ["json", "csv"])
def test_text_files_on_the_core_are_the_python_engine_s(fmt: str, tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    core_file, python_file = both(SELECTS[0], corpus(), tmp_path, fmt, DisplaySettings(), monkeypatch)
    core, python = core_file.read_text(encoding="utf-8"), python_file.read_text(encoding="utf-8")
    assert core.count("\n") > 1000
    assert core == python


#: Texts whose being a JSON container (written minified in JSON Lines) or not (a JSON string) the
#: core of a file of text reads from the label, no tree built: documents with whitespace, a JSON
#: string that holds a document, a document cut short or followed by more, scalars, a lone
#: surrogate escape (the tree hands it back, the label's reading does not), nesting and an integer
#: past what the core builds, NaN, a plain text.
LOOKALIKES = [
    b' { "a" : [1, 2, {"b": null}] ,\n "c": "x y" } ', json.dumps('{"a": 1}').encode(), b'{"a": 1',
    b'{"a": 1} and more', b"[1, 2, 3]", b"123", b'"a string"', b"null", b'{"s": "\\ud800 lone"}',
    b"[" * 1200 + b"]" * 1200, b'{"n": 1' + b"0" * 5000 + b"}", b'{"a": NaN, "b": -Infinity}',
    b"plain text, not JSON", "{\"ü\": \"déjà\"}".encode(),
]


@pytest.mark.parametrize("fmt", ["json", "csv"])
def test_text_files_tell_json_documents_from_texts_that_look_like_them(
        fmt: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    values: list[bytes | None] = [*LOOKALIKES, *(gzip.compress(v) for v in LOOKALIKES)] * 2
    plain = DisplaySettings()
    runs = [(plain, SELECTS[0]), (dataclasses.replace(plain, cap=40), SELECTS[0]),
            (dataclasses.replace(plain, raw_blobs=True), SELECTS[2])]
    for i, (settings, select) in enumerate(runs):
        core_file, python_file = both(select, values, tmp_path / str(i), fmt, settings, monkeypatch)
        core = core_file.read_text(encoding="utf-8")
        assert core == python_file.read_text(encoding="utf-8"), (i, select)
    if fmt == "json":  # the last file (raw): a document minified, a JSON string that holds one quoted
        assert '"payload": {"a":[1,2,{"b":null}],"c":"x y"}' in core
        assert '"payload": "\\"{\\\\\\"a\\\\\\": 1}\\""' in core


#: Documents whose whitespace outside strings the core's JSON check notes (engine's Outcome.gaps,
#: the text written without those runs): only inside strings, only between tokens, before and
#: after the text, none, and more runs than it notes (minified as without them).
SPACED = [
    b'{"status":"a b  c","n":1,"s":"\\" x "}', b'{ "status" :\t"NEW" ,\r\n"n": [1 , 2] }',
    b'{"status":"NEW","n":3}  \n', b' \t{"status":"NEW"}', b'{"status":"NEW","n":4}',
    b"[" + b"1 , " * 400 + b"1]",
]


def test_json_lines_payloads_without_the_whitespace_the_json_check_found(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    values: list[bytes | None] = [*SPACED, *(gzip.compress(v) for v in SPACED)] * 2
    core_file, python_file = both(SELECTS[0], values, tmp_path, "json", DisplaySettings(), monkeypatch)
    core = core_file.read_text(encoding="utf-8")
    assert core == python_file.read_text(encoding="utf-8")
    for doc in SPACED:  # each minified, json.loads' reading spelt compactly (the same bytes here)
        payload = json.dumps(json.loads(doc), separators=(",", ":"))
        assert core.count(f'"payload": {payload}}}') == 4, payload


#: A path's values of every kind (data.n and data.s): the scalars the core spells in a JSON Lines
#: file (ints within 64 bits, strings with escapes and non-ASCII, bools, null, finite floats in
#: both notations, -0.0) and those it leaves to the Python side (wide integers, NaN and the
#: infinities, containers), a surrogate pair's escape, and documents without the path.
FOUND = [json.dumps(v).encode() if not isinstance(v, bytes) else v for v in (
    {"n": 1, "s": "plain"}, {"n": -(2 ** 63), "s": 'q"b\\n\n\t\u0001é\u2028'}, {"n": 2 ** 63, "s": ""},
    {"n": 10 ** 40, "s": None}, {"n": True, "s": False}, {"n": None}, {"n": -0.0, "s": 0.1},
    {"n": 1e16, "s": 1.5e-07}, {"n": 123.456, "s": 1e300}, {"n": [1, {"a": 2}], "s": {"x": [None]}},
    {"other": 1}, b'{"n": NaN, "s": -Infinity}', b'{"n": Infinity, "s": "\\ud83d\\ude00 pair"}',
    b'{"n": 1.0e2, "s": 10E-1}', b'{"n": 12345678901234567890123, "s": -0}',
)]


def test_a_path_s_scalars_spelt_by_the_core_are_the_python_engine_s(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    spelt_by_core: list[Any] = []
    held_found = native.HeldFound

    def counting(column: Any, spell: Any) -> Any:
        spelt_by_core.append(column)
        return held_found(column, spell)

    monkeypatch.setattr(native, "HeldFound", counting)
    values: list[bytes | None] = [*FOUND, *(gzip.compress(v) for v in FOUND), None] * 3
    select = "SELECT ck, data.n, data.s, data FROM t"
    core_file, python_file = both(select, values, tmp_path, "json", DisplaySettings(), monkeypatch)
    core = core_file.read_text(encoding="utf-8")
    assert len(spelt_by_core) >= 2  # the path columns went through the core's spelling
    assert core == python_file.read_text(encoding="utf-8")
    assert '"data.n": -9223372036854775808, "data.s": "q\\"b\\\\n\\n\\t\\u0001é\\u2028"' in core
    assert '"data.n": -0.0, "data.s": 0.1' in core and '"data.n": "NaN", "data.s": "-Infinity"' in core


def test_raw_json_lines_and_a_small_cap_on_the_core_are_the_python_engine_s(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # the core lays the lines out (json_lines): the raw hex after each payload, cut values spelt by Python
    settings = dataclasses.replace(DisplaySettings(), raw_blobs=True, cap=300)
    core_file, python_file = both(SELECTS[2], corpus(), tmp_path, "json", settings, monkeypatch)
    core = core_file.read_bytes()
    assert core.count(b', "raw": "0x') > 1000
    assert core == python_file.read_bytes()


def test_the_core_lays_out_the_order_table_alone(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The order table's values are every one the core's: no Python row, no value made as a Python
    object beyond the kinds' sample (the check above would pass with every column on the Python
    road: this one fails then)."""
    made: list[int] = []
    real = native.FilledContents.values

    def counting(self: Any, part: int, limit: int | None = None) -> list[Any]:
        found = real(self, part, limit)
        made.append(len(found))
        return found

    monkeypatch.setattr(native.FilledContents, "values", counting)
    settings = DisplaySettings()
    export(SELECTS[0], list(corpora.orders(3000)), tmp_path, "parquet", settings, True, page=500,
           row_group=65536)
    assert made == []


@pytest.mark.parametrize("on_core", [True, False])
def test_a_row_group_ends_with_the_row_whose_blobs_reach_row_group_bytes(
        on_core: bool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """ROW_GROUP_BYTES counts the blobs' stored bytes row by row, across pages: the row that
    reaches it ends its row group (whether the page is counted at once or walked row by row)."""
    from cqlsh_ext.render import parquet

    values: list[bytes | None] = list(corpora.orders(400))
    values[::9] = [None] * len(values[::9])
    limit = sum(len(v or b"") for v in values[:130])  # reached mid-page, at row 129
    monkeypatch.setattr(parquet, "ROW_GROUP_BYTES", limit)
    expected, rows, held = [], 0, 0
    for value in values:
        rows, held = rows + 1, held + len(value or b"")
        if held >= limit:
            expected.append(rows)
            rows, held = 0, 0
    expected += [rows] if rows else []
    assert len(expected) >= 3
    if not on_core:
        monkeypatch.setattr(native, "available", lambda: False)
    path = export(SELECTS[3], values, tmp_path, "parquet", DisplaySettings(), on_core, row_group=65536)
    metadata = pq.ParquetFile(path).metadata
    assert [metadata.row_group(i).num_rows for i in range(metadata.num_row_groups)] == expected


class _Int(int):
    pass


class _Str(str):
    pass


#: Columns of Python values by Arrow type: (values the core lays out, values it leaves to pyarrow).
ORDINARY: dict[str, tuple[list[Any], list[list[Any]]]] = {
    "int32": ([0, -2**31, 2**31 - 1, None, 7, None], [[2**31], [True], [1.0], [_Int(3)], ["7"]]),
    "int64": ([0, -2**63, 2**63 - 1, None, 12345678901234], [[2**63], [False], [_Int(3)]]),
    "double": ([0.0, -0.0, float("nan"), float("inf"), None, 1e308, 5e-324], [[1], [True]]),
    "bool": ([True, False, None, True], [[1], [0]]),
    "string": (["", "é", "日本語 \x00", None, "a" * 300], [["\ud800"], [_Str("x")], [b"x"]]),
}


@pytest.mark.parametrize("arrow", sorted(ORDINARY))
def test_ordinary_columns_laid_out_by_the_core_are_pyarrow_s(arrow: str, tmp_path: Path) -> None:
    """An export's int, bigint, double, boolean and text columns (a list of Python values each)
    go to Arrow through the core (payload.native.cql_array): the array pyarrow.array makes of
    the list, and the same Parquet bytes; a value not exactly the type's is left to pyarrow."""
    import pyarrow as pa

    from cqlsh_ext.payload.arrow_types import Leaf
    from cqlsh_ext.payload.columns import _array

    laid, left = ORDINARY[arrow]
    kind = getattr(pa, {"double": "float64", "bool": "bool_"}.get(arrow, arrow))()
    leaf = Leaf({"double": "float64"}.get(arrow, arrow))
    for values in [laid, [], [None, None]]:
        assert native.cql_array(values, arrow) is not None
        ours, theirs = _array(values, leaf), pa.array(values, type=kind)
        assert ours.type == kind and ours.to_pylist().__repr__() == theirs.to_pylist().__repr__()
        files = []
        for name, array in [("ours", ours), ("theirs", theirs)]:
            pq.write_table(pa.table({"c": array}), tmp_path / name)
            files.append((tmp_path / name).read_bytes())
        assert files[0] == files[1]
    for values in left:
        assert native.cql_array([None, *values], arrow) is None
