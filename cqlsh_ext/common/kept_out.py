"""Libraries kept out of a process's imports while a block runs (`kept_out`): what a door that hands
back no DataFrame has no use for. pyarrow imports numpy when it is installed and pandas when it first
converts Python values to Arrow (its optional integrations); a Parquet file written by the shell or
by `cqlsh-ext mcp` needs neither, and pandas alone cost about half a second of CPU at an export's
start. An import of a library kept out raises ModuleNotFoundError, as where it is not installed,
which is what those optional imports expect. A library already imported stays as it is."""

from __future__ import annotations

import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from importlib.abc import MetaPathFinder
from typing import Any

__all__ = ["DATAFRAMES", "kept_out"]

#: What a door that answers no DataFrame keeps out: the DataFrame libraries and numpy.
DATAFRAMES = ("pandas", "numpy", "polars")


class _KeptOut(MetaPathFinder):
    """Refuses to find the named top-level modules (and their submodules)."""

    def __init__(self, names: frozenset[str]) -> None:
        self.names = names

    def find_spec(self, name: str, path: Sequence[str] | None = None, target: Any = None) -> None:
        if name.partition(".")[0] in self.names:
            raise ModuleNotFoundError(f"No module named {name!r} (kept out of this answer)", name=name)
        return None


@contextmanager
def kept_out(names: Sequence[str] = DATAFRAMES) -> Iterator[None]:
    """`names` (those not imported yet) cannot be imported while the block runs."""
    finder = _KeptOut(frozenset(name for name in names if name not in sys.modules))
    if not finder.names:
        yield
        return
    sys.meta_path.insert(0, finder)
    try:
        yield
    finally:
        sys.meta_path.remove(finder)
