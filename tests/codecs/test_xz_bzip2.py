"""bzip2 and xz: concatenated streams."""

from __future__ import annotations

import bz2
import lzma

from cqlsh_ext.codecs import registry

try:
    import brotli
except ImportError:  # optional dependency
    brotli = None




def test_bzip2_and_xz_multi_stream() -> None:
    a, b = b"one " * 100, b"two " * 100
    assert registry.decode_auto(bz2.compress(a) + bz2.compress(b))[1].data == a + b
    assert registry.decode_auto(lzma.compress(a) + lzma.compress(b))[1].data == a + b
