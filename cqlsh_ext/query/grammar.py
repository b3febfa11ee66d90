"""Parse a CQL SELECT that may name payload paths into a Plan (docs/queries.md).

The schema is a plain argument (Schema): the parser tells a path from an ordinary column by it,
so nothing here needs the driver. Errors are QueryError, one line each."""
from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from decimal import Decimal

from cqlsh_ext.cql import types as cqltypes
from cqlsh_ext.cql.errors import QueryError
from cqlsh_ext.cql.lexer import Cursor, Lexed, Token, lexed
from cqlsh_ext.cql.types import UDT, CqlType

__all__ = ["QueryError", "Schema", "Plan", "Path", "Column", "Item", "Predicate", "Where", "parse", "reading",
           "where_at"]


@dataclass(frozen=True)
class Schema:
    """The table as the parser needs it. `columns`: name -> CQL type text ("blob", "text",
    "map<text,blob>", "frozen<addr>", ...); `udts`: UDT name -> field name -> type text."""

    columns: Mapping[str, str]
    partition_key: Sequence[str] = ()
    udts: Mapping[str, Mapping[str, str]] = field(default_factory=dict)
    #: Each column's type once parsed (a statement names a column once per condition).
    _types: dict[str, CqlType] = field(default_factory=dict, compare=False, repr=False)

    def type_of(self, column: str) -> CqlType | None:
        """The column's type (cqlsh_ext.cql.types), its UDTs given their fields; None when the
        table has no such column."""
        found = self._types.get(column)
        if found is None:
            text = self.columns.get(column)
            if text is None:
                return None
            found = self._types[column] = cqltypes.parse(text, self.udts)
        return found


def map_of_blobs(cqltype: CqlType) -> bool:
    """A map from a scalar key to blobs: a path into it starts with m['key']."""
    return cqltype.kind == "map" and len(cqltype.params) == 2 and cqltype.params[0].scalar \
        and cqltype.params[1].is_blob

Step = str | int


@dataclass(frozen=True)
class Path:
    """A blob column (`column`), how to reach the blob inside it (`access`: a map key or a UDT
    field, or None), then steps into the decoded record: str keys and int list indexes."""

    column: str
    access: str | None
    steps: tuple[Step, ...]
    text: str


@dataclass(frozen=True)
class Column:
    name: str


Ref = Path | Column


#: The answer's column of count(*): as Cassandra names it in a plain SELECT's answer, so that a
#: payload query's count reads the same in the shell's table, JSON Lines, CSV, Parquet, MCP and the
#: Python API as the server's own.
COUNT_COLUMN = "count"


@dataclass(frozen=True)
class Item:
    """One projection item. kind: 'star', 'column', 'path' or 'agg' (func: count/min/max/sum/avg;
    ref None for count(*)). `name` is the result column: as written, but COUNT_COLUMN for
    count(*); `written`, an aggregate as written."""

    kind: str
    name: str
    ref: Ref | None = None
    func: str | None = None
    written: str = ""


Literal = str | int | Decimal | bool | None


@dataclass(frozen=True)
class Predicate:
    """A payload condition. op: = != < <= > >= IN LIKE CONTAINS 'IS NULL' 'IS NOT NULL', and of a
    blob itself (a bare blob column, a map of blobs' m['k'], a UDT's blob field) 'IS UNDECODABLE'
    'IS NOT UNDECODABLE': a value no reading can read (no known format, a format that fails, a
    binary payload)."""

    ref: Ref
    op: str
    values: tuple[Literal, ...] = ()


@dataclass(frozen=True)
class Marker:
    """A bind marker a payload condition's literal is (a program's parameter: `?` or `:name`),
    bound before the plan runs (`bind`): the `index`-th `?` of the statement (0 first), or the
    `name` (as CQL reads it: lower case unless quoted); the condition (`predicate`, an index into
    Plan.predicates) and the literal's place among its values (`slot`)."""

    index: int | None
    name: str | None
    predicate: int
    slot: int

    @property
    def spelt(self) -> str:
        """How a message names it: `?` 1-based, or `:name`."""
        return f":{self.name}" if self.name is not None else f"parameter {(self.index or 0) + 1}"


@dataclass
class Plan:
    items: list[Item]
    keyspace: str | None
    table: str
    server_where: str
    predicates: list[Predicate]
    group_by: list[Path]
    order_by: list[tuple[Ref, bool]]
    distinct: bool
    limit: int | None
    allow_filtering: bool
    confirm: bool
    restricts_partitions: bool
    server_statement: str = ""
    #: The map columns whose blobs the plan reaches by key (m['k']): where column settings name
    #: such a blob's place `value` (a UDT's field is named by the field).
    map_columns: frozenset[str] = frozenset()
    #: The payload conditions' literals that are bind markers (parse(..., markers=True)): `bind`
    #: gives them their values before the plan runs.
    markers: tuple[Marker, ...] = ()

    def setting_steps(self, column: str, access: str | None) -> tuple[str, ...]:
        """The steps below `column` where the blob reached by `access` sits, as column settings
        (DECODE) and payload.places.ValuePlace name them."""
        if access is None:
            return ()
        return ("value",) if column in self.map_columns else (access,)

    @property
    def aggregates(self) -> bool:
        return any(item.kind == "agg" for item in self.items)

    @property
    def local_rows(self) -> bool:
        """True when the rows the server returns are not the answer's rows one for one."""
        return bool(self.predicates or self.aggregates or self.group_by or self.distinct
                    or self.order_by)

    @property
    def reads_beyond_partitions(self) -> bool:
        """Would read more than the partitions the WHERE names, deciding here what to keep."""
        return self.local_rows and not self.restricts_partitions


FUNCTIONS = ("count", "min", "max", "sum", "avg")
COMPARE = ("=", "!=", "<", "<=", ">", ">=")


class _Parser(Cursor):
    def __init__(self, statement: Lexed, schema: Schema, plain: bool = False, markers: bool = False) -> None:
        super().__init__(statement.tokens)
        self.text = statement.text
        self.schema = schema
        self.plain = plain
        #: Bind markers are taken as a payload condition's literals (a program's parameters).
        self.markers = markers
        #: The markers of the payload conditions read so far: (predicate, slot, `?` index, name).
        self.found: list[Marker] = []
        #: The current condition's literals: None for a literal, else its marker's (index, name).
        self._slots: list[tuple[int | None, str | None] | None] = []
        #: The payload conditions read so far without markers, by their tokens' kinds and values.
        self._conditions: set[tuple[tuple[str, str], ...]] = set()

    # -- references
    def ref(self) -> Ref:
        start = self.peek()
        column = self.name()
        cqltype = self.schema.type_of(column)
        if cqltype is None:
            from cqlsh_ext.common.text import nearest

            near = nearest(column, self.schema.columns)
            raise QueryError(f"unknown column {column}" + (f" (did you mean {near}?)" if near else ""))
        follows = self.peek()
        if follows.kind != "punct" or follows.value not in (".", "["):
            return Column(column)
        access = None
        if cqltype.is_blob or cqltype.is_text:  # a text column's JSON is read as a blob's payload
            pass
        elif map_of_blobs(cqltype):
            if not self.mark("["):
                raise QueryError(f"{column} is a map of blobs: a path starts with {column}['key']")
            self.next()
            key = self.next()
            if key.kind != "string":
                raise QueryError(f"a key of {column} is a quoted string, not {key.describe()}")
            self.expect("]")
            access = key.value
        elif cqltype.kind == UDT:
            self.expect(".")
            access = self.name()
            field_type = cqltype.child(access)
            if field_type is None:
                raise QueryError(f"{column} has no field {access}")
            if not field_type.is_blob:
                text = self.schema.udts[cqltype.name][access]
                raise QueryError(f"{column}.{access} is {text}, not a blob: it has no payload path")
        else:
            raise QueryError(f"{column} is {self.schema.columns[column]}, neither a blob nor text: it has no "
                             "payload path")
        steps: list[Step] = []
        while (follows := self.peek()).kind == "punct" and follows.value in (".", "["):
            self.next()
            if follows.value == ".":
                tok = self.next()
                if tok.kind not in ("word", "qname"):
                    raise QueryError(f"bad path after {column}: a key is a name or \"quoted\", "
                                     f"not {tok.describe()}")
                steps.append(tok.value)  # keys as written, case sensitive
            else:
                tok = self.next()
                if tok.kind != "int" or isinstance(tok.literal, bool):
                    raise QueryError(f"bad path after {column}: an index is [n], not {tok.describe()}")
                steps.append(int(tok.value))
                self.expect("]")
        if not steps and access is None:
            raise QueryError(f"bad path: {column} needs a key or an index")
        return Path(column, access, tuple(steps), self.source(start, self.peek(-1)))

    def source(self, first: Token, last: Token) -> str:
        return self.text[first.start:last.end]

    # -- statement
    def parse(self) -> Plan | None:
        if not self.take("select"):
            return None
        distinct = self.take("distinct")
        items = self.items()
        self.expect("from")
        keyspace, table = None, self.name()
        if self.mark("."):
            self.next()
            keyspace, table = table, self.name()
        ordinary: list[str] = []
        predicates: list[Predicate] = []
        restricted: set[str] = set()
        if self.take("where"):
            self.where(ordinary, predicates, restricted)
        group_by: list[Path] = []
        if self.take("group"):
            self.expect("by")
            group_by = self.group()
        order_by: list[tuple[Ref, bool]] = []
        if self.take("order"):
            self.expect("by")
            order_by = self.order()
        limit = None
        if self.take("limit"):
            tok = self.next()
            if tok.kind != "int" or int(tok.value) <= 0:
                raise QueryError(f"LIMIT takes a positive integer, not {tok.describe()}")
            limit = int(tok.value)
        try:
            allow, confirm = self.statement_end()
        except QueryError as err:  # (a clause after ALLOW FILTERING: its place named)
            late = self.peek().value.upper() if self.peek().kind == "word" else ""
            before = [t.value.lower() for t in self.tokens[:self.pos]]
            if late in ("WHERE", "GROUP", "ORDER", "LIMIT") and "filtering" in before[-2:]:
                raise QueryError(f"{err}: {late} goes before ALLOW FILTERING (SELECT ... {late} ... "
                                 "ALLOW FILTERING)") from None
            raise
        if not _reaches(items, predicates, group_by, order_by) and not self.plain:
            return None
        refs = [i.ref for i in items if i.ref] + [p.ref for p in predicates] + list(group_by)
        refs += [r for r, _ in order_by]
        pk = list(self.schema.partition_key)
        plan = Plan(items, keyspace, table, " AND ".join(ordinary), predicates, group_by,
                    order_by, distinct, limit, allow, confirm,
                    bool(pk) and all(c in restricted for c in pk))
        _check(plan)
        plan.server_statement = _server_statement(plan, self.schema)
        plan.markers = tuple(self.found)
        reached = {r.column for r in refs if isinstance(r, Path) and r.access is not None}
        reached |= {p.ref.column for p in predicates if isinstance(p.ref, Path) and p.ref.access is not None}
        plan.map_columns = frozenset(c for c in reached
                                     if (t := self.schema.type_of(c)) is not None and t.kind == "map")
        return plan

    def items(self) -> list[Item]:
        items: list[Item] = []
        while True:
            start = self.peek()
            if start.value == "*" and start.kind == "punct":
                self.next()
                items.append(Item("star", "*"))
            elif start.kind == "word" and self.mark("(", 1):
                func = self.next().value.lower()
                if func not in FUNCTIONS:
                    raise QueryError(_not_ours(func))
                self.expect("(")
                ref: Ref | None = None
                if self.mark("*"):
                    if func != "count":
                        raise QueryError(f"{func}(*) is not a function: only count(*)")
                    self.next()
                else:
                    ref = self.ref()
                self.expect(")")
                written = self.source(start, self.peek(-1))
                name = COUNT_COLUMN if func == "count" and ref is None else written
                items.append(Item("agg", name, ref, func, written))
            else:
                ref = self.ref()
                kind = "path" if isinstance(ref, Path) else "column"
                items.append(Item(kind, ref.text if isinstance(ref, Path) else ref.name, ref))
            if self.take("as"):
                raise QueryError("AS is not supported in a payload query: columns are named as written")
            if not self.mark(","):
                return items
            self.next()

    def where(self, ordinary: list[str], predicates: list[Predicate], restricted: set[str],
              stops: Sequence[str] = ("group", "order", "limit", "allow", "confirm")) -> None:
        ends = ("and", *stops)
        tokens = self.tokens
        while True:
            # The condition's tokens: up to AND or a stop word outside brackets, `;` or the end (read
            # here token by token, once: a chain of 20,000 conditions is 120,000 tokens).
            start = end = self.pos
            depth = 0
            while True:
                tok = tokens[end]
                kind = tok.kind
                if kind == "end":
                    break
                if kind == "word":
                    word = tok.value.lower()
                    if depth == 0 and word in ends:
                        break
                    if word == "or":
                        raise QueryError("OR is not supported: conditions join by AND only")
                elif kind == "punct":
                    if tok.value == ";":
                        break
                    if tok.value == "(":
                        depth += 1
                    elif tok.value == ")":
                        depth -= 1
                end += 1
            self.pos = end
            if end == start:
                raise QueryError(f"expected a condition at {self.peek().describe()}")
            # A payload condition ANDed with itself is itself: one written again (the same tokens)
            # is read once and evaluated once (a chain of 20,000 `data.a = 1` is one condition). An
            # ordinary condition goes to the server as written, and a marker's value is bound later.
            same = tuple((tok.kind, tok.value) for tok in tokens[start:end])
            if same not in self._conditions:
                before = len(predicates)
                self.condition(start, end, ordinary, predicates, restricted)
                if len(predicates) > before and all(slot is None for slot in self._slots):
                    self._conditions.add(same)
            if not self.take("and"):
                return

    def condition(self, start: int, end: int, ordinary: list[str],
                  predicates: list[Predicate], restricted: set[str]) -> None:
        first = self.tokens[start]
        ctype = self.schema.type_of(first.value.lower() if first.kind == "word" else first.value)
        follows = self.tokens[start + 1] if start + 1 < end else None
        is_path = ctype is not None and follows is not None and follows.kind == "punct" \
            and follows.value in (".", "[")
        bare_like = ctype is not None and ctype.is_blob and follows is not None \
            and follows.kind == "word" and (follows.value.lower() in ("like", "not")
                                            or _is_undecodable(self.tokens[start + 1:end]))
        if not is_path and not bare_like:
            text = self.text[first.start:self.tokens[end - 1].end]
            ordinary.append(text)
            if ctype is not None and follows is not None and (follows.value == "=" or
                                                              follows.value.lower() == "in"):
                restricted.add(first.value.lower() if first.kind == "word" else first.value)
            return
        saved = self.pos
        self.pos = start
        ref = self.ref()
        self._slots = []
        predicates.append(self.operator(ref, bare_like))
        self.found += [Marker(slot_of[0], slot_of[1], len(predicates) - 1, slot)
                       for slot, slot_of in enumerate(self._slots) if slot_of is not None]
        if self.pos != end:
            raise QueryError(f"unexpected {self.peek().describe()} in the condition on {first.value}")
        self.pos = saved

    def operator(self, ref: Ref, bare: bool) -> Predicate:
        tok = self.next()
        op = tok.value.lower()
        if bare and op not in ("like", "is"):
            raise QueryError(f"a bare blob column takes only LIKE and IS [NOT] UNDECODABLE, not "
                             f"{tok.describe()}")
        if tok.kind == "punct" and op in COMPARE:
            return Predicate(ref, op, (self.literal(),))
        if op == "like":
            value = self.literal()
            if not isinstance(value, str) and self._slots[-1] is None:
                raise QueryError("LIKE takes a string")
            return Predicate(ref, "LIKE", (value,))
        if op == "in":
            self.expect("(")
            values = [self.literal()]
            while self.mark(","):
                self.next()
                values.append(self.literal())
            self.expect(")")
            return Predicate(ref, "IN", tuple(values))
        if op == "contains":
            if self.peek().kind == "word" and self.peek().value.lower() == "key":
                raise QueryError(f"CONTAINS KEY is not an operator of payload queries: {_PATH_OPERATORS}")
            return Predicate(ref, "CONTAINS", (self.literal(),))
        if op == "is":
            negate = self.take("not")
            if self.take("undecodable"):
                if isinstance(ref, Path) and ref.steps:
                    raise QueryError(f"IS UNDECODABLE is said of a blob ({ref.column}), not of a path "
                                     f"inside it ({ref.text})")
                return Predicate(ref, "IS NOT UNDECODABLE" if negate else "IS UNDECODABLE")
            self.expect("null")
            return Predicate(ref, "IS NOT NULL" if negate else "IS NULL")
        raise QueryError(f"{tok.describe()} is not an operator of payload queries: {_PATH_OPERATORS}")

    def literal(self) -> Literal:
        marker = self._marker()
        self._slots.append(marker)
        if marker is not None:
            return None  # bound later (bind): its value is a parameter's
        tok = self.next()
        if tok.kind == "string":
            return tok.literal
        if tok.kind in ("int", "decimal"):
            return _number(tok)
        if tok.kind == "punct" and tok.value == "-" and self.peek().kind in ("int", "decimal"):
            value = _number(self.next())
            # Decimal's minus rounds to its context (and overflows past its exponents): copy_negate does not
            return -value if isinstance(value, int) else value.copy_negate()
        if tok.kind == "word" and tok.value.lower() in ("true", "false", "null"):
            return {"true": True, "false": False, "null": None}[tok.value.lower()]
        raise QueryError(f"expected a literal at {tok.describe()}")

    def _marker(self) -> tuple[int | None, str | None] | None:
        """A bind marker where a literal is (`?` or `:name`), read: (its index among the
        statement's `?`, its name); None when the next token is no marker. A marker where markers
        are not taken is an error saying where they are."""
        return read_marker(self, self.markers)


    def group(self) -> list[Path]:
        paths: list[Path] = []
        while True:
            ref = self.ref()
            if not isinstance(ref, Path):
                raise QueryError(f"GROUP BY {ref.name}: here GROUP BY takes paths only")
            paths.append(ref)
            if not self.mark(","):
                return paths
            self.next()

    def order(self) -> list[tuple[Ref, bool]]:
        keys: list[tuple[Ref, bool]] = []
        while True:
            ref = self.ref()
            desc = self.take("desc")
            if not desc:
                self.take("asc")
            keys.append((ref, desc))
            if not self.mark(","):
                return keys
            self.next()


def _is_undecodable(tokens: Sequence[Token]) -> bool:
    """IS [NOT] UNDECODABLE: the condition of a blob itself (a word CQL does not know there)."""
    words = [t.value.lower() if t.kind == "word" else "" for t in tokens]
    return words in (["is", "undecodable"], ["is", "not", "undecodable"])


def _name(ref: Ref | None) -> str:
    return "" if ref is None else ref.text if isinstance(ref, Path) else ref.name


def _check(plan: Plan) -> None:
    aggs = [i for i in plan.items if i.kind == "agg"]
    plain = [i for i in plan.items if i.kind != "agg"]
    if aggs and plain:
        if not plan.group_by:
            raise QueryError(f"{plain[0].name} with an aggregate needs GROUP BY {plain[0].name}")
        grouped = {p.text for p in plan.group_by}
        for item in plain:
            if item.kind == "star" or item.name not in grouped:
                raise QueryError(f"{item.name} is neither aggregated nor in the GROUP BY")
    if plan.group_by and not aggs:
        raise QueryError("GROUP BY needs an aggregate (count, min, max, sum, avg)")
    if plan.distinct and aggs:
        raise QueryError("DISTINCT and aggregates cannot be mixed")
    if plan.reads_beyond_partitions and not plan.allow_filtering:
        raise QueryError("this reads rows beyond the partitions the WHERE clause names and keeps the "
                         "matching ones in the shell, which can take long on a big table: add ALLOW "
                         "FILTERING to run it anyway")
    if plan.confirm and not plan.allow_filtering:
        raise QueryError("CONFIRM comes after ALLOW FILTERING")


#: What a refused operator's message names instead.
_PATH_OPERATORS = "a path takes =, !=, <, <=, >, >=, IN (...), LIKE, CONTAINS, IS [NOT] NULL (HELP QUERIES)"

_PLAIN_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def spell_key(key: str) -> str:
    """A key as a path step writes it: plain when an identifier, else double-quoted (keys are
    case sensitive, so a capital needs no quotes)."""
    return key if _PLAIN_KEY.fullmatch(key) else '"' + key.replace('"', '""') + '"'


def quote(name: str) -> str:
    if re.fullmatch(r"[a-z][a-z0-9_]*", name):
        return name
    return '"' + name.replace('"', '""') + '"'


def _server_statement(plan: Plan, schema: Schema) -> str:
    text = server_select(plan, schema)
    if plan.server_where:
        text += f" WHERE {plan.server_where}"
    if plan.limit is not None and not plan.local_rows:
        text += f" LIMIT {plan.limit}"
    if plan.allow_filtering:
        text += " ALLOW FILTERING"
    return text


def columns_read(plan: Plan, schema: Schema) -> list[str] | None:
    """The columns the plan reads, in the order it names them; None: every one (`*`)."""
    if any(i.kind == "star" for i in plan.items):
        return None
    refs = [i.ref for i in plan.items] + [p.ref for p in plan.predicates]
    refs += list(plan.group_by) + [r for r, _ in plan.order_by]
    needed = [ref.column if isinstance(ref, Path) else ref.name for ref in refs if ref is not None]
    # count(*) alone: the partition key is the smallest thing to read
    return list(dict.fromkeys(needed)) or list(schema.partition_key) or [next(iter(schema.columns))]


def server_select(plan: Plan, schema: Schema) -> str:
    """`SELECT <the columns the plan reads> FROM <table>`: the server's statement before its WHERE."""
    needed = columns_read(plan, schema)
    columns = "*" if needed is None else ", ".join(quote(c) for c in needed)
    table = (quote(plan.keyspace) + "." if plan.keyspace else "") + quote(plan.table)
    return f"SELECT {columns} FROM {table}"


def read_marker(cursor: Cursor, taken: bool = True) -> tuple[int | None, str | None] | None:
    """A bind marker at the cursor where a literal is (`?` or `:name`: a program's parameter), read:
    (its index among the statement's `?`, 0 first; its name, as CQL reads a name); None when the
    next token is no marker. A marker where markers are not `taken` is a QueryError saying where
    they are."""
    tok = cursor.peek()
    if tok.kind != "punct" or tok.value not in ("?", ":"):  # a literal, as most are: no marker
        return None
    named = cursor.mark(":") and cursor.peek(1).kind in ("word", "qname") and cursor.peek(1).start == tok.end
    if not (cursor.mark("?") or named):
        return None
    if not taken:
        raise QueryError(f"a bind marker ({tok.value}) stands for a program's parameter "
                         "(db.query(statement, params)), not here")
    cursor.next()
    if not named:
        return cursor.questions_before(cursor.pos - 1), None
    name = cursor.next()
    return None, name.value.lower() if name.kind == "word" else name.value


@dataclass(frozen=True)
class Where:
    """A WHERE as the payload-query parser reads it: the ordinary conditions (sent to the server
    as written), the payload conditions (evaluated here), the columns restricted by = or IN, and
    its text as written."""

    ordinary: tuple[str, ...] = ()
    predicates: tuple[Predicate, ...] = ()
    restricted: frozenset[str] = frozenset()
    text: str = ""
    #: The payload conditions' literals that are bind markers (where_at(..., markers=True)):
    #: `bind_where` gives them their values.
    markers: tuple[Marker, ...] = ()


def where_at(statement: Lexed, pos: int, schema: Schema, stops: Sequence[str],
             markers: bool = False) -> tuple[Where, int]:
    """The conditions of a WHERE whose first condition is token `pos` of `statement`, up to the first
    word of `stops` (or `;`, or the end) outside parentheses: the Where and the position after it.
    Statements of their own (an edit, COMPRESSION REWRITE) read their WHERE with it. `markers`: a
    payload condition's literal may be a bind marker (Where.markers), as parse() takes it. QueryError."""
    parser = _Parser(statement, schema, markers=markers)
    parser.pos = pos
    ordinary: list[str] = []
    predicates: list[Predicate] = []
    restricted: set[str] = set()
    parser.where(ordinary, predicates, restricted, tuple(stops))
    first, last = statement.tokens[pos], statement.tokens[max(pos, parser.pos - 1)]
    return Where(tuple(ordinary), tuple(predicates), frozenset(restricted),
                 statement.text[first.start:last.end], tuple(parser.found)), parser.pos


def reading(keyspace: str, table: str, columns: Sequence[str], where: Where, schema: Schema,
            allow_filtering: bool, confirm: bool, extra: Sequence[tuple[str, str]] = ()) -> Plan:
    """The plan that reads `columns` (plain columns, in this order) of the rows `where` finds, made
    without a statement's text: `extra` adds selectors the server computes, (expression, alias)
    (`WRITETIME(data)`, ...), each a column of the answer named by its alias. QueryError."""
    items = [Item("column", name, Column(name)) for name in [*columns, *(alias for _, alias in extra)]]
    pk = list(schema.partition_key)
    plan = Plan(items, keyspace, table, " AND ".join(where.ordinary), list(where.predicates), [], [], False,
                None, allow_filtering, confirm, bool(pk) and all(c in where.restricted for c in pk),
                markers=where.markers)
    _check(plan)
    text = selection(keyspace, table, columns, extra)
    if plan.server_where:
        text += f" WHERE {plan.server_where}"
    plan.server_statement = text + (" ALLOW FILTERING" if allow_filtering else "")
    reached = {p.ref.column for p in where.predicates if isinstance(p.ref, Path) and p.ref.access is not None}
    plan.map_columns = frozenset(c for c in reached
                                 if (t := schema.type_of(c)) is not None and t.kind == "map")
    return plan


def selection(keyspace: str, table: str, columns: Sequence[str],
              extra: Sequence[tuple[str, str]] = ()) -> str:
    """`SELECT <columns>, <expression> AS <alias> ... FROM ks.t`: what `reading` sends before its WHERE."""
    selectors = [quote(c) for c in columns]
    selectors += [f"{expression} AS {quote(alias)}" for expression, alias in extra]
    return f"SELECT {', '.join(selectors)} FROM {quote(keyspace)}.{quote(table)}"


def reaches_payload(plan: Plan) -> bool:
    """Whether a plan (of parse(..., plain=True)) is a payload query's, the plan parse() without
    `plain` gives: a path, or a payload condition, in it. A plan without either is a plain SELECT,
    which the server answers as written."""
    return _reaches(plan.items, plan.predicates, plan.group_by, plan.order_by)


def _reaches(items: list[Item], predicates: list[Predicate], group_by: list[Path],
             order_by: list[tuple[Ref, bool]]) -> bool:
    refs = [i.ref for i in items if i.ref] + [p.ref for p in predicates] + list(group_by)
    refs += [r for r, _ in order_by]
    return bool(predicates) or any(isinstance(r, Path) for r in refs)


def parse(statement: Lexed | str, schema: Schema, plain: bool = False, markers: bool = False) -> Plan | None:
    """The plan of the statement (its tokens, lexed once: cqlsh_ext.cql.lexer.Lexed; a text is
    lexed here), or None when it is not a payload query (no path, no payload condition, or not a
    SELECT): the caller passes it to cqlsh unchanged. `plain`: a SELECT of columns only has a plan
    too (COPY (SELECT ...) TO exports it: cqlsh_ext.export). `markers`: a payload condition's
    literal may be a bind marker, `?` or `:name` (Plan.markers; `bind` gives their values); the
    ordinary conditions' markers stay in the server's statement as written. Raises QueryError."""
    return _Parser(lexed(statement), schema, plain, markers).parse()


def _number(tok: Token) -> int | Decimal:
    """A number token's value, exact (payload.numbers: at most INTEGER_DIGITS digits, any exponent);
    QueryError saying so for a longer one."""
    from cqlsh_ext.payload import numbers

    try:
        if tok.kind == "int":  # past Python's int-string limit the lexer leaves it unread
            return numbers.integer_of(tok.value)
    except ValueError as err:
        raise QueryError(str(err)) from None
    value = tok.literal
    if value is None:  # an exponent no decimal holds: the lexer leaves it unread
        raise QueryError(numbers.exponent_refusal(tok.value))
    assert isinstance(value, Decimal)
    refused = numbers.too_long(value)
    if refused is not None:
        raise QueryError(refused)
    return value


#: What a payload condition's parameter may be: JSON's scalars (a float is taken as the decimal
#: it prints as, so it compares as the same number written in the statement would).
PARAMETER_TYPES = "a str, an int, a float, a Decimal, a bool or None"


def literal_of(value: object, op: str) -> Literal:
    """A parameter's value as a payload condition's literal, typed by what it compares: a path's
    JSON value (a str, a number, a bool, null), a LIKE's pattern (a str). QueryError saying what
    it takes."""
    from cqlsh_ext.common.jsonenc import float_name

    if op == "LIKE":
        if not isinstance(value, str):
            raise QueryError(f"LIKE takes a str, not {type(value).__name__}")
        return value
    if value is None or isinstance(value, (str, bool, int, Decimal)):
        if isinstance(value, Decimal) and not value.is_finite():
            raise QueryError(f"a payload condition compares with a finite number, not {value}")
        if isinstance(value, (int, Decimal)) and not isinstance(value, bool):
            from cqlsh_ext.payload.numbers import too_long

            refused = too_long(value)
            if refused is not None:
                raise QueryError(refused)
        return value
    if isinstance(value, float):
        if float_name(value) is not None:  # NaN, Infinity: named, not numbers
            raise QueryError(f"a payload condition compares with a finite number, not {value!r}")
        return Decimal(repr(value))
    raise QueryError(f"a payload condition compares with {PARAMETER_TYPES}, not {type(value).__name__}")


def bind(plan: Plan, values: Mapping[Marker, object]) -> Plan:
    """The plan with each marker's literal given its value (`values`: each of plan.markers' value;
    literal_of types it). Raises QueryError naming the marker whose value does not fit."""
    from dataclasses import replace

    return replace(plan, predicates=_bound(plan.predicates, plan.markers, values), markers=())


def bind_where(where: Where, values: Mapping[Marker, object]) -> Where:
    """A WHERE (where_at's) with each of its markers' literals given its value, as `bind` gives a
    plan's. QueryError."""
    from dataclasses import replace

    return replace(where, predicates=tuple(_bound(where.predicates, where.markers, values)), markers=())


def _bound(given: Sequence[Predicate], markers: Sequence[Marker],
           values: Mapping[Marker, object]) -> list[Predicate]:
    """The conditions with each marker's literal given its value (literal_of types it)."""
    predicates = list(given)
    # Each condition's values copied once, however many markers it holds (an IN list of 20,000:
    # copied at each marker, they took seconds).
    slots: dict[int, list[Literal]] = {}
    for marker in markers:
        pred = predicates[marker.predicate]
        try:
            literal = literal_of(values[marker], pred.op)
        except QueryError as err:
            name = _name(pred.ref)
            raise QueryError(f"{marker.spelt} ({name} {pred.op}): {err}") from None
        slots.setdefault(marker.predicate, list(pred.values))[marker.slot] = literal
    for at, filled in slots.items():
        pred = predicates[at]
        predicates[at] = Predicate(pred.ref, pred.op, tuple(filled))
    return predicates


#: CQL's functions of a row's cells and keys, which the server computes (a payload query computes
#: only FUNCTIONS): asked in a statement of their own, without payload paths, they are the server's.
SERVER_FUNCTIONS = frozenset({"writetime", "maxwritetime", "ttl", "token", "tojson", "cast", "todate",
                              "totimestamp", "tounixtimestamp", "dateof", "unixtimestampof"})


def _not_ours(func: str) -> str:
    """The one line for a function a payload query does not compute, with the way to what was meant."""
    from cqlsh_ext.common.text import nearest

    ours = ", ".join(FUNCTIONS)
    if func in SERVER_FUNCTIONS:
        return (f"{func}() is the server's, and a payload query computes only {ours}: ask it in a "
                f"statement of its own without payload paths (SELECT id, {func}(data) FROM ... WHERE "
                "...), which the server answers")
    near = nearest(func, FUNCTIONS)
    meant = f" (did you mean {near}?)" if near else ""
    return f"unknown function {func}{meant}: here only {ours}"
