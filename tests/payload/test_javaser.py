"""Java serialization streams read by their grammar, never deserialized (payload.formats.java:
first, stream).

The byte layouts follow the Java Object Serialization Specification. Whole streams are the real
JDK's output (tests/java/SerializedObjects.java), compared with what the Java source put in."""

from __future__ import annotations

import datetime
import struct

import pytest

from cqlsh_ext.payload.formats.java.first import (
    MAGIC,
    JavaStreamError,
    decode_modified_utf8,
    read_first_content,
)
from cqlsh_ext.payload.formats.java.stream import read_tree
from cqlsh_ext.payload.formats.tree import Tagged, jsonable, render


def tc_string(text: str) -> bytes:
    raw = text.encode("utf-8")
    return MAGIC + b"\x74" + struct.pack(">H", len(raw)) + raw


def test_a_string_is_read_as_its_text():
    content = read_first_content(tc_string('{"id": 1}'))
    assert (content.kind, content.text, content.truncated) == ("String", '{"id": 1}', False)


def test_a_long_string_uses_an_8_byte_length():
    raw = b"x" * 70_000
    content = read_first_content(MAGIC + b"\x7c" + struct.pack(">Q", len(raw)) + raw)
    assert content.kind == "String" and content.text == "x" * 70_000


def test_modified_utf8_nul_and_supplementary_characters():
    # U+0000 is C0 80; U+1F600 is a surrogate pair, each half in three bytes (CESU-8).
    assert decode_modified_utf8(b"a\xc0\x80b") == "a\x00b"
    assert decode_modified_utf8(b"\xed\xa0\xbd\xed\xb8\x80") == "\U0001f600"
    assert decode_modified_utf8(b"\xed\xa0\xbd") == "\ufffd"  # a lone surrogate stays visible


def test_a_string_cut_by_the_output_cap_says_so_and_drops_a_partial_character():
    whole = tc_string("héllo wörld")
    content = read_first_content(whole[:-4])  # cut inside "ö"
    assert content.truncated and content.text == "héllo w"


def test_objects_arrays_and_enums_are_named_by_class_only():
    desc = b"\x72" + struct.pack(">H", 19) + b"java.util.ArrayList" + b"\x00" * 12
    assert read_first_content(MAGIC + b"\x73" + desc).class_name == "java.util.ArrayList"
    assert read_first_content(MAGIC + b"\x73" + desc).kind == "object"
    assert read_first_content(MAGIC + b"\x75" + desc).kind == "array"
    assert read_first_content(MAGIC + b"\x7e" + desc).kind == "enum"
    assert read_first_content(MAGIC + b"\x70").kind == "null"


@pytest.mark.parametrize(("data", "reason"), [
    (b"\xac\xed\x00\x04\x74", "not a Java serialization stream"),
    (MAGIC + b"\x74\x00", "stream cut short"),
    (MAGIC + b"\x73\x72\x00\x40java", "class descriptor cut short"),
    (MAGIC + b"\x73\x10", "unexpected type code 0x10"),
    (MAGIC + b"\x01", "unknown type code 0x01"),
])
def test_malformed_streams_give_a_short_reason(data, reason):
    with pytest.raises(JavaStreamError, match=reason):
        read_first_content(data)


def test_a_huge_declared_length_allocates_nothing():
    content = read_first_content(MAGIC + b"\x7c" + struct.pack(">Q", 2**62) + b"abc")
    assert content.truncated and content.text == "abc"



# ------------------------------------------------------------------ whole streams from the JDK

#: What tests/java/SerializedObjects.java writes, as a reader should show it.
JDK_EXPECTED = {
    "integer": 42,
    "long": -7,
    "double": 2.5,
    "boolean": True,
    "array_list": ["a", 1, 2.5, None, True],
    "linked_hash_map": {"id": 7, "name": "widget", "tags": ["x", "y"],
                        "price": Tagged("BigDecimal", "19.99")},
    "hash_map_int_keys": {1: "one", 2: "two"},
    "tree_map": {"a": 1, "b": 2},
    "hash_set": ["only"],
    "linked_hash_set": ["x", "y", "z"],
    "tree_set": [1, 2, 3],
    "linked_list": [1, 2],
    "array_deque": ["p", "q"],
    "hashtable": {"k": "v"},
    "concurrent_hash_map": {"k": 1},
    "list_of": ["i", "j"],
    "map_of": {"m": 1},
    "set_of": [5],
    "unmodifiable_list": [1, 2],
    "arrays_as_list": ["r", "s"],
    "int_array": [1, 2, 3],
    "string_array": ["u", "v"],
    "byte_array": b"\x00\x01\xff",
    "enum": Tagged("java.time.DayOfWeek", "FRIDAY"),
    "date": datetime.datetime(2023, 11, 14, 22, 13, 20, 123000, tzinfo=datetime.timezone.utc),
    "uuid": Tagged("UUID", "123e4567-e89b-12d3-a456-426614174000"),
    "big_integer": 123456789012345678901234567890,
    # Every digit, as BigDecimal.toString writes it (the default decimal context kept 28 of them).
    "big_decimal_40_digits": Tagged("BigDecimal", "1234567890123456789012345678901234.567890"),
    "big_decimal_exponent": Tagged("BigDecimal", "1.5E+40"),
    "order": Tagged("SerializedObjects$Order", {
        "id": 1001, "paid": True, "total": 99.5, "customer": "customer-07",
        "day": Tagged("java.time.DayOfWeek", "MONDAY"), "items": ["book", "pen"]}),
    # writeUTF("extra") is block data: its 2-byte length, then the bytes; then the object "tail".
    "versioned": Tagged("SerializedObjects$Versioned", {
        "version": 3, "writeObject data": [b"\x00\x05extra", "tail"]}),
    "shared_list": [["s"], ["s"]],
}


@pytest.fixture(scope="module")
def jdk() -> dict[str, bytes]:
    from java_producers import java_serialized_objects

    return java_serialized_objects()


@pytest.mark.java
def test_jdk_collections_boxed_numbers_and_classes_read_as_written(jdk):
    for name, expected in JDK_EXPECTED.items():
        assert read_tree(jdk[name]) == expected, name


@pytest.mark.java
def test_a_cycle_is_marked_not_followed(jdk):
    tree = read_tree(jdk["cyclic_list"])
    assert tree == ["self", Tagged("cycle", "back to the enclosing java.util.ArrayList")]
    assert render(tree) == '["self",cycle("back to the enclosing java.util.ArrayList")]'


@pytest.mark.java
def test_hostile_shapes_stop_with_a_reason(jdk):
    with pytest.raises(JavaStreamError, match="nested deeper than 64"):
        read_tree(jdk["deep_nesting"])
    assert len(jdk["shared_bomb"]) < 2_000  # 2^40 leaves if every reference were walked
    with pytest.raises(JavaStreamError, match="more than 100,000 values"):
        read_tree(jdk["shared_bomb"])


@pytest.mark.java
def test_json_output_of_a_java_object_is_plain_json(jdk):
    assert jsonable(read_tree(jdk["order"])) == {"$tag": "SerializedObjects$Order", "value": {
        "id": 1001, "paid": True, "total": 99.5, "customer": "customer-07",
        "day": {"$tag": "java.time.DayOfWeek", "value": "MONDAY"}, "items": ["book", "pen"]}}


@pytest.mark.parametrize("data", [
    MAGIC + b"\x75\x72\x00\x02[I" + b"\x00" * 11 + b"\x78\x70" + struct.pack(">i", 2**30),  # int[2^30]
    MAGIC + b"\x73\x72\x00\x01X" + b"\x00" * 8 + b"\x02" + struct.pack(">h", 30000),  # 30,000 fields
    MAGIC + b"\x71" + struct.pack(">i", 0x7E0000 + 5),  # a reference to nothing
])
def test_declared_sizes_larger_than_the_stream_allocate_nothing(data):
    with pytest.raises(JavaStreamError):
        read_tree(data)


def test_a_column_setting_can_name_java():
    import gzip

    from cqlsh_ext.payload.unwrap import unwrap_spec
    from cqlsh_ext.payload.view import FAILED, TEXT

    view = unwrap_spec(gzip.compress(tc_string('{"id": 1}')), "gzip>java", 1 << 20)
    assert (view.kind, view.text) == (TEXT, '{"id": 1}')
    assert [layer.label for layer in view.layers] == ["gzip", "java"]
    view = unwrap_spec(gzip.compress(b'{"id": 1}'), "gzip>java", 1 << 20)
    assert view.kind == FAILED
    assert view.reason == "as gzip>java: java: no serialization stream magic (0xaced0005)"


@pytest.mark.java
def test_mutated_jdk_streams_give_a_reason_never_an_exception(jdk):
    # Random bytes changed or cut in real streams: each reads, or fails with a JavaStreamError;
    # nothing else escapes (found: a BigDecimal scale beyond decimal's range).
    import random

    rng = random.Random(7)
    for name, data in jdk.items():
        if name.startswith("gzip_") or name in ("deep_nesting", "shared_bomb"):
            continue
        for _ in range(300):
            mutated = bytearray(data)
            for _ in range(rng.randint(1, 4)):
                mutated[rng.randrange(4, len(mutated))] = rng.randrange(256)
            if rng.random() < 0.3:
                mutated = mutated[: rng.randrange(4, len(mutated))]
            try:
                render(read_tree(bytes(mutated)))
            except JavaStreamError:
                pass


def test_a_class_name_in_a_reason_stays_on_one_line():
    # An Externalizable class written in the old protocol cannot be read without the class: the
    # reason names it, and the name (the stream's own bytes) may hold a newline or be 65,535 long.
    for name in ("a\nb", "x" * 60_000):
        raw = name.encode()
        flags_no_fields = b"\x04" + struct.pack(">h", 0)  # SC_EXTERNALIZABLE without SC_BLOCK_DATA
        desc = b"\x72" + struct.pack(">H", len(raw)) + raw + b"\x00" * 8 + flags_no_fields + b"\x78\x70"
        with pytest.raises(JavaStreamError) as err:
            read_tree(MAGIC + b"\x73" + desc)
        reason = str(err.value)
        assert "\n" not in reason and len(reason) < 200, reason
        assert reason.endswith("externalizable data in the old protocol, readable by its class only"), reason
