"""Conditions a source pushes into the statement it reads (the polars source, api.polars_source;
Spark's data source, spark.datasource): a comparison of an answer's path column with literals made a
payload condition, evaluated where the rows are read, so that fewer rows come back.

A pushed condition only narrows what is read: each source still applies its frame's own predicate
to the Arrow values it gets (polars its expression, Spark's source the filters it took). So a
condition is pushed only where it keeps every row the frame's comparison keeps on those values:
the path's kind one plain kind (strings, integers, decimals, booleans; floats below 2**53 in
magnitude), the literal one the kind compares with as the frame does, and for strings no literal
that a value's Arrow spelling could meet where its stored text does not (a lone surrogate is
U+FFFD in Arrow: no U+FFFD in an `=` or `IN`, nothing from U+D800 up in an order comparison).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from cqlsh_ext.payload.arrow_types import Kind

__all__ = ["NEVER", "Condition", "path_condition"]

#: Below this magnitude a float literal compares with a path's numbers as a frame compares them
#: (the number rule compares an integer with the literal's decimal exactly; under 2**53 every
#: integer and every double agree on which side of the literal they are).
EXACT_FLOATS = 2.0 ** 53
#: Where Arrow's spelling of a text with a lone surrogate (U+FFFD in its place) may compare
#: otherwise than the text: from the surrogates up.
_SURROGATES = "\ud800"
_REPLACEMENT = "\ufffd"


@dataclass(frozen=True)
class Condition:
    """A condition pushed into the statement: its text with one marker per value, the values, and
    for a server condition its CQL column."""

    text: str
    values: tuple[object, ...]
    column: str | None = None


#: A conjunct no row can meet (`a == "é"` on an ascii column): the whole predicate is false.
NEVER = Condition("", ())


def _strings_compare_alike(op: str, values: tuple[object, ...]) -> bool:
    """String literals that compare with a text as with its Arrow spelling (see the module doc)."""
    texts = [v for v in values if isinstance(v, str)]
    if op in ("=", "!=", "IN"):
        return not any(_REPLACEMENT in text for text in texts)
    return all(ch < _SURROGATES for text in texts for ch in text)


def path_condition(kind: Kind, path: str | None, op: str, values: tuple[object, ...]) -> Condition | None:
    """A payload condition on a path of `kind` (`op`: =, !=, <, <=, >, >=, IN; `values`: the
    literals, IN's list), compared as a frame compares: a string with a string, a number with a
    number (a float finite and below 2**53), a boolean with = or !=; None where it stays the
    frame's."""
    from decimal import Decimal

    from cqlsh_ext.payload.arrow_types import Bool, Dec, Float, Int, Str
    from cqlsh_ext.query.grammar import literal_of

    if path is None:
        return None
    if isinstance(kind, Str):
        fits = all(isinstance(v, str) for v in values) and _strings_compare_alike(op, values)
    elif isinstance(kind, Bool):
        fits = op in ("=", "!=", "IN") and all(isinstance(v, bool) for v in values)
    elif isinstance(kind, (Int, Dec)):
        fits = all(isinstance(v, (int, Decimal)) and not isinstance(v, bool) for v in values)
    elif isinstance(kind, Float):
        fits = all(isinstance(v, (int, float)) and not isinstance(v, bool) and abs(v) < EXACT_FLOATS
                   for v in values)
    else:
        return None
    if not fits:
        return None
    try:
        typed = tuple(literal_of(v, op) for v in values)
    except Exception:  # a value no payload condition takes: the frame's own
        return None
    markers = "(" + ", ".join("?" for _ in values) + ")" if op == "IN" else "?"
    return Condition(f"{path} {op} {markers}", typed)
