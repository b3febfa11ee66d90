"""Java serialization streams read by their grammar, never deserialized (cqlsh_ext.payload.javaser).

The byte layouts follow the Java Object Serialization Specification; the real JDK's output is
compared in tests/test_harness.py (tests/java/Producers.java)."""

from __future__ import annotations

import struct

import pytest

from cqlsh_ext.payload.javaser import (
    MAGIC,
    JavaStreamError,
    decode_modified_utf8,
    read_first_content,
)


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
