"""cqlsh-ext's decoders in people's own Spark jobs: a blob column of a DataFrame into its decoded
text, its label and its sizes, by a pandas (Arrow) UDF: values cross between the JVM and Python
a batch at a time, not row by row.

    from cqlsh_ext.spark.udf import decoded
    frame = spark.read.format("org.apache.spark.sql.cassandra").options(keyspace="ks", table="t").load()
    frame.select("id", decoded("data").alias("d")).select("id", "d.*")
    # id | text | label | stored_bytes | decompressed_bytes

`text` is what the shell shows for the value (the stored or decompressed text, a record format's
tree rendered as JSON), null for binary or undecodable values; `label` is COMPRESSION STATS'
(the chain of containers, or 'not compressed', 'failed'); `decompressed_bytes` counts the
payload under the compression layers (the stored size when nothing was decompressed). Each value
is decoded within the same per-value budget as in the shell (`cap`). docs/spark.md shows how to
ship cqlsh_ext to a cluster's executors.
"""

from __future__ import annotations

import warnings
from typing import Any

from cqlsh_ext.codecs.base import DEFAULT_CAP

#: The struct `decoded` returns, as Spark DDL.
SCHEMA = "text string, label string, stored_bytes long, decompressed_bytes long"
FIELDS = ("text", "label", "stored_bytes", "decompressed_bytes")


def describe(value: bytes, mode: str = "auto", cap: int = DEFAULT_CAP,
             engine: Any = None) -> tuple[str | None, str, int, int]:
    """(text, label, stored bytes, decompressed bytes) of one stored value, as the shell sees it:
    decoded once, by the value engine (a batch's own, when given)."""
    from cqlsh_ext.insight.stats import chain_label
    from cqlsh_ext.insight.view_measures import measured
    from cqlsh_ext.payload.engine import ValueEngine
    from cqlsh_ext.payload.view import RECORD, TEXT

    view = (engine or ValueEngine(mode, cap)).view(value)
    status, chain, size, _exact, _reason = measured(view)
    text: str | None = None
    if view.kind == TEXT:
        text = view.text
    elif view.kind == RECORD:
        from cqlsh_ext.payload.formats.tree import render

        text = render(view.record)
    return text, chain_label(status, chain), len(value), size


def describe_batch(values: Any, mode: str = "auto", cap: int = DEFAULT_CAP) -> Any:
    """A pandas Series of blobs (bytes, bytearray or None) -> a DataFrame with FIELDS."""
    import pandas

    from cqlsh_ext.payload.engine import ValueEngine

    engine = ValueEngine(mode, cap)  # one per batch: a column's values share their chain
    rows = [(None, None, None, None) if v is None else describe(bytes(v), engine=engine) for v in values]
    frame = pandas.DataFrame(rows, columns=list(FIELDS))
    return frame.astype({"stored_bytes": "Int64", "decompressed_bytes": "Int64"})


def decoded(column: Any, mode: str = "auto", cap: int = DEFAULT_CAP) -> Any:
    """A Spark Column: the struct SCHEMA of each value of `column` (a blob column or its name)."""
    from functools import partial

    from pyspark.sql.functions import PandasUDFType, pandas_udf

    from cqlsh_ext.insight.view_measures import effective_mode

    with warnings.catch_warnings():
        # Type hints cannot carry the struct here (pandas is imported only where the UDF runs).
        warnings.simplefilter("ignore", UserWarning)
        udf = pandas_udf(partial(describe_batch, mode=effective_mode(mode), cap=cap), SCHEMA,
                         PandasUDFType.SCALAR)
    return udf(column)
