"""brotli: decoded only when named (it has no signature)."""

from __future__ import annotations

import pytest

from cqlsh_ext.codecs import registry
from cqlsh_ext.codecs.base import DecodeError

try:
    import brotli
except ImportError:  # optional dependency
    brotli = None

from codec_producers import (
    json_doc,
)


def test_brotli_named_only() -> None:
    if brotli is None:
        pytest.skip("brotli not installed")
    d = json_doc(20_000)
    v = brotli.compress(d)
    assert registry.decode_auto(v) is None or registry.decode_auto(v)[0].label != "brotli"
    assert registry.decode_named("brotli", v)[1].data == d
    fmt, dec = registry.decode_named("brotli", v, 1000)
    assert dec.truncated and dec.data == d[:1000]
    with pytest.raises(DecodeError, match="^brotli: truncated stream"):
        registry.decode_named("brotli", v[: len(v) // 2])
