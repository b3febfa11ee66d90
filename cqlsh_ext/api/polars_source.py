"""A polars source (docs/api.md, "A polars source"): `cqlsh_ext.scan(db, statement)` is the answer
of a SELECT as a polars.LazyFrame, registered with polars.io.plugins.register_io_source. Its
schema is the answer's (read from its leading sample when made, kept by every reading after).
When polars collects it, it hands the source what it may narrow, and the source keeps polars'
contract for each: the frame is what the same lazy query gives over `db.query(statement).to_polars()`.

- `with_columns`: the columns and paths the SELECT reads (with the predicate's own).
- `n_rows` alone (`head(n)`, `limit(n)`): a LIMIT n.
- a predicate alone (`filter(p)`): its conjuncts of the simple forms below become conditions of the
  WHERE, each value a bind marker; the whole predicate is applied by polars to what is read, so
  what is pushed only reads less:
  - on a path's column (its values one plain kind: strings, integers, floats, decimals, booleans):
    `==`, `!=`, `<`, `<=`, `>`, `>=` with a literal and `is_in([...])` become payload conditions
    (`data.status = ?`, `data.n IN (?, ?)`), evaluated where the rows are read; a boolean column
    alone or negated is `= true` / `= false`. A float is pushed when it is finite and below 2**53
    in magnitude (where the number rule and polars' doubles agree on every value the column holds),
    a string none that Arrow's spelling of a lone surrogate could meet otherwise (api.conditions);
  - on a CQL column of a scalar type (text, ascii, integers, float, double, boolean): `==`, `<`,
    `<=`, `>`, `>=` become server conditions (`ck > ?`; a partition key column `==` only, when it is
    the whole key), with ALLOW FILTERING: one `=`, or one lower and one upper bound, on a column the
    statement's WHERE does not name (the server refuses more). Not a zero or a NaN on a float or
    double column (the server orders -0.0 below 0.0, polars holds them equal);
  - a literal the column cannot hold (`== "é"` on an ascii column; an integer past an int's
    range in `is_in`, where for `==` polars widens the column) in `==` or `is_in`: no row can
    match, so nothing is read (when every conjunct is a comparison of these forms: nothing else
    of the predicate would have been evaluated); in an order comparison it stays polars';
  - anything else (`|`, string functions, null tests, casts, a Python function (map_elements), a
    blob's columns, a statement with a LIMIT) stays polars'. Nothing is serialized: the conjuncts
    are recognized by polars' own expression comparison (Expr.meta), so a Python function in the
    predicate is only ever called by polars.
- `n_rows` with a predicate (`head(n).filter(p)`): polars' n_rows is a slice taken before the
  predicate: the first n rows are read (LIMIT n, nothing pushed), then filtered.
- `batch_size`: a hint polars gives (100,000 rows in polars 2.1), not taken as the page size: the
  rows are read a page of the reading's at a time (5,000 rows), each a frame polars takes and lets go.

The rows come in the full read's order (token order): a whole table read with payload conditions
alone is read as one token range by one stream, not by ranges at once, so polars' head and slice
after a filter take the rows they take over the full read.

Each statement it sends is logged at DEBUG on the `cqlsh_ext.scan` logger.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from cqlsh_ext.api.conditions import NEVER, Condition, path_condition
from cqlsh_ext.api.errors import Error

if TYPE_CHECKING:
    import polars

    from cqlsh_ext.api.connected import Connected
    from cqlsh_ext.api.params import Params
    from cqlsh_ext.cql.lexer import Lexed
    from cqlsh_ext.payload.arrow_types import Kind
    from cqlsh_ext.payload.columns import AnswerColumn
    from cqlsh_ext.query.grammar import Plan
    from cqlsh_ext.reading.resolve import TableTarget

__all__ = ["scan"]

LABEL = "scan"
LOG = logging.getLogger("cqlsh_ext.scan")

#: polars' comparisons, each as CQL spells it, built from two expressions: a conjunct is one of
#: these when polars' own comparison of expressions (Expr.meta.eq) says it is that build of its
#: two inputs.
_COMPARE: dict[str, Callable[[Any, Any], Any]] = {
    "=": lambda a, b: a == b, "!=": lambda a, b: a != b, "<": lambda a, b: a < b,
    "<=": lambda a, b: a <= b, ">": lambda a, b: a > b, ">=": lambda a, b: a >= b}
#: Each comparison with its sides swapped (a literal on the left).
_FLIPPED = {"=": "=", "!=": "!=", "<": ">", "<=": ">=", ">": "<", ">=": "<="}
#: CQL scalar types a server condition is pushed on, and the Python values it takes there.
_SERVER_TYPES: dict[str, tuple[type, ...]] = {
    "text": (str,), "ascii": (str,), "int": (int,), "bigint": (int,), "smallint": (int,), "tinyint": (int,),
    "varint": (int,), "float": (float, int), "double": (float, int), "boolean": (bool,)}
#: The CQL integer types' ranges (bits of a signed integer).
_INT_BITS = {"tinyint": 8, "smallint": 16, "int": 32, "bigint": 64}
@dataclass(frozen=True)
class Comparison:
    """A conjunct of the simple forms the source reads: frame column `name`, a CQL comparison (or
    IN), and its literal values (IN's list)."""

    name: str
    op: str
    values: tuple[object, ...]


def scan(db: Connected, statement: str, params: Params = None) -> polars.LazyFrame:
    """See the module doc. Error (one line) for a statement that is not a SELECT of rows (an
    aggregate, GROUP BY, ORDER BY, DISTINCT: polars does those on the frame)."""
    from cqlsh_ext.api.call import Call
    from cqlsh_ext.api.query_answer import need

    pl = need("polars")
    import pyarrow as pa
    from polars.io.plugins import register_io_source

    lexed, plan, target = db._plain_plan(statement, LABEL)
    if plan.aggregates or plan.group_by or plan.order_by or plan.distinct:
        raise Error(f"{LABEL}: a polars source reads rows; aggregate, group, sort and deduplicate them in "
                    "polars (LazyFrame.group_by, sort, unique)")
    with db._answer(statement, params, Call(), plain=True) as sample:
        schema = sample.schema
        kinds = sample._kinds()
        columns = list(sample._typed.fixed())
    # (Table.from_batches: pyarrow's empty_table() builds no extension type inside a list or struct)
    frame_schema = pl.from_arrow(pa.Table.from_batches([], schema)).schema
    source = _Source(db, lexed, params, plan, target, columns, kinds, frame_schema)
    frame: polars.LazyFrame = register_io_source(source, schema=frame_schema, explain_name="cqlsh_ext",
                                                 explain_detail=" ".join(statement.split()))
    return frame


class _Source:
    """The io_source polars calls (register_io_source): the statement narrowed to what is asked,
    read, each batch a DataFrame cut to n_rows, then filtered by the whole predicate."""

    def __init__(self, db: Connected, lexed: Lexed, params: Params, plan: Plan, target: TableTarget,
                 columns: list[AnswerColumn], kinds: Sequence[Kind], frame_schema: polars.Schema) -> None:
        self.db = db
        self.lexed = lexed
        self.params = params
        self.plan = plan
        self.target = target
        self.columns = columns
        self.kinds = list(kinds)
        self.frame_schema = frame_schema
        self.items = _items(plan, target)
        #: Each frame column's answer column (a blob's companions are its own).
        self.owner: dict[str, int] = {name: i for i, c in enumerate(columns) for name, _kind in c.fields()}
        #: The CQL columns the statement's WHERE names: no server condition is added on them.
        self.restricted = _named_columns(plan.server_where, target)
        self.parts = _parts(lexed)
        #: The statement's rows are a slice of its own (LIMIT, PER PARTITION LIMIT).
        self.sliced = self.parts.limit is not None or self.parts.per_partition is not None
        #: The whole token ring as one range (lo, hi], once asked (None: no numeric ring).
        self._ring: tuple[tuple[int, int], ...] | None | bool = False

    def __call__(self, with_columns: list[str] | None, predicate: polars.Expr | None, n_rows: int | None,
                 batch_size: int | None) -> Iterator[polars.DataFrame]:
        import polars as pl

        from cqlsh_ext.api.call import Call
        wanted = list(range(len(self.columns)))
        if with_columns is not None:
            names = set(with_columns) | (set(predicate.meta.root_names()) if predicate is not None else set())
            wanted = sorted({self.owner[n] for n in names if n in self.owner}) or [0]
        pushed: list[Condition] = []
        if predicate is not None and n_rows is None and not self.sliced:
            # n_rows is polars' slice before its predicate (head(n).filter(p)): then no condition
            # may narrow the rows the slice is taken from; a statement's LIMIT is such a slice too.
            pushed = _conditions(predicate, self)
        if NEVER in pushed:
            LOG.debug("%s: a condition no row meets: nothing read", LABEL)
            shown = self.frame_schema.names() if with_columns is None else with_columns
            yield pl.DataFrame(schema={name: self.frame_schema[name] for name in shown})
            return
        text, params = self._statement(wanted, pushed, n_rows)
        LOG.debug("%s: %s", LABEL, text)
        # polars' batch_size is a hint of rows a frame (100,000 in polars 2.1), not a page: read in
        # the reading's own pages, each frame let go as polars takes it, memory holds a page or two
        # however large the table (tests/api/test_polars_memory.py)
        answer = self.db._answer(text, params, Call(), plain=True,
                                 kinds=[self.kinds[i] for i in wanted], ranges=self._in_order(pushed))
        left = n_rows
        try:
            for batch in answer.to_reader():
                frame = pl.from_arrow(batch)
                assert isinstance(frame, pl.DataFrame)
                if left is not None:
                    frame = frame.head(left)
                    left -= frame.height
                if predicate is not None:
                    frame = frame.filter(predicate)
                if with_columns is not None:
                    frame = frame.select(with_columns)
                yield frame
                if left is not None and left <= 0:
                    return
        finally:
            answer.close()

    def _in_order(self, pushed: list[Condition]) -> tuple[tuple[int, int], ...] | None:
        """The token ranges to read the narrowed statement by: the whole ring as one range, read by
        one stream in token order, where payload conditions alone (pushed or the statement's own)
        would have a whole table read by token ranges at once, its rows in no fixed order (polars'
        head and slice take a source's first rows: the full read's, in its token order); None: as
        the statement reads."""
        if (self.plan.restricts_partitions or self.plan.server_where or not (pushed or self.plan.predicates)
                or any(c.column is not None for c in pushed)):
            return None
        if self._ring is False:
            from cqlsh_ext.scanning.ring import RingError, ring_for, server_partitioner

            try:
                ring = ring_for(server_partitioner(self.db.session))
            except RingError:  # no numeric ring: as the statement reads
                self._ring = None
            else:
                self._ring = ((ring.low, ring.high),)
        return self._ring if isinstance(self._ring, tuple) else None

    def _statement(self, wanted: list[int], pushed: list[Condition],
                   limit: int | None) -> tuple[str, Params]:
        """The statement read: the wanted items, the WHERE as written and the pushed conditions
        (their markers as the statement's own are: `?`, else named), a LIMIT, ALLOW FILTERING."""
        parts = self.parts
        text = "SELECT " + ", ".join(self.items[i] for i in wanted) + " " + parts.table_to_where_end
        params: Params = self.params
        if pushed:
            named = isinstance(params, Mapping)
            values: Any = dict(params) if isinstance(params, Mapping) else list(params or ())
            conditions = []
            for condition in pushed:
                spelt = condition.text
                for value in condition.values:
                    if named:
                        name = f"cqlsh_ext_{len(values)}"
                        spelt = spelt.replace("?", f":{name}", 1)
                        values[name] = value
                    else:
                        values.append(value)
                conditions.append(spelt)
            text += (" AND " if parts.has_where else " WHERE ") + " AND ".join(conditions)
            params = values
        if parts.per_partition is not None:  # with no LIMIT after it (the reading takes none): n_rows
            text += f" {parts.per_partition}"  # are cut here
        if limit is not None and parts.limit is None and parts.per_partition is None:
            text += f" LIMIT {limit}"
        elif parts.limit is not None:
            text += f" {parts.limit}"
        if pushed or parts.allow_filtering:
            text += " ALLOW FILTERING"
        if parts.confirm:
            text += " CONFIRM"
        return text, params


def _items(plan: Plan, target: TableTarget) -> list[str]:
    """Each answer column's selector as the statement names it (`*` spelt as the table's columns)."""
    from cqlsh_ext.query.grammar import quote

    out: list[str] = []
    for item in plan.items:
        if item.kind == "star":
            out += [quote(name) for name in target.columns]
        elif item.kind == "column":
            out.append(quote(item.name))
        else:
            out.append(item.name)
    return out


def _named_columns(server_where: str, target: TableTarget) -> frozenset[str]:
    """The table's columns a WHERE's text names (an identifier as CQL reads it: unquoted lower
    case, quoted as written)."""
    from cqlsh_ext.cql.lexer import Lexed

    names = {t.value.lower() if t.kind == "word" else t.value
             for t in Lexed(server_where).tokens if t.kind in ("word", "qname")}
    return frozenset(names & set(target.columns))


@dataclass(frozen=True)
class _Parts:
    """A SELECT's text from FROM to the end of its WHERE, and its tail: PER PARTITION LIMIT n,
    LIMIT n, ALLOW FILTERING, CONFIRM."""

    table_to_where_end: str
    has_where: bool
    limit: str | None
    allow_filtering: bool
    confirm: bool
    per_partition: str | None = None


def _parts(lexed: Lexed) -> _Parts:
    tokens = lexed.tokens
    words = [t.value.lower() if t.kind == "word" else "" for t in tokens]
    start = words.index("from")
    end = next(i for i in range(start, len(tokens)) if tokens[i].kind == "end"
               or words[i] in ("per", "limit", "allow", "confirm")
               or (tokens[i].kind == "punct" and tokens[i].value == ";"))
    text = lexed.text[tokens[start].start:tokens[end - 1].end]
    at, per_partition, limit = end, None, None
    if words[at] == "per":  # PER PARTITION LIMIT n
        per_partition = lexed.text[tokens[at].start:tokens[at + 3].end]
        at += 4
    if words[at] == "limit":
        limit = lexed.text[tokens[at].start:tokens[at + 1].end]
    return _Parts(text, "where" in words[start:end], limit, "allow" in words[end:], "confirm" in words[end:],
                  per_partition)


def _conditions(predicate: polars.Expr, source: _Source) -> list[Condition]:
    """The conditions the predicate's conjuncts become (see the module doc); [NEVER] when one of
    them no row can meet and every conjunct is a simple comparison (so polars' answer is empty
    without evaluating anything else)."""
    conjuncts = _conjuncts(predicate)
    compared = [_comparison(node) for node in conjuncts]
    pushed: list[Condition] = []
    bounds: dict[str, set[str]] = {}  # the server conditions' sides on each CQL column
    for comparison in compared:
        if comparison is None:
            continue
        condition = _pushed(source, comparison)
        if condition is NEVER:
            if all(c is not None for c in compared):
                return [NEVER]
            continue
        if condition is None:
            continue
        if condition.column is not None:
            side = {"=": "=", "<": "upper", "<=": "upper", ">": "lower", ">=": "lower"}[comparison.op]
            taken = bounds.setdefault(condition.column, set())
            if "=" in taken or side in taken or (side == "=" and taken):
                continue  # the server takes one =, or one bound of each side, on a column
            taken.add(side)
        pushed.append(condition)
    return pushed


def _conjuncts(predicate: polars.Expr) -> list[polars.Expr]:
    """The predicate's `&` operands, at any depth."""
    out: list[polars.Expr] = []
    todo = [predicate]
    while todo:
        node = todo.pop()
        inputs = node.meta.pop()  # an expression's inputs, the last first
        if len(inputs) == 2 and node.meta.eq(inputs[1] & inputs[0]):
            todo += inputs
        else:
            out.append(node)
    return out


def _comparison(node: polars.Expr) -> Comparison | None:
    """A conjunct as a Comparison: a column compared with a literal, a column's is_in(a literal),
    a boolean column alone (`= true`) or negated (`= false`); None for anything else."""
    inputs = node.meta.pop()
    if not inputs and node.meta.is_column():
        return Comparison(node.meta.output_name(), "=", (True,))
    if len(inputs) == 1:
        inner = inputs[0]
        if inner.meta.is_column() and node.meta.eq(~inner):
            return Comparison(inner.meta.output_name(), "=", (False,))
        return None
    if len(inputs) != 2:
        return None
    right, left = inputs
    for op, build in _COMPARE.items():
        if not node.meta.eq(build(left, right)):
            continue
        if left.meta.is_column() and right.meta.is_literal():
            value = _literal(right)
            return Comparison(left.meta.output_name(), op, (value,)) if value is not _NO_VALUE else None
        if right.meta.is_column() and left.meta.is_literal():
            value = _literal(left)
            flipped = _FLIPPED[op]
            return Comparison(right.meta.output_name(), flipped, (value,)) if value is not _NO_VALUE else None
        return None
    if left.meta.is_column() and right.meta.is_literal() and node.meta.eq(left.is_in(right)):
        values = _literal(right, many=True)
        if isinstance(values, list):
            # is_in never matches a null (nulls_equal=False): a null listed finds nothing
            return Comparison(left.meta.output_name(), "IN", tuple(v for v in values if v is not None))
    return None


_NO_VALUE = object()


def _literal(node: polars.Expr, many: bool = False) -> Any:
    """A literal expression's value (many: its values, a list), as polars evaluates it; _NO_VALUE
    where it has none of that shape."""
    import polars as pl

    try:
        series = pl.select(node).to_series()
    except Exception:  # a literal polars itself cannot evaluate alone
        return _NO_VALUE
    if many:
        if isinstance(series.dtype, (pl.List, pl.Array)) and series.len() == 1:
            values = series.to_list()[0]
            return list(values) if values is not None else _NO_VALUE
        return series.to_list()
    return series.to_list()[0] if series.len() == 1 else _NO_VALUE


def _pushed(source: _Source, comparison: Comparison) -> Condition | None:
    """The condition `comparison` becomes where it can be told as polars tells it (the module doc):
    NEVER where no value of the column meets it, None where it stays polars'."""
    from cqlsh_ext.payload.columns import CQL, PATH
    from cqlsh_ext.query.grammar import quote

    name, op = comparison.name, comparison.op
    at = source.owner.get(name)
    if at is None:
        return None
    column = source.columns[at]
    if column.name != name:
        return None  # a companion (NAME:note, a blob's NAME:label...)
    if op == "IN" and not comparison.values:
        return NEVER
    if any(v is None for v in comparison.values):
        return None  # a comparison with null is null: polars keeps no row (and binds no null)
    if column.role == PATH:
        return path_condition(source.kinds[at], column.source, op, comparison.values)
    if column.role != CQL:
        return None
    cqltype = source.target.type_of(name)
    if cqltype is None or cqltype.kind != "native" or cqltype.name not in _SERVER_TYPES:
        return None
    held = _held(cqltype.name, op, comparison.values)
    if not isinstance(held, tuple):
        return held
    if op in ("!=", "IN") or name in source.restricted:
        return None
    if name in source.target.partition_key and (op != "=" or len(source.target.partition_key) > 1):
        return None
    meta = source.target.meta.columns.get(name)
    if meta is not None and getattr(meta, "is_static", False):
        return None
    return Condition(f"{quote(name)} {op} ?", held, column=name)


def _held(cqltype: str, op: str, values: tuple[object, ...]) -> tuple[object, ...] | Condition | None:
    """The values a server condition on a column of `cqltype` binds: those of them the column can
    hold (for = and IN; NEVER where none can), or None where the condition stays polars'."""
    takes = _SERVER_TYPES[cqltype]
    if not all(isinstance(v, takes) and isinstance(v, bool) == (cqltype == "boolean") for v in values):
        return None
    if cqltype in ("float", "double") and any(v != v or v == 0 for v in values):
        return None  # NaN, and the zeros: the server orders -0.0 below 0.0, polars holds them equal

    def fits(value: object) -> bool:
        if cqltype == "ascii":
            return isinstance(value, str) and value.isascii()
        bits = _INT_BITS.get(cqltype)
        return bits is None or (isinstance(value, int) and -(2 ** (bits - 1)) <= value < 2 ** (bits - 1))

    held = tuple(v for v in values if fits(v))
    if len(held) == len(values):
        return held
    if op in ("=", "IN"):
        return held if held and op == "IN" else NEVER
    return None  # an order comparison with a value the column cannot hold: polars' own
