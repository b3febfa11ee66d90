"""The first byte of a zstd frame's content, read from its first block without decoding it
(ZstdFrame.first_byte): COMPRESSION STATS sizes a frame from its header and only needs to know
whether something recognisable (another container, a serialization stream) may start its content.

A frame's content starts with its first block's first byte: a raw block's first byte, an RLE
block's byte, or a compressed block's first literal (at a frame's start no match can come first:
there is nothing before it to copy). A compressed block's literals are raw, one byte repeated, or
Huffman-coded; the first of those is read from the literals' Huffman table (its weights, written
directly or FSE-coded: RFC 8878, 4.1.1 and 4.2.1) and the first code of the first stream, as
libzstd's tables read it (symbols by weight, then by value; a code read from the stream's end).
Nothing past that is read, so a block corrupt further on is not seen here (its size is the
header's all the same). Pure Python: a few hundred operations a frame against a block's decode.
native/core/src/zstd_first.rs repeats it for the native core (tests/native/mirror.py)."""

from __future__ import annotations

from collections.abc import Callable

#: Huffman weights hold at most this many bits a code (HUF_TABLELOG_MAX).
_HUF_MAX_BITS = 12
#: The FSE table of the Huffman weights is at most this large (its accuracy log).
_WEIGHTS_MAX_LOG = 6
#: Weights a table holds at the most (the last one is implied).
_MAX_WEIGHTS = 255


class _Bad(Exception):
    """The headers are not what a frame libzstd reads would have."""


def first_literal(block: bytes) -> int | None:
    """The first literal of a compressed block (its bytes after the block header); None where its
    literals section does not give it (none, a treeless section, a table it cannot read)."""
    try:
        return _first_literal(block)
    except (_Bad, IndexError):
        return None


def _first_literal(block: bytes) -> int | None:
    lead = block[0]
    kind, form = lead & 3, (lead >> 2) & 3
    if kind in (0, 1):  # raw or one byte repeated: the first byte after the section's header
        if form in (0, 2):
            head, size = 1, lead >> 3
        elif form == 1:
            head, size = 2, (lead >> 4) + (block[1] << 4)
        else:
            head, size = 3, (lead >> 4) + (block[1] << 4) + (block[2] << 12)
        return block[head] if size else None
    if kind != 2:  # treeless: the previous block's table (none in a frame's first block)
        return None
    word = int.from_bytes(block[:4].ljust(4, b"\0"), "little")
    if form in (0, 1):
        head, size, packed = 3, (word >> 4) & 0x3FF, (word >> 14) & 0x3FF
    elif form == 2:
        head, size, packed = 4, (word >> 4) & 0x3FFF, word >> 18
    else:
        head, size, packed = 5, (word >> 4) & 0x3FFFF, (word >> 22) + (block[4] << 10)
    literals = block[head:head + packed]
    if not size or len(literals) != packed:
        return None
    weights, used = _weights(literals)
    bits, symbols = _table(weights)
    streams = literals[used:]
    if form != 0:  # four streams: a jump table of the first three's sizes, the first stream after it
        if len(streams) < 6:
            return None
        stream = streams[6:6 + (streams[0] | streams[1] << 8)]
    else:
        stream = streams
    if not stream or stream[-1] == 0:
        return None
    # the stream is read from its end, the highest bit of its last byte marking where: the first
    # code is the `bits` bits below that mark (zeros past the stream's start)
    tail = int.from_bytes(stream[-8:], "little")
    below = tail.bit_length() - 1
    index = ((tail << bits) >> below) & ((1 << bits) - 1)
    return symbols(index)


def _weights(literals: bytes) -> tuple[list[int], int]:
    """The Huffman weights of the literals' table (the last one not written: implied), and the
    bytes of the table's description."""
    lead = literals[0]
    if lead >= 128:  # written directly, four bits each
        count = lead - 127
        used = 1 + (count + 1) // 2
        if used > len(literals):
            raise _Bad("short direct weights")
        return [(literals[1 + i // 2] >> (0 if i % 2 else 4)) & 15 for i in range(count)], used
    if lead == 0 or 1 + lead > len(literals):
        raise _Bad("weights' size")
    return _fse_weights(literals[1:1 + lead]), 1 + lead


def _table(weights: list[int]) -> tuple[int, Callable[[int], int | None]]:
    """The table's bits and the symbol of a code (read as `bits` bits): HUF_readStats' checks,
    the last weight implied, the codes laid out by weight, then by symbol (HUF_readDTableX1)."""
    if any(w > _HUF_MAX_BITS for w in weights):
        raise _Bad("weight too large")
    total = sum((1 << w) >> 1 for w in weights)
    if total == 0:
        raise _Bad("no weight")
    bits = total.bit_length()
    if bits > _HUF_MAX_BITS:
        raise _Bad("table too large")
    rest = (1 << bits) - total
    last = rest.bit_length()
    if 1 << (last - 1) != rest:
        raise _Bad("weights do not complete the table")
    weights = [*weights, last]
    ones = weights.count(1)
    if ones < 2 or ones & 1:
        raise _Bad("weight 1's count")

    def symbol(index: int) -> int | None:
        start = 0
        for w in range(1, bits + 1):
            span = 1 << (w - 1)
            for s, sw in enumerate(weights):
                if sw == w:
                    if index < start + span:
                        return s
                    start += span
        return None

    return bits, symbol


def _fse_weights(data: bytes) -> list[int]:
    """FSE-coded Huffman weights (FSE_decompress_wksp with an accuracy log of at most 6): the
    table's normalized counts, then two interleaved states read from the end of the rest."""
    counts, log, used = _normalized_counts(data)
    if log > _WEIGHTS_MAX_LOG:
        raise _Bad("weights' table too large")
    table = _fse_table(counts, log)
    stream = data[used:]
    if not stream or stream[-1] == 0:
        raise _Bad("no end mark")
    reader = _BackBits(stream)
    states = [reader.read(log), reader.read(log)]
    out: list[int] = []
    turn = 0
    while True:
        if len(out) > _MAX_WEIGHTS - 2:
            raise _Bad("too many weights")
        symbol, bits, base = table[states[turn]]
        out.append(symbol)
        states[turn] = base + reader.read(bits)
        if reader.overflowed():
            out.append(table[states[1 - turn]][0])
            return out
        turn = 1 - turn


class _BackBits:
    """A bitstream read from its end (libzstd's BIT_DStream): the bits below the last byte's
    highest set bit, most significant first; zeros past its start, which overflow it."""

    def __init__(self, stream: bytes) -> None:
        self.value = int.from_bytes(stream, "little")
        self.left = self.value.bit_length() - 1  # bits below the mark not yet read

    def read(self, n: int) -> int:
        if n == 0:
            return 0
        self.left -= n
        if self.left >= 0:
            return (self.value >> self.left) & ((1 << n) - 1)
        return (self.value << -self.left) & ((1 << n) - 1)

    def overflowed(self) -> bool:
        return self.left < 0


def _normalized_counts(data: bytes) -> tuple[list[int], int, int]:
    """FSE_readNCount: the normalized counts (-1: a probability below one), the accuracy log,
    the header's bytes (bits read little-endian, zeros past the end, which is then an error)."""
    value = int.from_bytes(data, "little")
    pos = 0

    def bits(n: int) -> int:
        return (value >> pos) & ((1 << n) - 1)

    log = bits(4) + 5
    if log > 15:
        raise _Bad("accuracy log too large")
    pos = 4
    remaining, threshold, width = (1 << log) + 1, 1 << log, log + 1
    counts: list[int] = []
    previous_zero = False
    while True:
        if previous_zero:
            repeat = bits(2)
            pos += 2
            zeros = repeat
            while repeat == 3:
                repeat = bits(2)
                pos += 2
                zeros += repeat
            counts += [0] * zeros
            if len(counts) > _MAX_WEIGHTS:
                break
        most = 2 * threshold - 1 - remaining
        if bits(width) & (threshold - 1) < most:
            count = bits(width) & (threshold - 1)
            pos += width - 1
        else:
            count = bits(width) & (2 * threshold - 1)
            if count >= threshold:
                count -= most
            pos += width
        count -= 1
        remaining -= abs(count)
        counts.append(count)
        previous_zero = count == 0
        if remaining < threshold:
            if remaining <= 1:
                break
            width = remaining.bit_length()
            threshold = 1 << (width - 1)
        if len(counts) > _MAX_WEIGHTS:
            break
    if remaining != 1 or len(counts) > _MAX_WEIGHTS + 1:
        raise _Bad("normalized counts")
    used = (pos + 7) // 8
    if used > len(data):
        raise _Bad("normalized counts past their bytes")
    return counts, log, used


def _fse_table(counts: list[int], log: int) -> list[tuple[int, int, int]]:
    """FSE_buildDTable: per state (its symbol, the bits its next state reads, that state's base)."""
    size = 1 << log
    symbols = [0] * size
    high = size - 1
    following: list[int] = []
    for s, count in enumerate(counts):
        if count == -1:
            symbols[high] = s
            high -= 1
            following.append(1)
        else:
            following.append(count)
    step = (size >> 1) + (size >> 3) + 3
    position = 0
    for s, count in enumerate(counts):
        for _ in range(max(count, 0)):
            symbols[position] = s
            position = (position + step) & (size - 1)
            while position > high:
                position = (position + step) & (size - 1)
    if position != 0:
        raise _Bad("counts do not fill the table")
    table = []
    for u in range(size):
        s = symbols[u]
        state = following[s]
        following[s] += 1
        bits = log - (state.bit_length() - 1)
        table.append((s, bits, (state << bits) - size))
    return table
