"""A polars source (docs/api.md, "A polars source"): `cqlsh_ext.scan(db, statement)` is the answer
of a SELECT as a polars.LazyFrame, registered with polars.io.plugins.register_io_source. Its
schema is the answer's (read from its leading sample when made, kept by every reading after);
when polars collects it, the columns it projects pick the columns and paths the SELECT reads, and
the simple conditions of its filter are added to the statement's WHERE, each as a bind marker:

- on a path's column (its values one plain kind: strings, integers, floats, decimals, booleans):
  `==`, `!=`, `<`, `<=`, `>`, `>=` with a literal, `is_in([...])` become payload conditions
  (`data.status = ?`, `data.n IN (?, ?)`), evaluated where the rows are read;
- on a CQL column of a scalar type (text, numbers, boolean): `==`, `<`, `<=`, `>`, `>=` become
  server conditions (`ck > ?`; a partition key column `==` only, when it is the whole key), with
  ALLOW FILTERING;
- anything else (`|`, string functions, null tests, a blob's columns, a statement with a LIMIT)
  stays polars'.

The whole filter is applied by polars to what is read too, so what it pushes only reads less: the
answer is the same filter in polars after a full read. Each statement it sends is logged at DEBUG
on the `cqlsh_ext.scan` logger.
"""

from __future__ import annotations

import io
import json
import logging
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from cqlsh_ext.api.errors import Error

if TYPE_CHECKING:
    import polars

    from cqlsh_ext.api.database import Database
    from cqlsh_ext.api.params import Params
    from cqlsh_ext.cql.lexer import Lexed
    from cqlsh_ext.payload.arrow_types import Kind
    from cqlsh_ext.payload.columns import AnswerColumn
    from cqlsh_ext.query.grammar import Plan
    from cqlsh_ext.reading.resolve import TableTarget

__all__ = ["scan"]

LABEL = "scan"
LOG = logging.getLogger("cqlsh_ext.scan")

#: polars' comparison operators (its serialized expressions' names) and CQL's, and each flipped
#: (a literal on the left).
_COMPARE = {"Eq": "=", "NotEq": "!=", "Lt": "<", "LtEq": "<=", "Gt": ">", "GtEq": ">="}
_FLIPPED = {"=": "=", "!=": "!=", "<": ">", "<=": ">=", ">": "<", ">=": "<="}
#: CQL scalar types a server condition is pushed on, and the Python values it takes there.
_SERVER_TYPES: dict[str, tuple[type, ...]] = {
    "text": (str,), "ascii": (str,), "int": (int,), "bigint": (int,), "smallint": (int,), "tinyint": (int,),
    "varint": (int,), "float": (float, int), "double": (float, int), "boolean": (bool,)}


@dataclass(frozen=True)
class Condition:
    """A condition pushed into the statement: its text with one marker per value, and the values."""

    text: str
    values: tuple[object, ...]


def scan(db: Database, statement: str, params: Params = None) -> polars.LazyFrame:
    """See the module doc. Error (one line) for a statement that is not a SELECT of rows (an
    aggregate, GROUP BY, ORDER BY, DISTINCT: polars does those on the frame)."""
    from cqlsh_ext.api.call import Call
    from cqlsh_ext.api.query_answer import need

    pl = need("polars")
    from polars.io.plugins import register_io_source

    lexed, plan, target = db._plain_plan(statement, LABEL)
    if plan.aggregates or plan.group_by or plan.order_by or plan.distinct:
        raise Error(f"{LABEL}: a polars source reads rows; aggregate, group, sort and deduplicate them in "
                    "polars (LazyFrame.group_by, sort, unique)")
    with db._answer(statement, params, Call(), plain=True) as sample:
        schema = sample.schema
        kinds = sample._kinds()
        columns = list(sample._typed.fixed())
    source = _Source(db, lexed, params, plan, target, columns, kinds)
    frame_schema = pl.from_arrow(schema.empty_table()).schema
    frame: polars.LazyFrame = register_io_source(source, schema=frame_schema, explain_name="cqlsh_ext",
                                                 explain_detail=" ".join(statement.split()))
    return frame


class _Source:
    """The io_source polars calls (register_io_source): the statement narrowed to what is asked,
    read, each batch a DataFrame filtered by the whole predicate."""

    def __init__(self, db: Database, lexed: Lexed, params: Params, plan: Plan, target: TableTarget,
                 columns: list[AnswerColumn], kinds: Sequence[Kind]) -> None:
        self.db = db
        self.lexed = lexed
        self.params = params
        self.plan = plan
        self.target = target
        self.columns = columns
        self.kinds = list(kinds)
        self.items = _items(plan, target)
        #: Each frame column's answer column (a blob's companions are its own).
        self.owner: dict[str, int] = {name: i for i, c in enumerate(columns) for name, _kind in c.fields()}

    def __call__(self, with_columns: list[str] | None, predicate: polars.Expr | None, n_rows: int | None,
                 batch_size: int | None) -> Iterator[polars.DataFrame]:
        import polars as pl

        from cqlsh_ext.api.call import Call

        wanted = list(range(len(self.columns)))
        if with_columns is not None:
            names = set(with_columns) | (set(predicate.meta.root_names()) if predicate is not None else set())
            wanted = sorted({self.owner[n] for n in names if n in self.owner}) or [0]
        pushed, whole = ([], True) if predicate is None else _conditions(predicate, self)
        if self.plan.limit is not None:
            pushed, whole = [], predicate is None
        text, params = self._statement(wanted, pushed, n_rows if whole and n_rows else None)
        LOG.debug("%s: %s", LABEL, text)
        answer = self.db._answer(text, params, Call(page_size=batch_size), plain=True,
                                 kinds=[self.kinds[i] for i in wanted])
        left = n_rows
        try:
            for batch in answer.to_reader():
                frame = pl.from_arrow(batch)
                assert isinstance(frame, pl.DataFrame)
                if predicate is not None:
                    frame = frame.filter(predicate)
                if with_columns is not None:
                    frame = frame.select(with_columns)
                if left is not None:
                    frame = frame.head(left)
                    left -= frame.height
                yield frame
                if left is not None and left <= 0:
                    return
        finally:
            answer.close()

    def _statement(self, wanted: list[int], pushed: list[Condition],
                   limit: int | None) -> tuple[str, Params]:
        """The statement read: the wanted items, the WHERE as written and the pushed conditions
        (their markers as the statement's own are: `?`, else named), a LIMIT, ALLOW FILTERING."""
        parts = _parts(self.lexed)
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
        if limit is not None and parts.limit is None:
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


@dataclass(frozen=True)
class _Parts:
    """A SELECT's text from FROM to the end of its WHERE, and its tail: LIMIT n, ALLOW FILTERING,
    CONFIRM."""

    table_to_where_end: str
    has_where: bool
    limit: str | None
    allow_filtering: bool
    confirm: bool


def _parts(lexed: Lexed) -> _Parts:
    tokens = lexed.tokens
    words = [t.value.lower() if t.kind == "word" else "" for t in tokens]
    start = words.index("from")
    end = next(i for i in range(start, len(tokens)) if tokens[i].kind == "end"
               or words[i] in ("limit", "allow", "confirm")
               or (tokens[i].kind == "punct" and tokens[i].value == ";"))
    text = lexed.text[tokens[start].start:tokens[end - 1].end]
    limit = None
    if words[end] == "limit":
        limit = lexed.text[tokens[end].start:tokens[end + 1].end]
    return _Parts(text, "where" in words[start:end], limit, "allow" in words[end:], "confirm" in words[end:])


def _conditions(predicate: polars.Expr, source: _Source) -> tuple[list[Condition], bool]:
    """The predicate's conjuncts this source pushes (see the module doc), and whether they are the
    whole predicate."""
    tree = json.loads(predicate.meta.serialize(format="json"))
    conjuncts: list[Any] = []
    _split_and(tree, conjuncts)
    pushed = [c for c in (_condition(node, source) for node in conjuncts) if c is not None]
    return pushed, len(pushed) == len(conjuncts)


def _split_and(node: Any, out: list[Any]) -> None:
    binary = node.get("BinaryExpr") if isinstance(node, dict) else None
    if binary is not None and binary.get("op") == "And":
        _split_and(binary["left"], out)
        _split_and(binary["right"], out)
    else:
        out.append(node)


def _column(node: Any) -> str | None:
    return node["Column"] if isinstance(node, dict) and isinstance(node.get("Column"), str) else None


def _literal(node: Any) -> tuple[bool, object]:
    """(True, its value) for an expression of literals alone (a cast of one included), evaluated
    by polars; (False, None) for anything that reads a column."""
    import polars as pl

    if "Column" in json.dumps(node):
        return False, None
    try:
        expr = pl.Expr.deserialize(io.StringIO(json.dumps(node)), format="json")
        values = pl.select(expr).to_series().to_list()
    except Exception:
        return False, None
    return (True, values[0]) if len(values) == 1 else (False, None)


def _condition(node: Any, source: _Source) -> Condition | None:
    """One conjunct as a pushed condition, or None when it stays polars'."""
    if not isinstance(node, dict):
        return None
    binary = node.get("BinaryExpr")
    if binary is not None and binary.get("op") in _COMPARE:
        op = _COMPARE[binary["op"]]
        name, other = _column(binary["left"]), binary["right"]
        if name is None:
            name, other, op = _column(binary["right"]), binary["left"], _FLIPPED[op]
        if name is None:
            return None
        known, value = _literal(other)
        return _pushed(source, name, op, (value,)) if known else None
    function = node.get("Function")
    if function is not None and function.get("function") == {"Boolean": {"IsIn": {"nulls_equal": False}}}:
        inputs = function.get("input") or []
        if len(inputs) != 2 or _column(inputs[0]) is None:
            return None
        known, value = _literal(inputs[1])
        if not known or not isinstance(value, list) or not value:
            return None
        return _pushed(source, str(_column(inputs[0])), "IN", tuple(value))
    return None


def _pushed(source: _Source, name: str, op: str, values: tuple[object, ...]) -> Condition | None:
    """The condition on frame column `name`, where it can be told as polars tells it (the module
    doc), else None."""
    from cqlsh_ext.payload.arrow_types import Bool, Dec, Float, Int, Str
    from cqlsh_ext.payload.columns import CQL, PATH
    from cqlsh_ext.query.grammar import literal_of, quote

    at = source.owner.get(name)
    if at is None:
        return None
    column = source.columns[at]
    if column.name != name or any(v is None for v in values):
        return None  # a companion (NAME:note, a blob's NAME:label...); a null compares with nothing
    markers = "(" + ", ".join("?" for _ in values) + ")" if op == "IN" else "?"
    if column.role == PATH:
        kind = source.kinds[at]
        if not isinstance(kind, (Str, Int, Float, Dec, Bool)) or column.source is None:
            return None
        if isinstance(kind, Bool) and op not in ("=", "!="):
            return None
        try:
            typed = tuple(literal_of(v, op) for v in values)
        except Exception:
            return None
        plain_kind = Str if isinstance(kind, Str) else Bool if isinstance(kind, Bool) else None
        for value in typed:  # compared as polars compares: a string with a string, a number with a number
            if plain_kind is Str and not isinstance(value, str):
                return None
            if plain_kind is Bool and not isinstance(value, bool):
                return None
            if plain_kind is None and (isinstance(value, (str, bool)) or value is None):
                return None
        return Condition(f"{column.source} {op} {markers}", typed)
    if column.role != CQL or op in ("!=", "IN"):
        return None
    cqltype = source.target.type_of(name)
    if cqltype is None or cqltype.kind != "native" or cqltype.name not in _SERVER_TYPES:
        return None
    takes = _SERVER_TYPES[cqltype.name]
    if not all(isinstance(v, takes) and (isinstance(v, bool) == (cqltype.name == "boolean")) for v in values):
        return None
    if name in source.target.partition_key and (op != "=" or len(source.target.partition_key) > 1):
        return None
    meta = source.target.meta.columns.get(name)
    if meta is not None and getattr(meta, "is_static", False):
        return None
    return Condition(f"{quote(name)} {op} ?", values)
