"""The Arrow side of Spark's data source (spark/datasource.py): the API's answer (db.query's Arrow
types, docs/api.md) in the types Spark's Python data sources take, the blob columns as their stored
bytes where cqlsh-ext spark's statements read them, and the pushed filters applied to each batch.

Spark takes Arrow batches whose schema is exactly the Spark schema's (to_arrow_schema, UTC): what
Spark has no type for is given its nearest: a uuid column is its text (as the Cassandra connector
gives it), a uuid inside a collection, tuple or UDT its 16 bytes (JSON text is a string already,
another producer's arrow.json its string); timestamps are Spark's microseconds; a time of day is
its nanoseconds since midnight, a bigint (as the connector gives it: Spark 4.3 refuses a frame
holding its own TIME type).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from cqlsh_ext.payload.arrow_types import Blob, Dec, Int, Kind, List, Map, Str, Struct
from cqlsh_ext.payload.columns import kind_holds


def plain_type(arrow: Any, top: bool = True) -> Any:
    """`arrow` with its extension types as Spark reads them: a uuid column as a string (`top`),
    a uuid inside a value as binary, a JSON text as a string; a time of day as its nanoseconds
    since midnight, as the connector gives it."""
    import pyarrow as pa

    if isinstance(arrow, pa.BaseExtensionType):
        if arrow.extension_name == "arrow.uuid":
            return pa.string() if top else pa.binary()
        return plain_type(arrow.storage_type, top)
    if pa.types.is_struct(arrow):
        return pa.struct([f.with_type(plain_type(f.type, False)) for f in arrow])
    if pa.types.is_map(arrow):
        return pa.map_(arrow.key_field.with_type(plain_type(arrow.key_type, False)),
                       arrow.item_field.with_type(plain_type(arrow.item_type, False)))
    if pa.types.is_list(arrow) or pa.types.is_fixed_size_list(arrow) or pa.types.is_large_list(arrow):
        return pa.list_(arrow.value_field.with_type(plain_type(arrow.value_type, False)))
    if pa.types.is_fixed_size_binary(arrow):
        return pa.binary()
    if pa.types.is_time(arrow):  # (Spark 4.3 refuses a frame with its TIME type in it: UNSUPPORTED_TIME_TYPE)
        return pa.int64()
    return arrow


def spark_schema(schema: Any) -> Any:
    """The Spark StructType of an Arrow schema of the API's (timestamps with their zone:
    TimestampType)."""
    import pyarrow as pa
    from pyspark.sql.pandas.types import from_arrow_schema

    plain = pa.schema([f.with_type(plain_type(f.type)) for f in schema])
    return from_arrow_schema(plain, prefer_timestamp_ntz=False)


def spark_batch(batch: Any, target: Any) -> Any:
    """`batch` (the API's) in the Arrow schema `target` (to_arrow_schema of spark_schema's)."""
    import pyarrow as pa

    columns = []
    for column, field in zip(batch.columns, target, strict=True):
        if isinstance(column.type, pa.BaseExtensionType) and column.type.extension_name == "arrow.uuid" \
                and pa.types.is_string(field.type):
            import uuid

            column = pa.array([None if b is None else str(uuid.UUID(bytes=b))
                               for b in column.storage.to_pylist()], pa.string())
        try:
            columns.append(column.cast(field.type))
        except pa.ArrowInvalid as err:  # (a timestamp past Spark's microseconds: Cassandra's are millis)
            from cqlsh_ext.api.errors import Error

            raise Error(f"cqlsh_ext: column {field.name} holds a value Spark's {field.type} cannot hold "
                        f"({err})") from None
    return pa.RecordBatch.from_arrays(columns, schema=target)


# ------------------------------------------------------------------ the stored bytes


def stored_array(kind: Kind, array: Any) -> Any:
    """A column's values with each blob inside (Blob: the struct of its six parts) as its stored
    bytes: what the Cassandra connector gives for the same column."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if isinstance(kind, Blob):
        return pc.struct_field(array, "stored")
    if not kind_holds(kind, (Blob,)):
        return array
    if isinstance(array, pa.ChunkedArray):
        return pa.chunked_array([stored_array(kind, chunk) for chunk in array.chunks])
    mask = array.is_null() if array.null_count else None
    if isinstance(kind, List):
        values = stored_array(kind.item, array.values)
        if kind.size is not None:
            return pa.FixedSizeListArray.from_arrays(values, kind.size, mask=mask)
        return pa.ListArray.from_arrays(array.offsets, values, mask=mask)
    if isinstance(kind, Map):
        return pa.MapArray.from_arrays(array.offsets, stored_array(kind.key, array.keys),
                                       stored_array(kind.value, array.items), mask=mask)
    assert isinstance(kind, Struct)
    children = [stored_array(k, array.field(i)) for i, (_name, k) in enumerate(kind.fields)]
    return pa.StructArray.from_arrays(children, names=[name for name, _ in kind.fields], mask=mask)


def stored_type(kind: Kind, arrow: Any) -> Any:
    """The Arrow type stored_array gives a column of `kind` (its Arrow type `arrow`)."""
    import pyarrow as pa

    if isinstance(kind, Blob):
        return pa.binary()
    if not kind_holds(kind, (Blob,)):
        return arrow
    if isinstance(kind, List):
        item = stored_type(kind.item, arrow.value_type)
        return pa.list_(item) if kind.size is None else pa.list_(item, kind.size)
    if isinstance(kind, Map):
        return pa.map_(stored_type(kind.key, arrow.key_type), stored_type(kind.value, arrow.item_type))
    assert isinstance(kind, Struct)
    return pa.struct([(name, stored_type(k, arrow.field(i).type)) for i, (name, k) in enumerate(kind.fields)])


@dataclass(frozen=True)
class StoredColumns:
    """Which of the API's Arrow columns make the stored columns: each answer column's name, its
    index among the API's fields (a blob's: its NAME:stored), its kind, and the index of its
    NAME:exact (None: it has none).

    Where Spark would lose what the API holds, a column is given whole: a column with an exact
    text (a decimal, a varint: more digits than decimal128 holds) as that text, or its value's
    where that holds it whole (spark/rows.py reads it back as the driver's value)."""

    names: tuple[str, ...]
    fields: tuple[int, ...]
    kinds: tuple[Kind, ...]
    exact: tuple[int | None, ...] = ()

    def batch(self, batch: Any) -> Any:
        import pyarrow as pa

        arrays = [_whole(stored_array(kind, batch.column(at)), None if exact is None else batch.column(exact))
                  for at, kind, exact in zip(self.fields, self.kinds, self._exact, strict=True)]
        return pa.RecordBatch.from_arrays(arrays, names=list(self.names))

    def schema(self, schema: Any) -> Any:
        """The stored columns' Arrow schema, from the API's."""
        import pyarrow as pa

        return pa.schema([(name, _whole_type(stored_type(kind, schema.field(at).type), exact))
                          for name, at, kind, exact in zip(self.names, self.fields, self.kinds, self._exact,
                                                           strict=True)])

    @property
    def _exact(self) -> tuple[int | None, ...]:
        return self.exact or (None,) * len(self.fields)


def _whole_type(arrow: Any, exact: int | None) -> Any:
    """The Arrow type _whole gives a stored column."""
    import pyarrow as pa

    return arrow if exact is None else pa.string()


def _whole(array: Any, exact: Any) -> Any:
    """A stored column as Spark holds it whole (StoredColumns): its exact text where it has one,
    else its value's text."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if exact is None:
        return array
    return pc.if_else(pc.is_null(exact), array.cast(pa.string()), exact)


def stored_columns(columns: Sequence[Any], schema: Any) -> StoredColumns:
    """StoredColumns of an answer's fixed columns (payload.columns.AnswerColumn) and its schema:
    a blob column's NAME:stored, any other column's own field (its companions left out, but for
    its NAME:exact, which the stored column holds where the value does not)."""
    from cqlsh_ext.payload.columns import BLOB, EXACT, STORED

    names = schema.names
    fields = [names.index(c.name + STORED if c.role == BLOB else c.name) for c in columns]
    kinds = [c.fixed for c in columns]
    exact = [names.index(c.name + EXACT) if c.role != BLOB and c.name + EXACT in names
             and _scalar_number(c.fixed) else None for c in columns]
    return StoredColumns(tuple(c.name for c in columns), tuple(fields), tuple(kinds), tuple(exact))


def _scalar_number(kind: Kind) -> bool:
    """A decimal or varint column itself (not a collection of them: those keep Spark's types)."""
    return isinstance(kind, Int | Dec | Str)


# ------------------------------------------------------------------ the filters Spark pushed


@dataclass(frozen=True)
class Pushed:
    """A filter Spark handed over and the reader took: where it looks (the answer column's name,
    then the fields inside its struct), how it compares (=, !=, <, <=, >, >=, IN) and with what;
    the payload condition it became (its text with markers, its values)."""

    attribute: tuple[str, ...]
    op: str
    values: tuple[Any, ...]
    condition: str
    bound: tuple[Any, ...]


_COMPARE = {"=": "equal", "!=": "not_equal", "<": "less", "<=": "less_equal", ">": "greater",
            ">=": "greater_equal"}


def kept(batch: Any, pushed: Sequence[Pushed]) -> Any:
    """The rows of `batch` (the API's) every pushed filter keeps, as Spark compares: a null
    compares to nothing. The statement's payload conditions have read less already; this keeps
    Spark's answer exactly Spark's whatever they let through."""
    import pyarrow.compute as pc

    if not pushed or not batch.num_rows:
        return batch
    mask = None
    for one in pushed:
        values = batch.column(one.attribute[0])
        for name in one.attribute[1:]:
            values = pc.struct_field(values, name)
        found = _compared(values, one.op, one.values)
        mask = found if mask is None else pc.and_kleene(mask, found)
    return batch.filter(mask, null_selection_behavior="drop")


def _compared(values: Any, op: str, literals: tuple[Any, ...]) -> Any:
    import pyarrow as pa
    import pyarrow.compute as pc

    if op == "IN":  # (a null is in no list: dropped, as Spark drops it)
        return pc.is_in(values, value_set=pa.array(literals, values.type))
    return getattr(pc, _COMPARE[op])(values, pa.scalar(literals[0], values.type))


def comparable(arrow: Any, literals: tuple[Any, ...]) -> bool:
    """Whether each literal is a value of the Arrow type (pushed filters are compared in it)."""
    import pyarrow as pa

    try:
        for literal in literals:
            pa.scalar(literal, arrow)
    except (pa.ArrowException, TypeError, ValueError, OverflowError):
        return False
    return True
