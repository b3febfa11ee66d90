"""Every JSON cqlsh-ext writes spells bytes, times, NaN and the infinities the same way, by the one
module that spells them (cqlsh_ext.common.jsonenc): result rows (OUTPUT FORMAT JSON), the records decoded
from blobs and embedded in them (and in CSV), INSPECT/COMPRESSION reports and offline
`cqlsh-ext inspect --json`. No server needed."""

from __future__ import annotations

import datetime
import json
import math
from decimal import Decimal
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
    # The same JSON values made without the text (cqlsh-ext mcp's reports and INSPECT values).
    assert jsonenc.loaded({"v": value, "in": (value,)}) == {"v": spelled, "in": [spelled]}


_st = hypothesis.strategies
_LEAVES = (_st.none() | _st.booleans() | _st.integers() | _st.floats() | _st.text() | _st.binary()
           | _st.datetimes() | _st.decimals(allow_nan=False) | _st.fractions() | _st.uuids() | _st.dates())
_KEYS = (_st.text() | _st.integers() | _st.booleans() | _st.none()
         | _st.floats(allow_nan=False, allow_infinity=False))


@hypothesis.given(_st.recursive(_LEAVES, lambda inner: _st.lists(inner, max_size=4)
                                | _st.dictionaries(_KEYS, inner, max_size=4), max_leaves=20))
def test_a_report_document_as_values_is_what_its_json_text_reads_back(document):
    """jsonenc.loaded gives, without writing the text, the JSON values jsonenc.dumps's text holds:
    bytes, times, Fractions, decimals, UUIDs their text, NaN and the infinities by name, keys as
    json.dumps writes them (1, true, null, 2.5), a key written twice keeping its last value."""
    assert jsonenc.loaded(document) == json.loads(jsonenc.dumps(document))


def test_a_report_document_as_values_spells_what_json_has_no_type_for():
    from fractions import Fraction

    document = {"set": frozenset({b"\x01"}), "tuple": (1, 2.5), "ratio": Fraction(1, 3), 7: None,
                True: "yes", None: [datetime.date(2024, 5, 6)], 0.5: math.nan}
    assert jsonenc.loaded(document) == json.loads(jsonenc.dumps(document)) == {
        "set": ["0x01"], "tuple": [1, 2.5], "ratio": "1/3", "7": None, "true": "yes",
        "null": ["2024-05-06"], "0.5": "NaN"}


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
    # surrogates included, without an encoder built per call; the characters a line-oriented
    # reader ends a line at escaped too (LINE_BREAKS), so the literal is one line.
    want = json.dumps(text, ensure_ascii=False)
    for char, escape in jsonenc.LINE_BREAKS.items():
        want = want.replace(char, escape)
    assert jsonenc.string(text) == want
    assert json.loads(jsonenc.string(text)) == text
    assert len(jsonenc.string(text).splitlines()) == 1


def _values() -> list[tuple[str, Any, Any]]:
    """(name, value, CQL type or None) of every kind a row holds, typed and untyped."""
    import decimal
    import gzip
    import ipaddress
    import uuid

    from cassandra import util

    doc = '{"a": 1.50, "big": 123456789012345678901234567890, "s": "é\\u2028", "n": [1, 2.0, null], "a": 2}'
    cases: list[tuple[str, Any, Any]] = [
        ("null", None, cqltypes.Int32Type), ("true", True, cqltypes.BooleanType),
        ("int", 7, cqltypes.Int32Type),
        ("varint", 10**40, cqltypes.IntegerType), ("double", 0.1, cqltypes.DoubleType),
        ("float", 0.1, cqltypes.FloatType), ("-0.0", -0.0, cqltypes.DoubleType),
        ("nan", math.nan, cqltypes.DoubleType), ("inf float", -math.inf, cqltypes.FloatType),
        ("decimal", decimal.Decimal("1.50"), cqltypes.DecimalType),
        ("decimal exp", decimal.Decimal("1E+2"), cqltypes.DecimalType),
        ("decimal whole", decimal.Decimal("-12345678901234567890"), cqltypes.DecimalType),
        ("decimal past a float", decimal.Decimal("12345678901234567890.123"), cqltypes.DecimalType),
        ("decimal tiny", decimal.Decimal("-1E-26"), cqltypes.DecimalType),
        ("decimal nan", decimal.Decimal("NaN"), cqltypes.DecimalType),
        ("text", "é \"q\" \u2028", cqltypes.UTF8Type), ("timestamp", AT, cqltypes.DateType),
        ("timestamp ms", 10**15, cqltypes.DateType),
        ("duration", util.Duration(1, 2, 3_000_000_000), cqltypes.DurationType),
        ("uuid", uuid.UUID(int=5), cqltypes.UUIDType), ("inet", ipaddress.ip_address("10.0.0.1"), None),
        ("date", util.Date(19000), cqltypes.SimpleDateType),
        ("time", util.Time(5_000_000), cqltypes.TimeType),
        ("unknown bytes", b"\x00\x01\x02garbage", cqltypes.BytesType),
        ("empty bytes", b"", cqltypes.BytesType),
        ("gzip json", gzip.compress(doc.encode(), mtime=0), cqltypes.BytesType),
        ("gzip text", gzip.compress(b"plain words", mtime=0), cqltypes.BytesType),
        ("msgpack", msgpack.packb({1: [1, 2], "s": "x", "f": 1.5, "t": (1, "a"), "b": b"\x01"}),
         cqltypes.BytesType),
    ]
    ints = cqltypes.lookup_casstype("org.apache.cassandra.db.marshal.Int32Type")
    text = cqltypes.lookup_casstype("org.apache.cassandra.db.marshal.UTF8Type")
    cases += [
        ("list", [1, 2], cqltypes.ListType.apply_parameters([ints])),
        ("set", util.SortedSet(["b", "a"]), cqltypes.SetType.apply_parameters([text])),
        ("map int keys", {1: "a", 2: "b"}, cqltypes.MapType.apply_parameters([ints, text])),
        ("map text keys", {"k": 1}, cqltypes.MapType.apply_parameters([text, ints])),
        ("tuple", (1, "a"), cqltypes.TupleType.apply_parameters([ints, text])),
        ("map of blobs", {"k": gzip.compress(b'{"x": 1}', mtime=0)},
         cqltypes.MapType.apply_parameters([text, cqltypes.BytesType])),
    ]
    untyped = [(f"{name}, untyped", value, None) for name, value, _ in cases]
    return cases + untyped


@pytest.mark.parametrize("name, value, cqltype", _values())
def test_the_values_spelling_is_the_texts_read_back(enc, name, value, cqltype):
    # cqlsh-ext mcp screens and measures a row's JSON values (JsonSpelling.tree), never its text read
    # back: the JSON the client receives must be what the text read back would have made.
    def compact(data: Any) -> str:  # as the SDK writes it
        return json.dumps(data, ensure_ascii=False, separators=(",", ":"))

    def exact_or_float(number: str) -> Any:  # a decimal a float would change stays its text
        near = float(number)
        return near if math.isfinite(near) and Decimal(repr(near)) == Decimal(number) else number

    text = enc.value(value, cqltype)
    read_back = json.loads(text, parse_float=exact_or_float if isinstance(value, Decimal) else None)
    assert compact(enc.tree(value, cqltype)) == compact(read_back), text


def test_a_blob_object_s_keys_are_declared_once(enc):
    """Every key JsonSpelling gives a decoded blob's object, as text and as a tree (MCP's values),
    is one of BLOB_OBJECT_KEYS, which MCP's redaction reads to know a blob's object from a
    payload's: a key it did not know (confidence, once) let a redacted path inside a blob through."""
    import gzip
    import zlib

    from cqlsh_ext.output.spellings import BLOB_OBJECT_KEYS

    values = [_record("x"), gzip.compress(b'{"customer": {"email": "a@b.c"}}'), b"\x00\x01not a format",
              gzip.compress(b"plain text"), zlib.compress(b"[1, 2, 3]"), gzip.compress(b'{"a": 1}')[:-3]]
    seen: set[str] = set()
    for blob in values:
        for obj in (json.loads(enc.value(blob, cqltypes.BytesType)), enc.tree(blob, cqltypes.BytesType)):
            if isinstance(obj, dict):
                seen.update(obj)
                assert set(obj) <= BLOB_OBJECT_KEYS, obj
    assert {"label", "kind", "payload", "confidence"} <= seen
