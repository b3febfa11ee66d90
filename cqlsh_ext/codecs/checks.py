"""What a checksum verification reports (INSPECT), shared by the codec modules' verifiers.

A format whose container carries checksums has the Checksums capability (codecs.capabilities): its
`verify`, in its own module, decodes on its own path that does not verify (so a mismatch is shown
next to the stored value instead of stopping at a decoder's one-line error) and computes each
checksum itself. Output is capped like a decode: what lies past the cap is reported as not checked.
insight.checksums dispatches to them.
"""

from __future__ import annotations

import struct
from collections.abc import Callable

from .base import Check, Decoded

__all__ = ["BY_DECODER", "MAX_CHECKS", "MISMATCH", "NOT_CHECKED", "OK", "Check", "Verifier", "by_decoder",
           "compare", "crc32c", "hex_"]

OK, MISMATCH, NOT_CHECKED, BY_DECODER = "ok", "mismatch", "not checked", "verified by the decoder"

u16le = struct.Struct("<H").unpack_from
#: Checks listed per value at the most (a stream of thousands of chunks is summarised).
MAX_CHECKS = 64


#: A verifier: (value, its decode or None, output cap, why it did not decode or None) -> checks.
Verifier = Callable[[bytes, "Decoded | None", int, "str | None"], list[Check]]


def hex_(value: int, width: int = 8) -> str:
    return f"0x{value:0{width}x}"


def compare(what: str, stored: int, computed: int, width: int = 8) -> Check:
    return Check(what, OK if stored == computed else MISMATCH, hex_(stored, width), hex_(computed, width))


def by_decoder(name: str) -> Verifier:
    """For containers whose checksums only the library's decoder checks: its verdict, named."""

    def check(data: bytes, decoded: Decoded | None, cap: int, error: str | None) -> list[Check]:
        if decoded is not None and not decoded.truncated:
            return [Check(name, BY_DECODER)]
        if error and "checksum" in error:
            return [Check(name, MISMATCH, detail=error)]
        return [Check(name, NOT_CHECKED, detail="output cap reached" if decoded is not None else error)]

    return check


# ---------------------------------------------------------------------------------------- CRC-32C


def _crc32c_table() -> list[int]:
    table = []
    for n in range(256):
        c = n
        for _ in range(8):
            c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
        table.append(c)
    return table


_CRC32C: list[int] = []


def crc32c(data: bytes) -> int:
    """CRC-32C (Castagnoli), table-driven; no library in our dependencies provides it."""
    if not _CRC32C:
        _CRC32C.extend(_crc32c_table())
    crc = 0xFFFFFFFF
    table = _CRC32C
    for b in data:
        crc = table[(crc ^ b) & 0xFF] ^ (crc >> 8)
    return crc ^ 0xFFFFFFFF
