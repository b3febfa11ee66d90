"""The number rule: how a payload condition, a sort and a group compare the numbers of a document
with each other and with the numbers a statement writes (docs/queries.md, "Numbers").

- A float read from a document (JSON's `737.26`, a CBOR or MessagePack double) is compared with the
  double nearest the number written in the statement, converted once: `737.26` in a statement finds
  the document that says `"total": 737.26`, as DuckDB and PostgreSQL compare a double column with a
  numeric literal. Past the largest double the literal is an infinity, as the float it would parse to.
- Integers and decimals (a document's integers, CBOR's decimal fractions, a statement's literals)
  compare exactly with each other, at any size.
- One total order for every number, PostgreSQL's (and polars'): -Infinity, the finite numbers,
  Infinity, then NaN; NaN equals NaN. So `> 1e300` finds Infinity and NaN, `!= 3.7` finds NaN, and
  NaN values form one group, sorted after every other number.

Plain functions of plain values, shared by the Python engine's conditions (query.evaluate), its
groups and sorts (query.groups) and the polars source; the native core repeats them
(native/core/src/num.rs, query.rs).

Bounded whatever the numbers: a literal is compiled once (`Exact`: its nearest double, its sign and
magnitude, its floor and ceiling made only when a value's magnitude is its own), so an integer of
any length is compared by its size first and then as an integer, never converted to a Decimal per
comparison; an IN list's literals are made sets once (`NumberSet`), so a value costs one lookup
however many literals there are. Integers: a document's past Python's int-string limit
(PYTHON_DIGITS) are read whole, up to INTEGER_DIGITS of them in one value (payload.json_text); a
statement's number literal has at most INTEGER_DIGITS digits (query.grammar says so in one line),
its exponent any (`= 1e999999999` finds what it would find of a number that size: an infinity among
the floats, nothing among the integers and decimals a value can hold)."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from decimal import Decimal
from fractions import Fraction
from typing import Any

from cqlsh_ext.common.long_int import INTEGER_DIGITS, allow_long_integers

#: A NaN that stands for every NaN in a group's key: a dict finds it by identity, so every NaN
#: value lands in the one group.
NAN = float("nan")
#: The orders (-1 below, 0 equal, 1 above the literal) each comparison accepts.
ACCEPTS: dict[str, frozenset[int]] = {"=": frozenset({0}), "!=": frozenset({-1, 1}), "<": frozenset({-1}),
                                      "<=": frozenset({-1, 0}), ">": frozenset({1}),
                                      ">=": frozenset({0, 1})}


def integer_of(digits: str, doing: str = "a payload condition compares") -> int:
    """An integer literal's value from its digits (and sign), past Python's int-string limit too;
    ValueError with too_long's line past INTEGER_DIGITS (`doing`: who takes numbers)."""
    count = len(digits.lstrip("+-"))
    if count > INTEGER_DIGITS:
        raise ValueError(_refusal(count, doing))
    allow_long_integers()
    return int(digits)


def exponent_refusal(literal: str, doing: str = "a payload condition compares") -> str:
    """The one line that refuses a number literal whose exponent no decimal holds."""
    from cqlsh_ext.common.text import visible

    return f"the number {visible(literal, 40)}: {doing} numbers whose exponent a decimal holds"


def _refusal(digits: int, doing: str) -> str:
    return f"a number of {digits:,} digits: {doing} numbers of at most {INTEGER_DIGITS:,} digits"


def too_long(number: int | Decimal) -> str | None:
    """The one line that refuses a number literal of more than INTEGER_DIGITS significant digits
    (an int's counted from its size, never converted to text); None for the others."""
    if isinstance(number, Decimal):
        digits = len(number.as_tuple().digits)
    else:
        fewest, most = _digit_bounds(number) if number else (1, 1)
        if most <= INTEGER_DIGITS:
            return None
        digits = next(k for k in range(fewest, most + 1) if abs(number) < 10 ** k)
    return None if digits <= INTEGER_DIGITS else _refusal(digits, "a payload condition compares")


def _digit_bounds(value: int) -> tuple[int, int]:
    """The decimal digits of a non-zero integer's magnitude: (at least, at most), from its bits
    (log10(2) is between 0.30102 and 0.30103)."""
    bits = abs(value).bit_length()
    return (bits - 1) * 30102 // 100_000 + 1, bits * 30103 // 100_000 + 1


def is_number(value: Any) -> bool:
    """A number of the rule: an int, a float (NaN and the infinities included) or a Decimal; never
    a bool."""
    return isinstance(value, (int, float, Decimal)) and not isinstance(value, bool)


def nearest_float(number: int | Decimal | float) -> float:
    """The double nearest `number` as written (IEEE 754's round to nearest, ties to even); past the
    largest double, the infinity of its sign, as the float the same text would parse to."""
    try:
        return float(number)
    except OverflowError:  # an int past the doubles (a Decimal converts to an infinity itself)
        return math.inf if number > 0 else -math.inf


def _cmp_float(a: float, b: float) -> int:
    """a against b in the total order: NaN above every number, equal to NaN."""
    if a != a:
        return 0 if b != b else 1
    if b != b:
        return -1
    return (a > b) - (a < b)


class Exact:
    """A number literal (an int, or a finite Decimal of any exponent) compiled once, to be compared
    with many values by the rule: a float with its nearest double; an integer by its size first
    (bits against the literal's exponent), then, when the sizes meet, as an integer against the
    literal's floor and ceiling, made once and no larger than that value; a decimal exactly."""

    __slots__ = ("literal", "near", "_sign", "_adjusted", "_bounds", "_decimal")

    def __init__(self, literal: int | Decimal) -> None:
        self.literal = literal
        self.near = nearest_float(literal)
        if isinstance(literal, Decimal):
            self._sign = 0 if not literal else (-1 if literal.is_signed() else 1)
            self._adjusted = literal.adjusted()
        self._bounds: tuple[int, int] | None = None
        self._decimal: Decimal | None = literal if isinstance(literal, Decimal) else None

    def order(self, value: Any) -> int:
        """-1, 0 or 1: `value` (a number: is_number) against the literal."""
        if isinstance(value, float):
            return _cmp_float(value, self.near)
        if isinstance(value, int):
            return self._of_int(value)
        if not value.is_finite():
            return _cmp_float(float(value), self.near)
        if self._decimal is None:
            self._decimal = Decimal(self.literal)  # an int literal, once (Decimal compares exactly)
        return int(value > self._decimal) - int(value < self._decimal)

    def _of_int(self, value: int) -> int:
        literal = self.literal
        if isinstance(literal, int):
            return int(value > literal) - int(value < literal)
        sign = 0 if not value else (-1 if value < 0 else 1)
        if sign != self._sign or not sign:
            return (sign > self._sign) - (sign < self._sign)
        # The same sign: |literal| is in [10**adjusted, 10**(adjusted + 1)).
        fewest, most = _digit_bounds(value)
        if most <= self._adjusted:
            return -sign  # |value| < 10**most <= |literal|
        if fewest >= self._adjusted + 2:
            return sign  # |value| >= 10**(fewest - 1) > |literal|
        floor, ceil = self._bounds or self._floor_ceil()
        return int(value > floor) if value >= ceil else -int(value < ceil)

    def _floor_ceil(self) -> tuple[int, int]:
        """The literal's floor and ceiling as ints, made without a context (its exponent is here
        within a value's digits, so no larger than that value)."""
        literal = self.literal
        assert isinstance(literal, Decimal)
        negative, digits, exponent = literal.as_tuple()
        assert isinstance(exponent, int)
        allow_long_integers()
        coefficient = int("".join(map(str, digits)) or "0")
        if exponent >= 0:
            floor = ceil = coefficient * 10 ** exponent
        else:
            whole, rest = divmod(coefficient, 10 ** -exponent)
            floor, ceil = whole, whole + (rest > 0)
        self._bounds = (-ceil, -floor) if negative else (floor, ceil)
        return self._bounds


def order(value: Any, literal: Any) -> int:
    """-1, 0 or 1: `value` against `literal`, two numbers (is_number), by the rule: a float on
    either side compares with the other's nearest double; integers and decimals exactly."""
    if isinstance(value, float) or isinstance(literal, float):
        return _cmp_float(value if isinstance(value, float) else nearest_float(value),
                          literal if isinstance(literal, float) else nearest_float(literal))
    if (isinstance(value, Decimal) and not value.is_finite()) or (
            isinstance(literal, Decimal) and not literal.is_finite()):
        return _cmp_float(float(value), float(literal))
    return Exact(literal).order(value)


def number_test(op: str, literal: int | Decimal) -> Callable[[Any], bool]:
    """Whether a value meets `op literal` (op one of = != < <= > >=), the literal compiled once
    (Exact): False for a value that is no number (a missing one, a string, a bool)."""
    accepts = ACCEPTS[op]
    exact = Exact(literal)
    near = exact.near

    def test(value: Any) -> bool:
        if type(value) is float:
            if value != value:
                return 1 in accepts
            return ((value > near) - (value < near)) in accepts
        if is_number(value):
            return exact.order(value) in accepts
        return False

    return test


class NumberSet:
    """An IN list's number literals, made sets once: whether a value equals one of them costs a
    lookup or two, whatever their count. A float is looked up among the literals' nearest doubles,
    an integer among the integral literals (an integral Decimal's integer made on first need, in
    the buckets of its size that a value's size reaches: `1e999999999` is never made), a decimal
    among the literals as Decimals (equal numbers hash alike, whatever their exponents)."""

    def __init__(self, literals: Iterable[int | Decimal]) -> None:
        self.literals = list(literals)
        self.nearest = frozenset(nearest_float(literal) for literal in self.literals)
        self.integers: set[int] = {literal for literal in self.literals if isinstance(literal, int)}
        #: Integral Decimal literals not made integers yet, by their adjusted exponent (digits - 1).
        self._waiting: dict[int, list[Decimal]] = {}
        for literal in self.literals:
            if isinstance(literal, Decimal) and literal and literal == literal.to_integral_value():
                self._waiting.setdefault(literal.adjusted(), []).append(literal)
            elif isinstance(literal, Decimal) and not literal:
                self.integers.add(0)
        self._decimals: frozenset[Decimal] | None = None

    def __contains__(self, value: Any) -> bool:
        if type(value) is float:
            return value in self.nearest
        if isinstance(value, int):
            if self._waiting and value:
                fewest, most = _digit_bounds(value)
                for adjusted in range(fewest - 1, most):
                    for literal in self._waiting.pop(adjusted, ()):
                        self.integers.add(Exact(literal)._floor_ceil()[0])
            return value in self.integers
        if not value.is_finite():
            return float(value) in self.nearest
        if self._decimals is None:
            self._decimals = frozenset(map(Decimal, self.literals))
        return value in self._decimals


def sort_rank(value: int | float | Decimal) -> tuple[int, Fraction | int]:
    """A number's place in the total order, as a key that sorts: (-Infinity 0, finite 1 with its
    exact value, Infinity 2, NaN 3)."""
    if isinstance(value, float) or (isinstance(value, Decimal) and not value.is_finite()):
        f = float(value)
        if f != f:
            return (3, 0)
        if f == math.inf:
            return (2, 0)
        if f == -math.inf:
            return (0, 0)
    return (1, Fraction(value))


def canonical(value: Any) -> Any:
    """`value`, or NAN for any NaN: the one key of the NaN group."""
    return NAN if isinstance(value, float) and value != value else value
