"""Every JSON cqlsh-ext writes spells bytes, times, NaN and the infinities the same way, by the one
module that spells them (cqlsh_ext.common.jsonenc): result rows (OUTPUT FORMAT JSON), the records decoded
from blobs and embedded in them (and in CSV), INSPECT/COMPRESSION reports and offline
`cqlsh-ext inspect --json`. No server needed."""

from __future__ import annotations

import datetime
import json
import math
from pathlib import Path
from typing import Any

import hypothesis
import msgpack
import pytest
from cassandra import cqltypes

from cqlsh_ext.common import jsonenc
from cqlsh_ext.output.spellings import CsvSpelling, JsonSpelling
from cqlsh_ext.payload.formats.tree import jsonable
from cqlsh_ext.settings import DisplaySettings

UTC = datetime.timezone.utc
AT = datetime.datetime(2024, 5, 6, 7, 8, 9, 123000)

# (value, how every writer spells it once read back as JSON)
SPELLED: dict[str, tuple[Any, Any]] = {
    "bytes": (b"\x00\xff\x10", "0x00ff10"),
    "naive time (UTC)": (AT, "2024-05-06T07:08:09.123Z"),
    "time in UTC": (AT.replace(tzinfo=UTC), "2024-05-06T07:08:09.123Z"),
    "time in +02:00": (datetime.datetime(2024, 5, 6, 9, 8, 9, 123000,
                                         tzinfo=datetime.timezone(datetime.timedelta(hours=2))),
                       "2024-05-06T07:08:09.123Z"),
    "NaN": (math.nan, "NaN"),
    "Infinity": (math.inf, "Infinity"),
    "-Infinity": (-math.inf, "-Infinity"),
    "a plain float": (2.5, 2.5),
}

# What a CQL column of each kind holds, for the typed path of the row encoder.
CQL_TYPE = {bytes: cqltypes.BytesType, datetime.datetime: cqltypes.DateType, float: cqltypes.DoubleType}


@pytest.fixture
def enc() -> JsonSpelling:
    return JsonSpelling(DisplaySettings())


def _record(value: Any) -> bytes:
    """A MessagePack record holding `value`, as a producer writes it (detected: a map holding a string)."""
    if isinstance(value, datetime.datetime):
        if value.tzinfo is None:
            value = value.replace(tzinfo=UTC)  # MessagePack's timestamp is an instant
        value = msgpack.Timestamp.from_datetime(value)
    return msgpack.packb({"v": value, "s": "text"})


@pytest.mark.parametrize("name", SPELLED)
def test_result_rows_typed_and_untyped(enc, name):
    value, spelled = SPELLED[name]
    assert json.loads(enc.value(value)) == spelled
    assert json.loads(enc.value(value, CQL_TYPE[type(value)])) == spelled
    if isinstance(value, float):  # a CQL float column: the shortest 32-bit text, names alike
        assert json.loads(enc.value(value, cqltypes.FloatType)) == spelled


@pytest.mark.parametrize("name", SPELLED)
def test_decoded_records_in_rows_and_csv(enc, name):
    value, spelled = SPELLED[name]
    blob = _record(value)
    obj = json.loads(enc.value(blob, cqltypes.BytesType))
    assert (obj["label"], obj["kind"]) == ("msgpack", "record")
    assert obj["payload"] == {"v": spelled, "s": "text"}
    csv_field = CsvSpelling(DisplaySettings()).value(blob, cqltypes.BytesType)
    assert json.loads(csv_field) == {"v": spelled, "s": "text"}


@pytest.mark.parametrize("name", SPELLED)
def test_tree_jsonable(name):
    value, spelled = SPELLED[name]
    assert json.loads(json.dumps(jsonable({"v": value, "in": [value]}), allow_nan=False)) == {
        "v": spelled, "in": [spelled]}


@pytest.mark.parametrize("name", SPELLED)
def test_report_documents(name):
    value, spelled = SPELLED[name]
    for pretty in (False, True):
        text = jsonenc.dumps({"v": value, "in": [value]}, pretty)
        assert json.loads(text) == {"v": spelled, "in": [spelled]}


def test_offline_inspect_json_goes_through_the_one_dumper(tmp_path: Path, monkeypatch, capsys):
    from cqlsh_ext.cli import main

    written: list[Any] = []
    dumps = jsonenc.dumps
    monkeypatch.setattr(jsonenc, "dumps", lambda doc, pretty=False: written.append(doc) or dumps(doc, pretty))
    path = tmp_path / "value.msgpack"
    path.write_bytes(_record(b"\x00\xff\x10"))
    assert main(["inspect", "--json", str(path)]) == 0
    (doc,) = written
    assert json.loads(capsys.readouterr().out) == json.loads(dumps(doc))


def test_times_keep_a_finer_part_but_cql_timestamps_are_milliseconds(enc):
    fine = datetime.datetime(2024, 5, 6, 7, 8, 9, 123456, tzinfo=UTC)
    assert jsonenc.time_text(fine) == "2024-05-06T07:08:09.123456Z"
    assert jsonable([fine]) == ["2024-05-06T07:08:09.123456Z"]
    assert json.loads(enc.value(_record(fine), cqltypes.BytesType))["payload"]["v"] == (
        "2024-05-06T07:08:09.123456Z")
    # The driver's float arithmetic leaves noise below the millisecond on a CQL timestamp.
    assert enc.value(fine, cqltypes.DateType) == '"2024-05-06T07:08:09.123Z"'
    assert enc.value(fine) == '"2024-05-06T07:08:09.123Z"'
    assert jsonenc.time_text(datetime.datetime(2024, 5, 6)) == "2024-05-06T00:00:00.000Z"


def test_map_keys_of_bytes_in_records_are_spelled_as_values():
    assert jsonable({b"\x01": b"\x02"}) == {"0x01": "0x02"}


def test_nan_and_the_infinities_are_named_in_one_place():
    spelling = Path(jsonenc.__file__)
    root = spelling.parents[1]  # the whole package
    for path in root.rglob("*.py"):
        if path == spelling:
            continue
        code = "\n".join(line.split("#", 1)[0] for line in path.read_text().splitlines())
        # A token that is no value (an MCP cursor: urlsafe base64) is not a spelling of bytes.
        code = code.replace("urlsafe_b64encode", "")
        for needle in ('"NaN"', "'NaN'", '"Infinity"', "isnan(", "isfinite(", "$base64", "b64encode"):
            assert needle not in code, f"{path.relative_to(root)}: {needle}: spell it with common/jsonenc.py"


_ANY_CHARACTER = hypothesis.strategies.one_of(hypothesis.strategies.characters(),
                                              hypothesis.strategies.characters(categories=["Cs"]))


@hypothesis.given(hypothesis.strategies.text(_ANY_CHARACTER))
def test_a_string_literal_is_what_json_dumps_writes(text):
    # jsonenc.string calls the encoder's function directly: the same text, escapes and lone
    # surrogates included, without an encoder built per call.
    assert jsonenc.string(text) == json.dumps(text, ensure_ascii=False)
    assert json.loads(jsonenc.string(text)) == text
