"""LZ4 blocks: lz4-java's LZ4Block stream, raw blocks with a u32 LE / BE size prefix or none, and
Hadoop Lz4Codec block streams."""

from __future__ import annotations

import struct
from collections.abc import Callable
from functools import partial
from typing import ClassVar

from .._common import HADOOP_BUFFER, HadoopStream, hadoop_blocks, join, reason, too_big, u32be, u32le, wrap
from ..base import Compressor, Container, Decoded, DecodeError, Unwritable
from ..capabilities import Checksums, Compressors, Headers, TableCompressor, Writer
from ..checks import MAX_CHECKS, NOT_CHECKED, Check, compare, hex_
from . import _native
from ._native import _LZ4BLOCK_SEED, _RATIO, LZ4BLOCK_MAGIC, _capped_block, _sized_block

# ---------------------------------------------------------------------------------------------
# lz4-java LZ4BlockOutputStream: per block "LZ4Block" + token + i32 LE clen + i32 LE dlen
# + i32 LE XXH32 (seed 0x9747b28c, & 0x0fffffff); an empty block ends the stream.

_LZ4BLOCK_HDR = struct.Struct("<Biii")
#: LZ4BlockOutputStream's default block size.
_LZ4BLOCK_SIZE = 64 * 1024


class Lz4JavaBlock(Container, Headers, Checksums, Writer):
    """lz4-java LZ4BlockOutputStream."""

    codec = "lz4"
    container = "LZ4Block"
    reference = ("lz4-java LZ4BlockOutputStream's layout (64 KiB blocks, XXH32 checksums), "
                 "blocks by python-lz4")
    grade = "A"
    magic = LZ4BLOCK_MAGIC
    tried_by = {"lz4": 30}
    signature_priority = 40

    def write(self, data: bytes, level: int | None) -> bytes:
        import lz4.block

        xxh = _native._xxh()
        if xxh is None:
            raise Unwritable(f"{self.label}: its checksums need the xxhash package")
        size_code = 6  # the token's low bits: 64 KiB = 1 << (10 + 6), the stream's default block
        out = bytearray()
        for i in range(0, len(data), _LZ4BLOCK_SIZE):
            chunk = data[i:i + _LZ4BLOCK_SIZE]
            packed = bytes(lz4.block.compress(chunk, store_size=False))
            method, body = (0x20, packed) if len(packed) < len(chunk) else (0x10, chunk)  # raw when no gain
            check = xxh(chunk, seed=_LZ4BLOCK_SEED) & 0x0FFFFFFF
            header = _LZ4BLOCK_HDR.pack(method | size_code, len(body), len(chunk), check)
            out += LZ4BLOCK_MAGIC + header + body
        return bytes(out + LZ4BLOCK_MAGIC + _LZ4BLOCK_HDR.pack(0x10 | size_code, 0, 0, 0))  # the end mark

    def verify(self, data: bytes, decoded: Decoded | None, cap: int, error: str | None) -> list[Check]:
        """lz4-java's XXH32 (seed 0x9747b28c) of each block, low 28 bits."""
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
            stored = hex_(check & 0x0FFFFFFF)
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
                why = f"block does not decode: {reason(err)}"
                checks.append(Check(what, NOT_CHECKED, stored, detail=why))
                break
            left -= len(out)
            if len(checks) < MAX_CHECKS:
                found = xxhash.xxh32_intdigest(out, seed=0x9747B28C) & 0x0FFFFFFF
                checks.append(compare(what, check & 0x0FFFFFFF, found))
            block += 1
        return checks

    def decode(self, data: bytes, cap: int) -> Decoded:
        block = _native._block or _native._load()
        xxh = _native._xxh()
        n = len(data)
        pos = 0
        left = cap
        parts: list[bytes] = []
        declared = 0
        truncated = False
        index = 0
        trailing = 0
        while pos < n:
            if not data.startswith(LZ4BLOCK_MAGIC, pos):
                if index == 0:
                    raise DecodeError("bad magic")
                trailing = n - pos  # lz4-java stops at the end block and ignores what follows
                break
            if n - pos < 21:
                raise DecodeError(f"truncated header of block {index}")
            token, clen, dlen, check = _LZ4BLOCK_HDR.unpack_from(data, pos + 8)
            method = token & 0xF0
            if (
                method not in (0x10, 0x20)
                or dlen < 0
                or clen < 0
                or dlen > 1 << (10 + (token & 0x0F))
                or (dlen == 0) != (clen == 0)
                or (method == 0x10 and clen != dlen)
                or dlen > clen * _RATIO + 16  # more than the block can expand to
            ):
                raise DecodeError(f"corrupt header of block {index}")
            pos += 21
            if n - pos < clen:
                raise DecodeError(f"truncated block {index}")
            if dlen:
                if left == 0:
                    truncated = True
                    break
                buf = data[pos : pos + clen]
                if method == 0x10:
                    out = buf[:left]
                    cut = dlen > left
                elif dlen <= left:
                    try:
                        out = block(buf, uncompressed_size=dlen)
                    except Exception as e:
                        raise DecodeError(f"{wrap(e)} in block {index}") from None
                    if len(out) != dlen:
                        raise DecodeError(f"length mismatch in block {index}")
                    cut = False
                else:
                    out, cut = _capped_block(buf, left)
                if xxh is not None and not cut and (xxh(out, seed=_LZ4BLOCK_SEED) & 0x0FFFFFFF) != check:
                    raise DecodeError(f"checksum mismatch in block {index}")
                parts.append(out)
                left -= len(out)
                declared += dlen
                if cut:
                    truncated = True
                    break
            pos += clen
            index += 1
        hdrs: dict[str, object] = {"checksum": "verified" if xxh else "not verified"}
        if trailing:
            hdrs["trailing_bytes"] = trailing
        return Decoded(join(parts), truncated, declared, hdrs)

    def headers(self, data: bytes) -> dict[str, object]:
        blocks: list[dict[str, object]] = []
        pos = 0
        while data.startswith(LZ4BLOCK_MAGIC, pos) and pos + 21 <= len(data) and len(blocks) < 256:
            token, clen, dlen, check = _LZ4BLOCK_HDR.unpack_from(data, pos + 8)
            blocks.append(
                {
                    "offset": pos,
                    "method": {0x10: "raw", 0x20: "lz4"}.get(token & 0xF0, f"0x{token & 0xF0:02x}"),
                    "block_size": 1 << (10 + (token & 0x0F)),
                    "compressed_length": clen,
                    "decompressed_length": dlen,
                    "checksum": f"0x{check & 0xFFFFFFFF:08x}",
                }
            )
            pos += 21 + max(clen, 0)
        return {
            "format": self.label,
            "checksum": "XXH32 seed 0x9747b28c & 0x0fffffff, "
            + ("verified" if _native._xxh() else "not verified (xxhash not installed)"),
            "blocks": blocks,
        }


# ---------------------------------------------------------------------------------------------
# Raw blocks


class _Lz4Sized(Container, Headers):
    """A raw block behind a u32 size prefix; the subclasses say the byte order."""

    codec = "lz4"
    grade = "C"
    #: Byte order of the prefix, and its name for INSPECT.
    little_endian: ClassVar[bool]
    prefix: ClassVar[str]

    def declared(self, data: bytes) -> int:
        return (u32le if self.little_endian else u32be)(data, 0)[0]

    def whole(self, data: bytes, size: int) -> bytes:
        """The block decoded whole (size <= cap); raises DecodeError on any mismatch."""
        return _sized_block(memoryview(data)[4:], size, size)

    def matches(self, data: bytes) -> bool:
        if len(data) < 5:
            return False
        size = self.declared(data)
        payload = len(data) - 4
        return size * 2 + 16 >= payload and size <= payload * _RATIO + 16

    def decode(self, data: bytes, cap: int) -> Decoded:
        if len(data) < 5:
            raise DecodeError("too short")
        size = self.declared(data)
        if size > (len(data) - 4) * _RATIO + 16:
            raise DecodeError(too_big(size))
        if size <= cap:
            return Decoded(self.whole(data, size), False, size)
        out, truncated = _capped_block(memoryview(data)[4:], cap)
        return Decoded(out, truncated, size)

    def ruled_out(self, data: bytes) -> bool:
        # A block's first sequence must carry literals (token >= 0x10): nothing to copy yet. This
        # also rules out Hadoop streams (their 2nd length is 00 00 xx xx, which liblz4 would read
        # as a zero-literal sequence with offset 0).
        return not self.matches(data) or (data[4] < 0x10 and self.declared(data) > 0)

    def trial(self, data: bytes, cap: int) -> Decoded | None:
        if self.ruled_out(data):
            return None
        try:
            return self.decode(data, cap)
        except Exception:
            return None

    def headers(self, data: bytes) -> dict[str, object]:
        size = self.declared(data) if len(data) >= 4 else None
        return {"format": self.label, "declared_size": size, "size_prefix": self.prefix}


class Lz4SizedLE(_Lz4Sized, Compressors, Writer):
    """Raw block with a u32 LE size prefix (lz4.block.compress default, Cassandra LZ4Compressor)."""

    container = "block"
    reference = "python-lz4 lz4.block.compress (u32 LE size first); a level is its high-compression mode"
    level_range = (1, 12)

    little_endian = True
    prefix = "u32 LE"
    tried_by = {"lz4": 40}
    early_priority = 10
    trial_priority = 20
    trial_zero_priority = 40

    advise_priority = 20
    library = "lz4"

    def write(self, data: bytes, level: int | None) -> bytes:
        import lz4.block

        if level is None:
            return bytes(lz4.block.compress(data))
        return bytes(lz4.block.compress(data, mode="high_compression", compression=level))

    def compressors(self) -> list[Compressor]:
        import lz4.block

        hc9 = partial(lz4.block.compress, mode="high_compression", compression=9)
        # Named as ADVISE has always shown them: the library's default block, and its HC mode.
        return [
            Compressor(self.codec, self.codec, lz4.block.compress, lz4.block.decompress),
            Compressor(f"{self.codec}hc 9", self.codec, hc9, lz4.block.decompress),
        ]

    def early(self, data: bytes) -> bool:
        # A size prefix below 16 MiB ends in a zero byte. Tried before the other signature-less
        # raw blocks: about half of such values also pass their cheap checks and would pay a
        # failed trial.
        return len(data) > 4 and data[3] == 0

    def whole(self, data: bytes, size: int) -> bytes:
        block = _native._block or _native._load()
        try:
            return block(data)  # python-lz4 reads this prefix itself and checks the decoded length
        except Exception as e:
            raise wrap(e) from None


class Lz4SizedBE(_Lz4Sized, Writer):
    """Raw block with a u32 BE size prefix (Cassandra native protocol v4, python driver lz4)."""

    container = "block-be"
    reference = "u32 BE size, then python-lz4 lz4.block.compress without its size (Cassandra's protocol)"

    little_endian = False
    prefix = "u32 BE"
    tried_by = {"lz4": 60}
    trial_priority = 50
    trial_zero_priority = 10

    def write(self, data: bytes, level: int | None) -> bytes:
        import lz4.block

        return struct.pack(">I", len(data)) + bytes(lz4.block.compress(data, store_size=False))

class Lz4NoSize(Container, TableCompressor, Writer):
    """A bare block with no size: nothing to validate against, so only on -d lz4."""

    codec = "lz4"
    container = "block-nosize"
    reference = "python-lz4 lz4.block.compress(store_size=False)"
    grade = "D"
    tried_by = {"lz4": 70}
    cassandra_class = "LZ4Compressor"  # Cassandra stores the size itself, before the block

    def table_compressor(self, options: dict[str, str]) -> Callable[[bytes], bytes]:
        import lz4.block

        if options.get("lz4_compressor_type", "fast") == "high":
            level = int(options.get("lz4_high_compressor_level", 9))
            return lambda b: lz4.block.compress(b, mode="high_compression", compression=level,
                                                store_size=False)
        return lambda b: lz4.block.compress(b, store_size=False)

    def write(self, data: bytes, level: int | None) -> bytes:
        import lz4.block

        return bytes(lz4.block.compress(data, store_size=False))

    def matches(self, data: bytes) -> bool:
        return False

    def decode(self, data: bytes, cap: int) -> Decoded:
        if not data:
            raise DecodeError("empty value")
        block = _native._block or _native._load()
        try:
            return Decoded(block(data, uncompressed_size=min(cap, len(data) * _RATIO + 64)))
        except Exception:
            pass  # too big for the cap, or corrupt: the walk tells which
        out, truncated = _capped_block(data, cap)
        return Decoded(out, truncated)


def _hadoop_chunk(buf: bytes, expected: int, left: int) -> tuple[bytes, bool]:
    block = _native._block or _native._load()
    if expected <= left:
        try:
            return block(buf, uncompressed_size=expected), False
        except Exception as e:
            raise wrap(e) from None
    return _capped_block(buf, left)


class Lz4Hadoop(HadoopStream, Writer):
    """Hadoop Lz4Codec block stream (lz4 blocks)."""

    codec = "lz4"
    max_ratio = _RATIO
    chunk = staticmethod(_hadoop_chunk)
    tried_by = {"lz4": 50}
    reference = "Hadoop Lz4Codec's BlockCompressorStream (256 KiB buffer), blocks by python-lz4"
    trial_priority = 40
    trial_zero_priority = 30

    def write(self, data: bytes, level: int | None) -> bytes:
        import lz4.block

        # Lz4Codec's compression overhead: buffer / 255 + 16.
        return hadoop_blocks(data, HADOOP_BUFFER - (HADOOP_BUFFER // 255 + 16),
                             lambda b: bytes(lz4.block.compress(b, store_size=False)))

