"""Verify the checksums a container carries, with our own code (INSPECT).

The decoders stop at the first bad checksum with a one-line error; INSPECT wants each stored value
next to the one computed here, for values that decode and for those that do not. So every check
decodes on its own path that does not verify (raw inflate instead of gzip/zlib; a zstd frame with
its checksum flag cleared; LZ4 frame blocks one by one), then computes the checksum itself:

  gzip          CRC-32 and ISIZE per member, header CRC-16 when FHCRC is set
  zlib          Adler-32
  zstd          low 32 bits of XXH64 of each frame's content (checksum flag set)
  LZ4 frame     header checksum, block checksums (XXH32 of the stored block), content XXH32
  LZ4Block      XXH32 (seed 0x9747b28c) of each block, low 28 bits (lz4-java)
  snappy framed masked CRC-32C of each data chunk's uncompressed bytes
  bzip2, xz     checked by the decoder (libbz2, liblzma) only
Output is capped like a decode: what lies past the cap is reported as not checked.
"""

from __future__ import annotations

import struct
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, cast

from cqlsh_ext.codecs._common import reason
from cqlsh_ext.codecs.base import Decoded, DecodeError, Format

OK, MISMATCH, NOT_CHECKED, BY_DECODER = "ok", "mismatch", "not checked", "verified by the decoder"

_u16le = struct.Struct("<H").unpack_from
_u32le = struct.Struct("<I").unpack_from
_u32be = struct.Struct(">I").unpack_from
#: Checks listed per value at the most (a stream of thousands of chunks is summarised).
MAX_CHECKS = 64


@dataclass
class Check:
    what: str
    status: str
    stored: str | None = None
    computed: str | None = None
    detail: str | None = None

    def to_json(self) -> dict[str, object]:
        return {k: v for k, v in self.__dict__.items() if v is not None}


def _hex(value: int, width: int = 8) -> str:
    return f"0x{value:0{width}x}"


def _compare(what: str, stored: int, computed: int, width: int = 8) -> Check:
    return Check(what, OK if stored == computed else MISMATCH, _hex(stored, width), _hex(computed, width))


# ---------------------------------------------------------------------------------------- CRC-32C


def _crc32c_table() -> list[int]:
    table = []
    for n in range(256):
        c = n
        for _ in range(8):
            c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
        table.append(c)
    return table


_CRC32C = _crc32c_table()


def crc32c(data: bytes) -> int:
    """CRC-32C (Castagnoli), table-driven; no library in our dependencies provides it."""
    crc = 0xFFFFFFFF
    table = _CRC32C
    for b in data:
        crc = table[(crc ^ b) & 0xFF] ^ (crc >> 8)
    return crc ^ 0xFFFFFFFF


def snappy_mask(crc: int) -> int:
    """The framing format's masked CRC: ((c >> 15) | (c << 17)) + 0xa282ead8, mod 2**32."""
    return (((crc >> 15) | (crc << 17)) + 0xA282EAD8) & 0xFFFFFFFF


# ---------------------------------------------------------------------------------------- formats


def verify(
    fmt: Format, data: bytes, decoded: Decoded | None, cap: int, error: str | None = None
) -> list[Check]:
    """Checks for one layer. `decoded`: the layer's output when it decoded; `error`: why it did not."""
    handler = _HANDLERS.get((fmt.codec, fmt.container))
    if handler is None:
        return []
    try:
        return handler(data, decoded, cap, error)
    except Exception as err:  # the last resort: whatever a library raises stays this value's line
        return [Check("checksums", NOT_CHECKED, detail=f"stream could not be walked: {reason(err)}")]


def no_checksum_note(fmt: Format) -> str | None:
    """Why a format shows no checks ('none in this format'), or None when it has checks."""
    if (fmt.codec, fmt.container) in _HANDLERS:
        return None
    return "none in this format"


def _gzip(data: bytes, decoded: Decoded | None, cap: int, error: str | None) -> list[Check]:
    checks: list[Check] = []
    pos, member, left = 0, 0, cap
    n = len(data)
    while pos < n and len(checks) < MAX_CHECKS:
        if not data.startswith(b"\x1f\x8b\x08", pos):
            break  # trailing bytes (zero padding or garbage) are not a member
        flg = data[pos + 3]
        p = pos + 10
        if flg & 0x04:
            p += 2 + _u16le(data, p)[0]
        for bit in (0x08, 0x10):
            if flg & bit:
                end = data.index(b"\x00", p)
                p = end + 1
        name = f"member {member}: "
        if flg & 0x02:
            checks.append(
                _compare(f"{name}header CRC-16", _u16le(data, p)[0], zlib.crc32(data[pos:p]) & 0xFFFF, 4)
            )
            p += 2
        obj = zlib.decompressobj(-15)
        out = obj.decompress(memoryview(data)[p:], max(left, 1))
        if not obj.eof:
            why = "output cap reached" if len(out) >= left else "stream cut short"
            checks.append(Check(f"{name}CRC-32", NOT_CHECKED, detail=why))
            break
        trailer = obj.unused_data
        if len(trailer) < 8:
            checks.append(Check(f"{name}CRC-32", NOT_CHECKED, detail="trailer cut short"))
            break
        checks.append(_compare(f"{name}CRC-32", _u32le(trailer, 0)[0], zlib.crc32(out)))
        checks.append(
            Check(
                f"{name}ISIZE",
                OK if _u32le(trailer, 4)[0] == len(out) & 0xFFFFFFFF else MISMATCH,
                str(_u32le(trailer, 4)[0]),
                str(len(out)),
            )
        )
        left -= len(out)
        pos = n - len(trailer) + 8
        member += 1
    if member <= 1:  # one member (the usual case): no prefix
        for check in checks:
            check.what = check.what.removeprefix("member 0: ")
    return checks


def _zlib(data: bytes, decoded: Decoded | None, cap: int, error: str | None) -> list[Check]:
    if data[1] & 0x20:
        return [Check("Adler-32", NOT_CHECKED, detail="needs the preset dictionary")]
    obj = zlib.decompressobj(-15)
    out = obj.decompress(memoryview(data)[2:], max(cap, 1))
    if not obj.eof:
        return [
            Check(
                "Adler-32",
                NOT_CHECKED,
                detail="output cap reached" if len(out) >= cap else "stream cut short",
            )
        ]
    if len(obj.unused_data) < 4:
        return [Check("Adler-32", NOT_CHECKED, detail="trailer cut short")]
    return [_compare("Adler-32", _u32be(obj.unused_data, 0)[0], zlib.adler32(out))]


def _zstd(data: bytes, decoded: Decoded | None, cap: int, error: str | None) -> list[Check]:
    import xxhash

    from cqlsh_ext.codecs.registry import ZSTD

    checks: list[Check] = []
    frames = cast(list[dict[str, Any]], ZSTD.headers(data)["frames"])
    left = cap
    for i, frame in enumerate(frames):
        if len(checks) >= MAX_CHECKS or "FHD" not in frame:
            continue  # skippable frames and trailing bytes carry no checksum
        what = (
            f"frame {i}: content checksum (XXH64, low 32 bits)"
            if len(frames) > 1
            else "content checksum (XXH64, low 32 bits)"
        )
        if not frame["checksum_flag"]:
            checks.append(Check(what, NOT_CHECKED, detail="checksum flag not set by the producer"))
            continue
        if "error" in frame:
            checks.append(Check(what, NOT_CHECKED, detail=str(frame["error"])))
            continue
        if frame.get("dict_id"):
            checks.append(Check(what, NOT_CHECKED, detail="needs the dictionary"))
            continue
        start, end = int(frame["offset"]), int(frame["offset"]) + int(frame["compressed_size"])
        stored = _u32le(data, end - 4)[0]
        # The same frame with the checksum flag cleared and the checksum dropped: decodes without
        # libzstd verifying it, so a mismatch is shown instead of an error.
        body = bytearray(data[start : end - 4])
        body[4] &= ~0x04
        try:
            out = ZSTD.decode(bytes(body), left)
        except DecodeError as err:
            checks.append(Check(what, NOT_CHECKED, _hex(stored), detail=str(err)))
            continue
        if out.truncated:
            checks.append(Check(what, NOT_CHECKED, _hex(stored), detail="output cap reached"))
            break
        left -= len(out.data)
        checks.append(_compare(what, stored, xxhash.xxh64_intdigest(out.data) & 0xFFFFFFFF))
    return checks


def _lz4_frame(data: bytes, decoded: Decoded | None, cap: int, error: str | None) -> list[Check]:
    import lz4.block
    import xxhash

    from cqlsh_ext.codecs._common import skip_skippable

    checks: list[Check] = []
    pos = skip_skippable(data)
    left = cap
    frame = 0
    while 0 <= pos < len(data) and data.startswith(b"\x04\x22\x4d\x18", pos) and len(checks) < MAX_CHECKS:
        prefix = f"frame {frame}: " if frame else ""
        flg, bd = data[pos + 4], data[pos + 5]
        hl = 7 + (8 if flg & 0x08 else 0) + (4 if flg & 0x01 else 0)
        checks.append(
            _compare(
                f"{prefix}header checksum (XXH32 >> 8)",
                data[pos + hl - 1],
                (xxhash.xxh32_intdigest(data[pos + 4 : pos + hl - 1]) >> 8) & 0xFF,
                2,
            )
        )
        max_block = {4: 64 << 10, 5: 256 << 10, 6: 1 << 20, 7: 4 << 20}.get((bd >> 4) & 7, 4 << 20)
        p = pos + hl
        content = xxhash.xxh32()
        window = b""
        block = 0
        capped = False
        broken: str | None = None
        while True:
            word = _u32le(data, p)[0]
            p += 4
            if word == 0:
                break
            size = word & 0x7FFFFFFF
            raw = data[p : p + size]
            if len(raw) < size:
                raise DecodeError(f"block {block} cut short")
            p += size
            if flg & 0x10:
                if len(checks) < MAX_CHECKS:
                    checks.append(
                        _compare(
                            f"{prefix}block {block} checksum (XXH32)",
                            _u32le(data, p)[0],
                            xxhash.xxh32_intdigest(raw),
                        )
                    )
                p += 4
            if not capped and not broken:
                try:
                    if word >> 31:
                        out = raw
                    elif flg & 0x20:  # independent blocks
                        # at most one block's maximum (<= 4 MiB), whatever the data claims
                        out = lz4.block.decompress(raw, uncompressed_size=max_block)
                    else:  # linked blocks: the previous 64 KiB are the dictionary
                        out = lz4.block.decompress(raw, uncompressed_size=max_block, dict=window)
                        window = (window + out)[-(64 << 10) :]
                except Exception as err:  # LZ4BlockError on a corrupt block: its checksum still shows
                    broken = f"block {block} does not decode: {reason(err)}"
                else:
                    content.update(out)
                    left -= len(out)
                    capped = left < 0
            block += 1
        if flg & 0x04:
            what = f"{prefix}content checksum (XXH32)"
            if capped or broken:
                checks.append(Check(what, NOT_CHECKED, _hex(_u32le(data, p)[0]),
                                    detail=broken or "output cap reached"))
            else:
                checks.append(_compare(what, _u32le(data, p)[0], content.intdigest()))
            p += 4
        elif not flg & 0x10:
            checks.append(Check(f"{prefix}content checksum", NOT_CHECKED, detail="not set by the producer"))
        pos = skip_skippable(data, p)
        frame += 1
    return checks


def _lz4_java(data: bytes, decoded: Decoded | None, cap: int, error: str | None) -> list[Check]:
    import lz4.block
    import xxhash

    checks: list[Check] = []
    pos, block, left = 0, 0, cap
    while data.startswith(b"LZ4Block", pos) and pos + 21 <= len(data):
        token, clen, dlen, check = struct.unpack_from("<Biii", data, pos + 8)
        pos += 21
        if dlen == 0:
            break  # the end block
        what = f"block {block} checksum (XXH32 seed 0x9747b28c, low 28 bits)"
        stored = _hex(check & 0x0FFFFFFF)
        body = data[pos : pos + max(clen, 0)]
        pos += max(clen, 0)
        # The header's lengths are checked before lz4 allocates the decompressed length.
        if clen < 0 or dlen < 0 or len(body) < clen or dlen > 1 << (10 + (token & 0x0F)) or (
            token & 0xF0 == 0x20 and dlen > clen * 255 + 16
        ):
            checks.append(Check(what, NOT_CHECKED, stored, detail="corrupt block header"))
            break
        if left < dlen:
            checks.append(Check(what, NOT_CHECKED, stored, detail="output cap reached"))
            break
        try:
            out = body if token & 0xF0 == 0x10 else lz4.block.decompress(body, uncompressed_size=dlen)
        except Exception as err:
            checks.append(Check(what, NOT_CHECKED, stored, detail=f"block does not decode: {reason(err)}"))
            break
        left -= len(out)
        if len(checks) < MAX_CHECKS:
            checks.append(
                _compare(what, check & 0x0FFFFFFF, xxhash.xxh32_intdigest(out, seed=0x9747B28C) & 0x0FFFFFFF)
            )
        block += 1
    return checks


def _snappy_framed(data: bytes, decoded: Decoded | None, cap: int, error: str | None) -> list[Check]:
    from cqlsh_ext.codecs import snappy

    checks: list[Check] = []
    pos, index, left = 0, 0, cap
    n = len(data)
    while pos + 4 <= n:
        typ = data[pos]
        ln = data[pos + 1] | data[pos + 2] << 8 | data[pos + 3] << 16
        if typ in (0x00, 0x01) and ln >= 4:
            what = f"chunk {index} masked CRC-32C"
            stored = _u32le(data, pos + 4)[0]
            body = data[pos + 8 : pos + 4 + ln]
            if typ == 0x00:
                # snappy.raw_capped checks the declared length against what the chunk can hold
                # and decodes at most the cap: a chunk claiming 4 GiB allocates nothing.
                try:
                    size = snappy.declared_length(body)
                    if size > snappy.CHUNK_MAX:
                        raise DecodeError(f"declares {size} bytes, more than a chunk can hold")
                    out, cut, _size = snappy.raw_capped(body, max(left, 0) + 1)
                except DecodeError as err:
                    checks.append(Check(what, NOT_CHECKED, _hex(stored), detail=f"does not decode: {err}"))
                    break
            else:
                out = body
            left -= len(out)
            if left < 0:
                checks.append(Check(what, NOT_CHECKED, _hex(stored), detail="output cap reached"))
                break
            if len(checks) < MAX_CHECKS:
                checks.append(_compare(what, stored, snappy_mask(crc32c(out))))
        pos += 4 + ln
        index += 1
    return checks


def _by_decoder(name: str) -> Callable[..., list[Check]]:
    def check(data: bytes, decoded: Decoded | None, cap: int, error: str | None) -> list[Check]:
        if decoded is not None and not decoded.truncated:
            return [Check(name, BY_DECODER)]
        if error and "checksum" in error:
            return [Check(name, MISMATCH, detail=error)]
        return [Check(name, NOT_CHECKED, detail="output cap reached" if decoded is not None else error)]

    return check


def _xz(data: bytes, decoded: Decoded | None, cap: int, error: str | None) -> list[Check]:
    kind = {0: None, 1: "CRC-32", 4: "CRC-64", 10: "SHA-256"}.get(data[7] & 0x0F, "unknown check")
    if kind is None:
        return [Check("check", NOT_CHECKED, detail="the stream stores no check (check type None)")]
    return _by_decoder(f"{kind} of each block (liblzma)")(data, decoded, cap, error)


_HANDLERS: dict[tuple[str, str], Callable[..., list[Check]]] = {
    ("gzip", "gzip"): _gzip,
    ("zlib", "zlib"): _zlib,
    ("zstd", "frame"): _zstd,
    ("lz4", "frame"): _lz4_frame,
    ("lz4", "LZ4Block"): _lz4_java,
    ("snappy", "framed"): _snappy_framed,
    ("bzip2", "bzip2"): _by_decoder("block and stream CRC-32 (libbz2)"),
    ("xz", "xz"): _xz,
}
