"""The bounds DESCRIBE PAYLOAD's description of a page keeps to (describe/structure.py's and
sketch.py's), below both roads that describe a page: payload.described, and the native core's
room (payload.native) that hands them to the core. Declared here so neither names the other's
types (tests/test_import_circles.py)."""

from __future__ import annotations

from typing import NamedTuple

__all__ = ["DescribeBounds"]


class DescribeBounds(NamedTuple):
    """The bounds of describe/structure.py and sketch.py a page's description keeps to."""

    max_paths: int
    max_visits: int
    max_depth: int
    exact: int
    long_text: int
    long_key: int
    p: int
