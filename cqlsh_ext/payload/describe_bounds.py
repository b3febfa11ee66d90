"""The bounds DESCRIBE PAYLOAD's description of a page keeps to (describe/structure.py's and
sketch.py's), and the answer's shape, below both roads that describe a page: payload.described,
and the native core's room (payload.native) that hands the bounds to the core and answers in
that shape. Declared here so neither names the other's types (tests/test_import_circles.py)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, NamedTuple

if TYPE_CHECKING:
    from cqlsh_ext.payload.view import BlobView

__all__ = ["DescribeBounds", "DescribedValues"]


class DescribeBounds(NamedTuple):
    """The bounds of describe/structure.py and sketch.py a page's description keeps to."""

    max_paths: int
    max_visits: int
    max_depth: int
    exact: int
    long_text: int
    long_key: int
    p: int


class DescribedValues(NamedTuple):
    """A page's description (payload.described): `encodings` ((kind, label, values): payload.view's
    kinds) and `structure` (None when no value was read in one call) of the values read in one
    call; `views` of the others; `nulls` of a page's column (0 for values)."""

    encodings: list[tuple[str, str, int]]
    structure: Any
    views: list[BlobView]
    nulls: int = 0
