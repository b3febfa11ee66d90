"""Spec steps naming a container as the display labels it, and levels (encode() writes them; the
display decodes with exactly that container and ignores the level)."""

from __future__ import annotations

import pytest
import snappy
import zstandard

from cqlsh_ext.payload.spec import SpecError, parse_spec
from cqlsh_ext.payload.unwrap import unwrap_spec
from cqlsh_ext.payload.view import TEXT

TEXT_VALUE = '{"a": 1, "b": "' + "x" * 200 + '"}'


def test_variants_and_levels_parse_case_blind() -> None:
    spec = parse_spec("SNAPPY/Xerial>text")
    assert spec.codecs == ("snappy",) and spec.variants == ("snappy/xerial",) and spec.payload == "text"
    spec = parse_spec("zstd:19>msgpack")
    assert spec.codecs == ("zstd",) and spec.levels == (19,) and spec.variants == (None,)
    assert parse_spec("lz4/LZ4Block").variants == ("lz4/LZ4Block",)


@pytest.mark.parametrize("text, reason", [
    ("snappy/foo", "no snappy container 'foo'"),
    ("zstd:high", "a codec takes a level"),
    ("gzip/gzip", "no gzip container"),
    ("msgpack:3", "takes no argument"),
])
def test_bad_steps_say_why(text: str, reason: str) -> None:
    with pytest.raises(SpecError, match=reason):
        parse_spec(text)


def test_a_named_container_decodes_only_that_container() -> None:
    raw = snappy.compress(TEXT_VALUE.encode())
    view = unwrap_spec(raw, "snappy", 1 << 20)
    assert view.kind == TEXT and view.text == TEXT_VALUE
    # The raw block is not a framed stream: naming the container refuses it, saying so.
    framed = unwrap_spec(raw, "snappy/framed", 1 << 20)
    assert framed.kind == "failed" and "snappy/framed" in (framed.reason or "")


def test_a_level_is_ignored_when_decoding() -> None:
    value = zstandard.ZstdCompressor(level=5).compress(TEXT_VALUE.encode())
    view = unwrap_spec(value, "zstd:19>text", 1 << 20)
    assert view.kind == TEXT and view.text == TEXT_VALUE
