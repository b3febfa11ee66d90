"""A Parquet export's struct columns of awkward JSON documents, as the native core lays them out
from each text it checks (held.rs Place::Text: no tree), held against json.loads' reading of the
same documents (an oracle apart from the code: the file's cell rebuilt from its Arrow type must be
the document json.loads gives), and against the same file written by the Python engine alone.

The documents: a field of mixed types (JSON text at that place), numbers at every kind's edge
(2**53, int64, 38 digits, past them; -0.0, exponents), unicode escapes (a surrogate pair, control
characters, escaped quotes; an escaped key), a key met twice (a dict keeps its first place and
its last value), nesting at the kinds' depth (32: deeper places are JSON text), past the budget's
64 levels and the core's 256 (a JSON text is read whole there: the depth bounds a walk of a
record's tree, not a text's), nodes at a small cap's budget (1,000: a document past it is not
read as JSON, a text no struct holds: null, its note saying so, its stored bytes kept), empty
containers and an empty key. Each stored plain and gzip'd."""

from __future__ import annotations

import dataclasses
import gzip
import json
import math
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from cqlsh_ext.payload import native
from cqlsh_ext.payload.arrow_types import is_json_text
from cqlsh_ext.settings import DisplaySettings
from tests.file_pages import write_file

pytestmark = pytest.mark.usefixtures("native_core")
pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")

SELECT = "SELECT pk, ck, data FROM t"
#: An output cap whose budget is 1,000 nodes (payload.budget: MIN_NODES, the least a cap gives)
#: and 40,000 characters (the documents below are within those).
SMALL_CAP = 40_000
SMALL_CAP_NODES = 1_000


def nested_lists(depth: int) -> str:
    return "[" * depth + "1" + "]" * depth


def nested_objects(depth: int) -> str:
    return '{"a": ' * depth + "1" + "}" * depth


def numbers() -> list[str]:
    edges = [2**53, 2**53 + 1, 2**63 - 1, 2**63, -(2**63), -(2**63) - 1, 10**37, 10**38 - 1, 10**38,
             10**40, 12345678901234567890123]
    return [json.dumps({f"n{i}": v, "m": v}) for i, v in enumerate(edges)] + [
        '{"f": -0.0, "g": 1.5e-07, "h": 1E308, "i": 10E-1, "j": -0}',
        '{"f": 1, "g": 2, "h": 3.25, "i": 4, "j": 5}',  # ints and floats in one field: floats
    ]


#: (the document's text, whether it is past the budget: not read as JSON) under the default cap.
DOCUMENTS: list[tuple[str, bool]] = [
    *((json.dumps({"v": v, "w": 1}), False) for v in (1, "one", [1, "x"], {"a": 1}, None, True, 2.5)),
    *((text, False) for text in numbers()),
    (r'{"s": "caf\u00e9 \u4e2d \ud83d\ude00 \"q\" \\ \/ \n\t\u0001 end", "k\u00e9y": "escaped key"}', False),
    ('{"s": "déjà vu — ünïcödé", "t": "\\u2028\\u2029"}', False),
    ('{"a": 1, "b": {"c": 2, "c": [3]}, "a": "last", "d": null}', False),
    ('{"dup": 1, "dup": 2, "dup": 3}', False),
    ('{"e": {}, "l": [], "z": [{}], "keyless": {"": 1}}', False),
    ('  {\n  "spaced" :\t[ 1 ,\n 2 ] , "x" : { "y" : "z" }  }\n', False),
    *((json.dumps({f"deep{d}": json.loads(nested_lists(d))}), False) for d in (30, 31, 32, 33)),
    *((json.dumps({f"obj{d}": json.loads(nested_objects(d))}), False) for d in (30, 31, 32)),
    ('{"deep": ' + nested_lists(62) + "}", False),
    ('{"deep": ' + nested_lists(63) + "}", False),
    ('{"deep": ' + nested_lists(64) + "}", False),
    ('{"deep": ' + nested_lists(80) + "}", False),
    ('{"deep": ' + nested_lists(255) + "}", False),
    ('{"deep": ' + nested_lists(300) + "}", False),  # past the core's 256 levels: json.loads reads it
]

#: Under SMALL_CAP: a list of values at the budget's nodes and one past it.
AT_SMALL_CAP: list[tuple[str, bool]] = [
    (json.dumps({"n": [1] * (SMALL_CAP_NODES - 10)}), False),
    (json.dumps({"n": [1] * (SMALL_CAP_NODES + 10)}), True),
    (json.dumps({"n": [1, 2, 3]}), False),
]


def rebuilt(value: Any, place: Any) -> Any:
    """An exported cell as a JSON value, read by its pyarrow.Field (a JSON text place: json.loads of it)."""
    arrow = place.type
    if value is None:
        return None
    if is_json_text(place):
        return json.loads(value)
    if pa.types.is_struct(arrow):
        return {arrow.field(i).name: rebuilt(value[arrow.field(i).name], arrow.field(i))
                for i in range(arrow.num_fields)}
    if pa.types.is_list(arrow) or pa.types.is_large_list(arrow):
        return [rebuilt(v, arrow.value_field) for v in value]
    return value


def same(expected: Any, got: Any, where: str = "$") -> None:
    """`got` (a rebuilt cell) holds what json.loads read (`expected`): a struct's fields the
    document lacks are null, numbers equal by value (an int in a float column exactly so)."""
    if isinstance(expected, dict):
        assert isinstance(got, dict), where
        for key, value in expected.items():
            assert key in got, f"{where}.{key} missing"
            same(value, got[key], f"{where}.{key}")
        for key in got.keys() - expected.keys():
            assert got[key] is None, f"{where}.{key}: {got[key]!r} for a key the document lacks"
    elif isinstance(expected, list):
        assert isinstance(got, list) and len(got) == len(expected), where
        for i, (e, g) in enumerate(zip(expected, got, strict=True)):
            same(e, g, f"{where}[{i}]")
    elif isinstance(expected, bool) or expected is None or isinstance(expected, str):
        assert type(got) is type(expected) and got == expected, (where, expected, got)
    elif isinstance(expected, float):
        assert isinstance(got, float) and got == expected, (where, expected, got)
        assert math.copysign(1, got) == math.copysign(1, expected), (where, "sign of zero")
    else:
        assert isinstance(expected, int) and not isinstance(got, bool), (where, expected, got)
        assert isinstance(got, (int, float, Decimal)) and got == expected, (where, expected, got)
        if isinstance(got, float):
            assert abs(expected) <= 2**53, (where, "an integer past 2**53 made a float")


def exported(docs: list[tuple[str, bool]], folder: Path, settings: DisplaySettings, on_core: bool) -> Path:
    values = [text.encode() for text, _ in docs] + [gzip.compress(text.encode(), mtime=0) for text, _ in docs]
    rows = [(f"p{i % 3}", i, v) for i, v in enumerate(values)]
    folder.mkdir(parents=True)
    return write_file(SELECT, rows, folder, "parquet", settings, on_core, page=len(rows))


@pytest.mark.parametrize(("docs", "cap"), [(DOCUMENTS, None), (AT_SMALL_CAP, SMALL_CAP)],
                         ids=["default cap", "small cap"])
def test_awkward_documents_laid_out_by_the_core_are_what_json_loads_reads(
        docs: list[tuple[str, bool]], cap: int | None, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    settings = DisplaySettings() if cap is None else dataclasses.replace(DisplaySettings(), cap=cap)
    table = pq.read_table(exported(docs, tmp_path / "core", settings, True))
    arrow = table.schema.field("data")
    assert pa.types.is_struct(arrow.type)
    payloads, notes, kinds, stored = (table[name].to_pylist()
                                      for name in ("data", "data:note", "data:kind", "data:stored"))
    for row, (text, past_budget) in enumerate(docs * 2):
        assert kinds[row] == "text", (row, text[:60])
        if past_budget:  # not read as JSON past the budget's nodes: a text, which no struct holds
            assert payloads[row] is None and notes[row] is not None, row
            assert notes[row].startswith("did not fit struct") and "data:stored" in notes[row], notes[row]
            assert stored[row] in (text.encode(), gzip.compress(text.encode(), mtime=0)), row
            continue
        assert notes[row] is None, (row, notes[row], text[:60])
        same(json.loads(text), rebuilt(payloads[row], arrow), f"row {row}")

    # the Python engine alone writes the same file (its own tree of each document)
    with monkeypatch.context() as patched:
        patched.setattr(native, "available", lambda: False)
        python_file = exported(docs, tmp_path / "python", settings, False)
    python = pq.read_table(python_file)
    assert python.schema == table.schema
    for name in table.column_names:
        assert python[name].to_pylist() == table[name].to_pylist(), name
