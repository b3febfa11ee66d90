"""Verify the checksums a container carries, with our own code (INSPECT).

The decoders stop at the first bad checksum with a one-line error; INSPECT wants each stored value
next to the one computed here, for values that decode and for those that do not. Each codec
module's formats verify their own containers (the Checksums capability, codecs.capabilities, on a
decoding path that does not verify, see codecs.checks); this module dispatches through them and
keeps one value's failure to that value's line. Output is capped like a decode: what lies past the
cap is reported as not checked.
"""

from __future__ import annotations

from cqlsh_ext.codecs._common import reason
from cqlsh_ext.codecs.base import Container, Decoded
from cqlsh_ext.codecs.capabilities import Checksums
from cqlsh_ext.codecs.checks import BY_DECODER, MAX_CHECKS, MISMATCH, NOT_CHECKED, OK, Check, crc32c

__all__ = [
    "BY_DECODER", "MAX_CHECKS", "MISMATCH", "NOT_CHECKED", "OK", "Check", "crc32c", "has_checksums",
    "no_checksum_note", "verify"]


def verify(
    fmt: Container, data: bytes, decoded: Decoded | None, cap: int, error: str | None = None
) -> list[Check]:
    """Checks for one layer. `decoded`: the layer's output when it decoded; `error`: why it did not."""
    if not isinstance(fmt, Checksums):
        return []
    try:
        return fmt.verify(data, decoded, cap, error)
    except Exception as err:  # the last resort: whatever a library raises stays this value's line
        return [Check("checksums", NOT_CHECKED, detail=f"stream could not be walked: {reason(err)}")]


def has_checksums(fmt: Container) -> bool:
    """Whether the format carries checksums this module verifies (the Checksums capability)."""
    return isinstance(fmt, Checksums)


def no_checksum_note(fmt: Container) -> str | None:
    """Why a format shows no checks ('none in this format'), or None when it has checks."""
    if has_checksums(fmt):
        return None
    return "none in this format"
