"""Jackson Smile (jackson-dataformat-smile: Elasticsearch-era Java services), detected by its
`:)\\n` header. No maintained Python decoder exists, so this one follows the Smile format
specification: tokens for values and for object keys, back-references to shared key names and
(when the header enables them) to shared short string values, variable-length integers, 7-bit
encoded floats. Lengths are checked against the bytes that exist before anything is read; nesting
and items are counted against the value's budget (payload.budget).
"""

from __future__ import annotations

import struct
from typing import Any

from cqlsh_ext.payload import budget
from cqlsh_ext.payload.formats import PayloadFormat
from cqlsh_ext.payload.formats.tree import OverBudget, PayloadError, Tagged, decimal_text

#: Read without importing this module (common.declarations): its place in detection and
#: dispatch (lower first; auto-detection tries it only when FORMAT.auto), its place in name lists
#: and help, and what an argument after a colon names (payload.spec).
DECLARES = {"detection": 20, "listed": 60}

HEADER = b":)\n"
_END_STRING = 0xFC
_SHARED_MAX = 1024


class _SmileReader:
    def __init__(self, data: bytes, shared_names: bool, shared_values: bool) -> None:
        self.data = data
        self.pos = 0
        self.shared_names = shared_names
        self.shared_values = shared_values
        self.names: list[str] = []
        self.values: list[str] = []
        self.items = 0
        self.budget = budget.current()

    def byte(self) -> int:
        if self.pos >= len(self.data):
            raise PayloadError("smile: cut short")
        b = self.data[self.pos]
        self.pos += 1
        return b

    def take(self, n: int) -> bytes:
        if n < 0 or self.pos + n > len(self.data):  # checked before anything is read
            raise PayloadError("smile: a length beyond the value")
        out = self.data[self.pos:self.pos + n]
        self.pos += n
        return out

    def vint(self) -> int:
        """Smile's variable-length unsigned integer: 7 bits per byte, the last byte (bit 7 set)
        holds 6."""
        value = 0
        for _ in range(11):
            b = self.byte()
            if b & 0x80:
                return (value << 6) | (b & 0x3F)
            value = (value << 7) | b
        raise PayloadError("smile: overlong number")

    def signed(self) -> int:
        raw = self.vint()
        return (raw >> 1) ^ -(raw & 1)

    def seven_bit(self, count: int, bits: int) -> int:
        value = 0
        for _ in range(count):
            value = (value << 7) | (self.byte() & 0x7F)
        return value & ((1 << bits) - 1)

    def until_end_marker(self) -> bytes:
        end = self.data.find(bytes([_END_STRING]), self.pos)
        if end < 0:
            raise PayloadError("smile: long string without its end marker")
        return self.take(end - self.pos + 1)[:-1]

    def remember(self, table: list[str], text: str) -> None:
        if len(table) >= _SHARED_MAX:
            table.clear()  # as the encoder does when its table fills
        table.append(text)

    def text(self, raw: bytes) -> str:
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError:
            raise PayloadError("smile: invalid UTF-8 in a string") from None

    def shared(self, table: list[str], index: int, what: str) -> str:
        if index >= len(table):
            raise PayloadError(f"smile: reference to shared {what} {index} that was never sent")
        return table[index]

    # ------------------------------------------------------------------ values

    def value(self, depth: int) -> Any:
        if depth > self.budget.depth:
            raise OverBudget(f"smile: {self.budget.depth_reason}")
        # A shared name or string reference is one item here; the renderer charges what it expands to.
        self.items += 1
        if self.items > self.budget.nodes:
            raise OverBudget(f"smile: {self.budget.nodes_reason}")
        b = self.byte()
        if 0x01 <= b <= 0x1F:  # short shared value reference: index 0-30 as 0x01-0x1F
            return self.shared(self.values, b - 1, "string")
        if b == 0x20:
            return ""
        if b == 0x21:
            return None
        if b in (0x22, 0x23):
            return b == 0x23
        if b in (0x24, 0x25):
            return self.signed()
        if b == 0x26:  # BigInteger: its two's-complement bytes, 7-bit encoded
            return int.from_bytes(self.binary7(), "big", signed=True)
        if b == 0x28:
            return struct.unpack(">f", self.seven_bit(5, 32).to_bytes(4, "big"))[0]
        if b == 0x29:
            return struct.unpack(">d", self.seven_bit(10, 64).to_bytes(8, "big"))[0]
        if b == 0x2A:  # BigDecimal: scale, then the unscaled value's bytes
            scale = self.signed()
            unscaled = int.from_bytes(self.binary7(), "big", signed=True)
            return Tagged("BigDecimal", decimal_text(unscaled, -scale))
        if 0x40 <= b <= 0xBF:
            if b < 0x60:
                length = (b & 0x1F) + 1
            elif b < 0x80:
                length = (b & 0x1F) + 33
            elif b < 0xA0:
                length = (b & 0x1F) + 2
            else:
                length = (b & 0x1F) + 34
            text = self.text(self.take(length))
            if self.shared_values and length <= 64:
                self.remember(self.values, text)
            return text
        if 0xC0 <= b <= 0xDF:
            raw = b & 0x1F
            return (raw >> 1) ^ -(raw & 1)
        if b in (0xE0, 0xE4):
            return self.text(self.until_end_marker())
        if b == 0xE8:
            return self.binary7()
        if 0xEC <= b <= 0xEF:
            return self.shared(self.values, ((b & 0x03) << 8) | self.byte(), "string")
        if b == 0xF8:
            items: list[Any] = []
            while self.peek() != 0xF9:
                items.append(self.value(depth + 1))
            self.pos += 1
            return items
        if b == 0xFA:
            return self.object(depth + 1)
        if b == 0xFD:
            return self.take(self.vint())
        raise PayloadError(f"smile: token 0x{b:02x} not expected here")

    def peek(self) -> int:
        if self.pos >= len(self.data):
            raise PayloadError("smile: cut short")
        return self.data[self.pos]

    def binary7(self) -> bytes:
        """7-bit encoded bytes: raw length, then 7 raw bytes per 8, the rest right-aligned."""
        length = self.vint()
        full, rest = divmod(length, 7)
        if self.pos + full * 8 + (rest + 1 if rest else 0) > len(self.data):
            raise PayloadError("smile: a length beyond the value")
        out = bytearray()
        for _ in range(full):
            out += self.seven_bit(8, 56).to_bytes(7, "big")
        if rest:
            value = self.seven_bit(rest, 7 * rest)
            last = self.byte() & 0x7F
            value = (value << (8 * rest - 7 * rest)) | (last & ((1 << (8 * rest - 7 * rest)) - 1))
            out += value.to_bytes(rest, "big")
        return bytes(out)

    def object(self, depth: int) -> dict[str, Any]:
        obj: dict[str, Any] = {}
        while True:
            b = self.byte()
            if b == 0xFB:
                return obj
            if b == 0x20:
                key = ""
            elif 0x30 <= b <= 0x33:
                key = self.shared(self.names, ((b & 0x03) << 8) | self.byte(), "name")
            elif b == 0x34:
                key = self.text(self.until_end_marker())
            elif 0x40 <= b <= 0x7F:
                key = self.shared(self.names, b & 0x3F, "name")
            elif 0x80 <= b <= 0xF7:
                length = (b & 0x3F) + (1 if b < 0xC0 else 2)
                key = self.text(self.take(length))
                if self.shared_names:
                    self.remember(self.names, key)
            else:
                raise PayloadError(f"smile: key token 0x{b:02x} not expected")
            obj[key] = self.value(depth)


def decode(data: bytes) -> Any:
    if not data.startswith(HEADER) or len(data) < 5:
        raise PayloadError("smile: no :)\\n header")
    flags = data[3]
    if flags >> 4 != 0:
        raise PayloadError(f"smile: format version {flags >> 4} not read")
    reader = _SmileReader(data, shared_names=bool(flags & 0x01), shared_values=bool(flags & 0x02))
    reader.pos = 4
    value = reader.value(0)
    if reader.pos < len(data) and data[reader.pos:] != b"\xff":  # the optional end-of-content marker
        raise PayloadError("smile: bytes after the value")
    return value


FORMAT = PayloadFormat("smile", True, lambda data: data.startswith(HEADER), decode, leads=HEADER[:1],
                       unwritable="no Smile writer library here (Jackson writes it)",
                       confidence="confident",
                       confidence_why="the :)\\n header and a whole document")
