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
(native/core/src/num.rs, query.rs)."""

from __future__ import annotations

import math
from collections.abc import Callable
from decimal import Decimal
from fractions import Fraction
from typing import Any

#: A NaN that stands for every NaN in a group's key: a dict finds it by identity, so every NaN
#: value lands in the one group.
NAN = float("nan")
#: The orders (-1 below, 0 equal, 1 above the literal) each comparison accepts.
ACCEPTS: dict[str, frozenset[int]] = {"=": frozenset({0}), "!=": frozenset({-1, 1}), "<": frozenset({-1}),
                                      "<=": frozenset({-1, 0}), ">": frozenset({1}),
                                      ">=": frozenset({0, 1})}


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


def order(value: Any, literal: Any) -> int:
    """-1, 0 or 1: `value` against `literal`, two numbers (is_number), by the rule: a float on
    either side compares with the other's nearest double; integers and decimals exactly."""
    if isinstance(value, float) or isinstance(literal, float):
        return _cmp_float(value if isinstance(value, float) else nearest_float(value),
                          literal if isinstance(literal, float) else nearest_float(literal))
    if (isinstance(value, Decimal) and not value.is_finite()) or (
            isinstance(literal, Decimal) and not literal.is_finite()):
        return _cmp_float(float(value), float(literal))
    return int(value > literal) - int(value < literal)


def number_test(op: str, literal: int | Decimal) -> Callable[[Any], bool]:
    """Whether a value meets `op literal` (op one of = != < <= > >=), the literal converted to its
    nearest double once: False for a value that is no number (a missing one, a string, a bool)."""
    accepts = ACCEPTS[op]
    near = nearest_float(literal)

    def test(value: Any) -> bool:
        kind = type(value)
        if kind is float:
            if value != value:
                return 1 in accepts
            return ((value > near) - (value < near)) in accepts
        if kind is int or kind is Decimal:
            if kind is Decimal and not value.is_finite():
                return _cmp_float(float(value), near) in accepts
            return ((value > literal) - (value < literal)) in accepts
        if is_number(value):  # a subclass of int or float
            return order(value, literal) in accepts
        return False

    return test


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
