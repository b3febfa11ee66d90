"""DESCRIBE PAYLOAD's page of one place's values, answered by the value engine whichever engine
reads it (describe/description.py merges the answer into the place's description).

    answer = describe_page(engine, values, bounds)          # a page of values
    answer = describe_page(engine, page, bounds, column=2)  # a server's page or an Arrow batch

The answer (DescribedValues): the values read in one call (on the native core) as their
encodings' counts and their trees' walk already made (`structure`, a partial that
describe.structure.Structure.from_partial merges, walked and sketched by describe's rules within
`bounds`), and the engine's view of every other value (`views`, in order: on the Python engine
all of them, on the core those it hands back), which the caller reads as it reads any view; the
nulls of a page's column. The two roads describe a place alike (tests/native compares them).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import cast

from cqlsh_ext.payload import native
from cqlsh_ext.payload.arrow_rows import ArrowRows
from cqlsh_ext.payload.describe_bounds import DescribeBounds, DescribedValues
from cqlsh_ext.payload.engine import ValueEngine
from cqlsh_ext.payload.measures import RowsSection
from cqlsh_ext.payload.page_rows import PageRows

__all__ = ["DescribedValues", "describe_page"]


def describe_page(engine: ValueEngine, values: Sequence[bytes] | RowsSection | ArrowRows,
                  bounds: DescribeBounds, column: int | None = None) -> DescribedValues:
    """A page of one place's values described (the module doc): `values` the values, or the
    server's page (a RowsSection) or an Arrow batch (an ArrowRows: Spark's task) and `column`,
    the blob column's index in it. Never raises for a value."""
    if engine.on_core():
        try:
            return native.describe_page(engine, values, bounds, column)
        except Exception:  # the core failed the call (it should not): the views describe the page
            pass
    if not isinstance(values, PageRows):  # (a class's check: the protocol's costs far more)
        if column is not None:
            raise ValueError("describe_page: a column is named of a server's page or an Arrow batch")
        return DescribedValues([], None, engine.views(cast(Sequence[bytes], values)))
    if column is None:
        raise ValueError("describe_page: a server's page or an Arrow batch without its column")
    cells = values.column(column)
    present = [bytes(cell) for cell in cells if cell is not None]
    return DescribedValues([], None, engine.views(present), len(cells) - len(present))
