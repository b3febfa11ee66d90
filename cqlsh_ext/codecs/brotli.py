"""brotli: no signature (254 of 256 first bytes are valid), so only on -d brotli.

The brotli package is optional and imported on first use. brotli >= 1.2 is needed for a capped
decode (`process(..., output_buffer_limit=)`), which is block-granular: it can overshoot about 2x,
so the output is sliced to the cap afterwards.
"""

from __future__ import annotations

from functools import partial
from typing import Any

from ._common import library, wrap
from .base import Compressor, Container, Decoded, DecodeError
from .capabilities import Compressors, NeedsWorker, Writer

#: Read without importing this module (common.declarations): the -d names it answers, each with its
#: place in name lists and help.
DECLARES = {"names": {"brotli": 90}}

_mod: Any = None


def _load() -> Any:
    global _mod
    _mod = library("brotli", "brotli not installed")
    return _mod


class Brotli(Container, Compressors, Writer, NeedsWorker):
    """brotli (Brotli4j, Python brotli, Go andybalholm/brotli)."""

    codec = "brotli"
    container = "brotli"
    primary = True
    grade = "D"
    tried_by = {"brotli": 10}

    # Compressors: what COMPRESSION ADVISE measures.
    advise_priority = 50
    library = "brotli"
    levels = (1, 6, 11)

    # Writer: what encode() writes.
    writes_bare = True
    reference = "brotli.compress (quality 11, the library's default)"
    level_range = (0, 11)

    # NeedsWorker: INSPECT and ADVISE decode it in a memory-limited worker.
    needs_worker = "no header to check; its output limit stops only between blocks"

    def write(self, data: bytes, level: int | None) -> bytes:
        import brotli

        return bytes(brotli.compress(data, quality=11 if level is None else level))

    def compressors(self) -> list[Compressor]:
        import brotli

        return [Compressor(f"{self.label} {q}", self.codec, partial(brotli.compress, quality=q),
                           brotli.decompress, slow=q >= 10) for q in self.levels]

    def matches(self, data: bytes) -> bool:
        return False

    def decode(self, data: bytes, cap: int) -> Decoded:
        mod = _mod or _load()
        if not data:
            raise DecodeError("empty value")
        try:
            dec = mod.Decompressor()
            try:
                out = dec.process(data, output_buffer_limit=max(cap, 1))
            except TypeError:
                raise DecodeError("brotli >= 1.2 needed for a capped decode") from None
            finished = dec.is_finished()
        except Exception as e:
            raise wrap(e) from None
        if len(out) > cap or (not finished and len(out) >= cap):
            return Decoded(out[:cap], True)
        if not finished:
            raise DecodeError("truncated stream")
        return Decoded(out)


# One instance per format (formats are stateless), in the order registry.all_containers() lists them.
FORMATS: tuple[Container, ...] = (Brotli(),)
