"""What DESCRIBE PAYLOAD keeps of a path's values: each distinct value's count while there are
few, then a HyperLogLog of their hashes. Both merge exactly, in any order: the parts the shell's
worker processes and Spark's tasks fill give, merged, the figures one reader filling one part
gives (a Hypothesis property in tests/describe/test_sketch.py holds this).

- While a path has at most EXACT distinct values, `Values.counts` holds each one's count (its
  top values; the distinct count is exact). A string longer than LONG_TEXT is kept by its hash
  and its first LONG_TEXT characters, so a few hostile values cannot hold megabytes here.
- Past EXACT, the counts go and a HyperLogLog of 2**P registers counts the distinct values
  (about 1.6 % standard error): each value's 64-bit hash is blake2b of a spelling that tells its
  type (the string "1" is not the number 1). A register is the maximum over the hashes that fall
  in it, so the registers of any split of the values, merged, are the registers of all of them:
  the estimate does not depend on how the table was read. Python's hash() would not do: it is
  salted per process, and Spark's executors are other processes.

Standard library only.
"""

from __future__ import annotations

import datetime
import decimal
import math
import struct
from collections import Counter
from hashlib import blake2b
from typing import Any

#: Distinct values counted one by one up to this many; then the HyperLogLog.
EXACT = 64
#: The HyperLogLog's registers: 2**P (P = 12: 4 KiB a path, about 1.6 % standard error).
P = 12
REGISTERS = 1 << P
_REST = 64 - P
_REST_MASK = (1 << _REST) - 1
_ALPHA = 0.7213 / (1 + 1.079 / REGISTERS)
_STR = {str}
#: Values a HyperLogLog remembers as already hashed, at the most (then it forgets them all).
HASHED = 4096
#: A string longer than this is kept by its hash and its first LONG_TEXT characters.
LONG_TEXT = 100
#: The key of a long string: ("long", its first LONG_TEXT characters, its hash).
LONG = "long"
#: The key of every float NaN (shown as JSON spells it).
_NAN = ("float", None)
_DECIMAL = "Decimal"

_pack_double = struct.Struct("<d").pack


def spelling(value: Any) -> bytes | None:
    """The bytes a value is hashed as: a type letter, then the value (None: not a scalar)."""
    kind = type(value)
    if kind is str:
        return b"s" + value.encode("utf-8", "surrogatepass")
    if kind is bool:
        return b"b1" if value else b"b0"
    if kind is int:
        # Exact for any size (str() refuses past 4,300 digits).
        return b"i" + value.to_bytes(value.bit_length() // 8 + 1, "little", signed=True)
    if kind is float:
        # One spelling for every NaN (their bits vary) and for -0.0 and 0.0 (equal as numbers).
        return b"fnan" if value != value else b"f" + _pack_double(value + 0.0)
    if value is None:
        return b"n"
    if isinstance(value, (bytes, bytearray, memoryview)):
        return b"x" + bytes(value)
    if isinstance(value, decimal.Decimal):
        return b"d" + str(value).encode()
    if isinstance(value, (datetime.datetime, datetime.date, datetime.time)):
        return b"t" + value.isoformat().encode()
    return None


def hash64(spelt: bytes) -> int:
    return int.from_bytes(blake2b(spelt, digest_size=8).digest(), "little")


def key(value: Any) -> Any:
    """How Values.counts keys a value: a string as itself (a long one by its hash), any other
    scalar with its type (True, 1 and 1.0 are equal in Python, not here), None as itself."""
    kind = type(value)
    if kind is str:
        return value if len(value) <= LONG_TEXT else (LONG, value[:LONG_TEXT], hash64(spelling(value) or b""))
    if value is None:
        return None
    if kind is float:  # NaN is not equal to itself: one key for all; -0.0 is 0.0 (one spelling)
        return _NAN if value != value else ("float", value + 0.0)
    if isinstance(value, (bytes, bytearray, memoryview)):
        if len(value) > LONG_TEXT:
            return (LONG, "0x" + bytes(value[:LONG_TEXT // 2]).hex(), hash64(spelling(value) or b""))
        return ("bytes", bytes(value))
    if isinstance(value, decimal.Decimal):  # as its text: a signalling NaN cannot even be hashed
        return (_DECIMAL, str(value))
    return (kind.__name__, value)


def key_hash(k: Any) -> int:
    """The hash of the value a key stands for (what the HyperLogLog adds for it)."""
    if type(k) is str:
        return hash64(b"s" + k.encode("utf-8", "surrogatepass"))
    if type(k) is tuple and k[0] == LONG:
        return int(k[2])
    if k == _NAN:
        return hash64(b"fnan")
    if k[0] == _DECIMAL:
        return hash64(b"d" + k[1].encode())
    return hash64(spelling(k[1]) or b"")


def key_value(k: Any) -> Any:
    """The value a key stands for (a long one: its first characters and '…')."""
    if type(k) is str or k is None:
        return k
    if k[0] == LONG:
        return k[1] + "…"
    if k == _NAN:
        return math.nan
    return decimal.Decimal(k[1]) if k[0] == _DECIMAL else k[1]


def key_order(k: Any) -> bytes:
    """A key's place among ties: the same in every reading."""
    if type(k) is tuple and k[0] == LONG:
        return b"~" + k[1].encode("utf-8", "surrogatepass")
    return spelling(key_value(k)) or b""


class Values:
    """A path's values (see the module doc). `hashed` remembers a few values already in the
    registers, so that a value met again is not hashed again: it would change no register (it is
    left behind when the sketch is pickled)."""

    __slots__ = ("counts", "hashed", "registers")

    def __init__(self) -> None:
        self.counts: dict[Any, int] | None = {}
        self.registers: bytearray | None = None
        self.hashed: set[Any] = set()

    def __getstate__(self) -> tuple[Any, Any]:
        return self.counts, self.registers

    def __setstate__(self, state: tuple[Any, Any]) -> None:
        self.counts, self.registers = state
        self.hashed = set()

    @classmethod
    def from_partial(cls, partial: Any) -> Values | None:
        """A page's sketch as the value engine made it in one call (payload.described): None, or
        its `counts` ((key, count), ..., the keys as key() makes them) or its `registers`."""
        if partial is None:
            return None
        made = cls()
        if partial.counts is not None:
            made.counts = dict(partial.counts)
        else:
            made.counts, made.registers = None, bytearray(partial.registers)
        return made

    def add_many(self, values: list[Any]) -> None:
        """add() of each value (a page's values of a path at once)."""
        counts = self.counts
        if counts is not None:
            if set(map(type, values)) == _STR and max(map(len, values)) <= LONG_TEXT:
                found = Counter(values)  # strings: their own keys, counted by the builtin
            else:
                found = Counter(map(key, values))
            for k, n in found.items():
                counts[k] = counts.get(k, 0) + n
            if len(counts) > EXACT:
                self._to_registers()
            return
        registers, hashed = self.registers, self.hashed
        assert registers is not None
        for value in values:
            if value is None:
                continue  # null is no distinct value (the types count it)
            # A string stands for itself; anything else with its type (True == 1 == 1.0 in Python).
            seen: Any = value if type(value) is str else (type(value), value)
            try:
                if seen in hashed:
                    continue
            except TypeError:  # a value that does not hash (a writable memoryview): hashed each time
                seen = None
            _register(registers, hash64(spelling(value) or b""))
            if seen is not None:
                if len(hashed) >= HASHED:
                    hashed.clear()
                hashed.add(seen)

    def add(self, value: Any) -> None:
        counts = self.counts
        if counts is not None:
            k = key(value)
            n = counts.get(k)
            if n is not None:
                counts[k] = n + 1
            elif len(counts) < EXACT:
                counts[k] = 1
            else:
                self._to_registers()
                self.add(value)
            return
        registers = self.registers
        if value is not None and registers is not None:  # null is no distinct value (the types count it)
            _register(registers, hash64(spelling(value) or b""))

    def _to_registers(self) -> None:
        registers = bytearray(REGISTERS)
        for k in self.counts or ():
            if k is not None:
                _register(registers, key_hash(k))
        self.counts, self.registers = None, registers

    @property
    def exact(self) -> bool:
        return self.counts is not None

    def distinct(self) -> int:
        """Distinct values other than null: exact while `exact`, else the HyperLogLog's estimate."""
        if self.counts is not None:
            return len(self.counts) - (None in self.counts)
        registers = self.registers
        assert registers is not None
        zeros = registers.count(0)
        raw = _ALPHA * REGISTERS * REGISTERS / math.fsum(2.0 ** -r for r in registers)
        if raw <= 2.5 * REGISTERS and zeros:  # small range: linear counting is the better estimate
            raw = REGISTERS * math.log(REGISTERS / zeros)
        return max(EXACT, round(raw))  # more than EXACT were seen, null perhaps among them

    def most_common(self) -> list[tuple[Any, int]]:
        """(value, count), most common first, ties in the same order in every reading; [] once
        there are too many to count one by one."""
        if self.counts is None:
            return []
        ordered = sorted(self.counts.items(), key=lambda kv: (-kv[1], key_order(kv[0])))
        return [(key_value(k), n) for k, n in ordered]

    def merge(self, other: Values) -> None:
        mine, theirs = self.counts, other.counts
        if mine is not None and theirs is not None:
            for k, n in theirs.items():
                mine[k] = mine.get(k, 0) + n
            if len(mine) > EXACT:
                self._to_registers()
            return
        if mine is not None:
            self._to_registers()
        registers = self.registers
        assert registers is not None
        if theirs is not None:
            for k in theirs:
                if k is not None:
                    _register(registers, key_hash(k))
            return
        assert other.registers is not None
        self.registers = registers_max(registers, other.registers)


#: Every register's top bit, and the whole width (registers as one big-endian integer).
_HIGH = int.from_bytes(b"\x80" * REGISTERS, "big")


def registers_max(mine: bytearray | bytes, theirs: bytearray | bytes) -> bytearray:
    """Each register the larger of the two (the HyperLogLog's merge), without a Python loop: a
    register's rank is below 128 (at most 64 - P + 1), so the registers taken as one integer are
    compared lane by lane: (a | 0x80) - b keeps its top bit where a >= b and borrows from no other
    lane."""
    a, b = int.from_bytes(mine, "big"), int.from_bytes(theirs, "big")
    keep = ((((a | _HIGH) - b) & _HIGH) >> 7) * 0xFF  # 0xff in each lane where a >= b
    return bytearray(((a & keep) | (b & ~keep)).to_bytes(REGISTERS, "big"))


def _register(registers: bytearray, h: int) -> None:
    index = h >> _REST
    rank = _REST - (h & _REST_MASK).bit_length() + 1  # leading zeros of the remaining bits, plus one
    if rank > registers[index]:
        registers[index] = rank

