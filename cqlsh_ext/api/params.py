"""A program's parameters (docs/api.md, "Parameters"): `?` (positional) and `:name` (named) markers
in a statement, bound through the driver's prepared statements, each statement text prepared once
per connection (`Prepared`); the markers of a payload condition bound into the plan's literals
(query.grammar.bind). Values are checked against the CQL type the server says each marker has
(`fits`) before the driver serializes them: a value of the wrong type, or a wrong number of them,
is one cqlsh_ext.Error line, and nothing is sent. A value is never spelt into the statement's
text: an injection attempt stays a value.

    bound = bind_statement(prepared, lexed, plan, params)   # Bound: the plan, the server's values
    bound.binder                                            # reading's Binder: (text, %s args) -> statement
"""

from __future__ import annotations

import datetime
import ipaddress
import uuid
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from typing import TYPE_CHECKING, Any

from cqlsh_ext.api.errors import Error, one_line

if TYPE_CHECKING:
    from cqlsh_ext.cql.lexer import Lexed
    from cqlsh_ext.cql.types import CqlType
    from cqlsh_ext.query.grammar import Plan

__all__ = ["Bound", "Params", "Prepared", "bind_statement", "markers_of"]

#: What `params` may be: values in the order of the statement's `?` markers, or by `:name`.
Params = Sequence[object] | Mapping[str, object] | None

#: A marker a statement's reader takes itself (query.grammar.Marker, edit.parse.ValueMarker): the
#: `index`-th `?` of the statement (0 first), or the `name`.
Taken = Any

#: Statement texts a connection keeps prepared (the oldest forgotten first).
PREPARED_KEPT = 512


class Prepared:
    """The driver's prepared statements of one session, by statement text (prepared on first use).
    Raises Error with the server's line when the server refuses one."""

    def __init__(self, session: Any) -> None:
        self.session = session
        self._kept: OrderedDict[str, Any] = OrderedDict()

    def __call__(self, text: str) -> Any:
        found = self._kept.get(text)
        if found is not None:
            self._kept.move_to_end(text)
            return found
        try:
            found = self.session.prepare(text)
        except Exception as err:
            raise Error(one_line(err)) from None
        self._kept[text] = found
        while len(self._kept) > PREPARED_KEPT:
            self._kept.popitem(last=False)
        return found


def markers_of(statement: Lexed) -> tuple[int, list[str]]:
    """The statement's bind markers: how many `?`, and the `:name`s in order (as CQL reads a name:
    lower case unless quoted). A `:` is a marker's when a name follows it with no space."""
    tokens = statement.tokens
    positional = 0
    names: list[str] = []
    for i, tok in enumerate(tokens):
        if tok.kind != "punct":
            continue
        if tok.value == "?":
            positional += 1
        elif tok.value == ":" and i + 1 < len(tokens) and tokens[i + 1].kind in ("word", "qname") \
                and tokens[i + 1].start == tok.end and (i == 0 or tokens[i - 1].kind not in ("word", "qname")
                                                        or tokens[i - 1].value.lower() in _BEFORE_A_MARKER):
            after = tokens[i + 1]
            names.append(after.value.lower() if after.kind == "word" else after.value)
    return positional, names


#: Words a `:name` marker may follow (elsewhere a name before `:` is a UDT literal's field).
_BEFORE_A_MARKER = frozenset({"in", "contains", "key", "like", "limit", "ttl", "timestamp", "and", "where",
                              "set", "values", "using", "by"})


@dataclass(frozen=True)
class Bound:
    """A statement's parameters bound: the plan with its payload conditions' literals given their
    values (None: a statement the server answers as written), and the values of the server's
    statement's markers (None: it has none), bound into each statement the reading sends
    (`binder`)."""

    plan: Plan | None
    server: list[object] | dict[str, object] | None
    prepared: Prepared
    #: The values of the markers the caller binds itself (bind_statement's `taken`), by marker.
    taken: dict[Any, object] = field(default_factory=dict)

    def binder(self) -> Callable[[str, tuple[Any, ...] | None], Any] | None:
        """The reading's Binder (scanning.scan.Binder): a text, its token range's %s arguments
        formatted in (numbers), prepared, the server's values bound; None without values."""
        server = self.server
        if server is None:
            return None
        prepared = self.prepared

        def bind(text: str, args: tuple[Any, ...] | None) -> Any:
            if args is not None:  # a token range's bounds: integers this module made, as CQL spells them
                text = text % tuple(int(a) for a in args)
            return prepared(text).bind(server)

        return bind


def bind_statement(prepared: Prepared, statement: Lexed, server_text: str | None, plan: Plan | None,
                   params: Params, taken: Sequence[Taken] = ()) -> Bound:
    """`params` checked against the statement's markers and bound: a payload condition's into the
    plan's literals, those the caller reads itself (`taken`: an edit's values and conditions)
    handed back by marker (Bound.taken), the others into the server's statement (`server_text`:
    the plan's server statement, or the statement itself; None: nothing is sent as written). Error
    (one line, nothing sent) for a wrong number of values, a name missing or unknown, a wrong type."""
    from cqlsh_ext.cql.errors import QueryError
    from cqlsh_ext.cql.lexer import Lexed
    from cqlsh_ext.query.grammar import bind

    try:
        positional, names = markers_of(statement)
    except QueryError as err:  # CQL this lexer does not read: the server's, as written, without values
        if params is None:
            return Bound(plan, None, prepared)
        raise Error(f"params are bound to markers, and this statement does not lex here: {err}") from None
    if params is None:
        params = ()
    if isinstance(params, (str, bytes, bytearray)) or not isinstance(params, (Sequence, Mapping)):
        raise Error(f"params are a list of values (for ? markers) or a dict (for :name markers), not "
                    f"{type(params).__name__}")
    if positional and names:
        raise Error("the statement mixes ? and :name markers: use one kind")
    payload: list[Taken] = [*(plan.markers if plan is not None else ()), *taken]
    server: list[object] | dict[str, object]
    labels: list[int] | None = None
    if isinstance(params, Mapping):
        if positional:
            raise Error(f"the statement's markers are ? ({positional}): give their values as a list, "
                        "in their order")
        by_name: dict[str, object] = {}
        for key, value in params.items():
            name = str(key) if str(key) in names else str(key).lower()
            if name not in names:
                known = ", ".join(":" + n for n in dict.fromkeys(names)) or "none"
                raise Error(f"no marker :{key} in the statement (its markers: {known})")
            by_name[name] = value
        missing = [n for n in dict.fromkeys(names) if n not in by_name]
        if missing:
            raise Error(f"no value for :{missing[0]} in params")
        payload_values = {m: by_name[str(m.name)] for m in payload}
        server = by_name
    else:
        values = list(params)
        if names:
            raise Error(f"the statement's markers are named (:{names[0]}): give their values as a dict")
        if len(values) != positional:
            raise Error(f"the statement has {_count(positional, 'marker')} (?), "
                        f"{_count(len(values), 'value')} given")
        payload_values = {m: values[m.index or 0] for m in payload}
        read_here = {m.index for m in payload}
        labels = [i for i in range(positional) if i not in read_here]
        server = [values[i] for i in labels]
    if plan is not None and plan.markers:
        try:
            plan = bind(plan, {m: payload_values[m] for m in plan.markers})
        except QueryError as err:
            raise Error(str(err)) from None
    own = {m: payload_values[m] for m in taken}
    if server_text is None or markers_of(Lexed(server_text)) == (0, []):
        return Bound(plan, None, prepared, own)
    found = prepared(server_text)
    metadata = list(found.column_metadata)
    if isinstance(server, dict):  # the server's own names (a name may be a payload marker's alone)
        server = {meta.name: server[meta.name] for meta in metadata if meta.name in server}
        if len(server) != len({meta.name for meta in metadata}):
            raise Error(f"the server's statement has markers params does not name: {server_text}")
    elif len(metadata) != len(server):
        raise Error(f"the server reads {_count(len(metadata), 'marker')} in the statement, "
                    f"{_count(len(server), 'value')} left for it")
    return Bound(plan, _checked(found, server, labels), prepared, own)


def _count(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def _checked(found: Any, server: list[object] | dict[str, object],
             labels: list[int] | None) -> list[object] | dict[str, object]:
    """Each server value against its marker's CQL type (fits), as the driver binds it (a UDT
    given as a dict: its fields in order), then serialized by the driver (its ranges: an int past
    32 bits for an int): the values to bind. Error naming the parameter."""
    from cqlsh_ext.cql.types import from_driver

    metadata = list(found.column_metadata)
    bound: list[object] = []
    for at, meta in enumerate(metadata):
        value = server[meta.name] if isinstance(server, dict) else server[at]
        cqltype = from_driver(meta.type)
        label = f":{meta.name}" if labels is None else f"parameter {labels[at] + 1} ({meta.name})"
        why = fits(cqltype, value)
        if why is not None:
            raise Error(f"{label} is {cqltype}: {why}")
        value = _as_driver_takes(cqltype, value)
        try:
            if value is not None and not _unset(value):
                meta.type.serialize(value, found.protocol_version)
        except Exception as err:
            raise Error(f"{label} is {cqltype}: {_brief(value)} does not fit it ({one_line(err)})") from None
        bound.append(value)
    if isinstance(server, dict):
        return {meta.name: value for meta, value in zip(metadata, bound, strict=True)}
    return bound


def _as_driver_takes(cqltype: CqlType, value: object) -> object:
    """A value as the driver serializes it: a UDT given as a dict becomes its fields' values in
    order (the driver takes a tuple or an object with the fields), wherever it sits."""
    kind = cqltype.kind
    if value is None or cqltype.scalar:
        return value
    if kind == "udt" and isinstance(value, Mapping):
        return tuple(_as_driver_takes(sub, value.get(name))
                     for name, sub in zip(cqltype.fields or (), cqltype.params, strict=False))
    if kind in ("list", "vector") and isinstance(value, (list, tuple)):
        return [_as_driver_takes(cqltype.params[0], v) for v in value]
    if kind == "tuple" and isinstance(value, (list, tuple)):
        return tuple(_as_driver_takes(sub, v) for sub, v in zip(cqltype.params, value, strict=False))
    if kind == "map" and isinstance(value, Mapping):
        return {_as_driver_takes(cqltype.params[0], k): _as_driver_takes(cqltype.params[1], v)
                for k, v in value.items()}
    return value


def _unset(value: object) -> bool:
    from cassandra.query import UNSET_VALUE

    return value is UNSET_VALUE


#: The Python values each native CQL type takes (what the driver reads them from), and how a
#: message names them. An int is no bool, and a bool no int, whatever Python says.
_TAKES: dict[str, tuple[tuple[type, ...], str]] = {
    "ascii": ((str,), "a str"),
    "text": ((str,), "a str"),
    "int": ((int,), "an int"),
    "bigint": ((int,), "an int"),
    "smallint": ((int,), "an int"),
    "tinyint": ((int,), "an int"),
    "varint": ((int,), "an int"),
    "counter": ((int,), "an int"),
    "float": ((float, int), "a float or an int"),
    "double": ((float, int), "a float or an int"),
    "decimal": ((Decimal, int, float), "a Decimal, an int or a float"),
    "boolean": ((bool,), "a bool"),
    "blob": ((bytes, bytearray, memoryview), "bytes"),
    "uuid": ((uuid.UUID,), "a uuid.UUID"),
    "timeuuid": ((uuid.UUID,), "a uuid.UUID"),
    "timestamp": ((datetime.datetime, datetime.date, int), "a datetime, a date or an int (ms since 1970)"),
    "date": ((datetime.date, int, str), "a date, an int (days from 1970) or its ISO text"),
    "time": ((datetime.time, int, str), "a time, an int (ns since midnight) or its ISO text"),
    "inet": ((str, ipaddress.IPv4Address, ipaddress.IPv6Address), "an address's text"),
    "duration": ((), "a cassandra.util.Duration"),
}


def fits(cqltype: CqlType, value: object) -> str | None:
    """Why `value` cannot be a value of `cqltype` (None: it can, as far as its type goes; the
    driver checks ranges): a str for an int, an int for a bool, a list's item of the wrong type..."""
    if value is None or _unset(value):
        return None
    kind = cqltype.kind
    if kind == "native":
        takes, words = _TAKES.get(cqltype.name, ((object,), ""))
        if cqltype.name == "duration":
            from cassandra.util import Duration

            takes = (Duration,)
        elif cqltype.name in ("date", "time"):
            from cassandra.util import Date, Time

            takes = (*takes, Date if cqltype.name == "date" else Time)
        wrong_bool = isinstance(value, bool) and cqltype.name != "boolean"
        if wrong_bool or not isinstance(value, takes) or (cqltype.name == "time" and
                                                         isinstance(value, datetime.datetime)):
            return f"it takes {words}, not {_brief(value)}"
        return None
    if kind in ("list", "set", "vector"):
        if not isinstance(value, (list, tuple, set, frozenset)):
            return f"it takes a list, not {_brief(value)}"
        if kind == "vector" and cqltype.size is not None and len(value) != cqltype.size:
            return f"it takes {cqltype.size} items, not {len(value)}"
        for i, item in enumerate(value):
            why = fits(cqltype.params[0], item) if cqltype.params else None
            if why is not None:
                return f"item {i + 1}: {why}"
        return None
    if kind == "map":
        if not isinstance(value, Mapping):
            return f"it takes a dict, not {_brief(value)}"
        for key, item in value.items():
            why = fits(cqltype.params[0], key) or fits(cqltype.params[1], item)
            if why is not None:
                return f"at key {key!r}: {why}"
        return None
    if kind == "tuple":
        if not isinstance(value, (tuple, list)) or len(value) != len(cqltype.params):
            return f"it takes a tuple of {len(cqltype.params)}, not {_brief(value)}"
        for i, (sub, item) in enumerate(zip(cqltype.params, value, strict=True)):
            why = fits(sub, item)
            if why is not None:
                return f"item {i + 1}: {why}"
        return None
    if kind == "udt":
        fields = dict(zip(cqltype.fields or (), cqltype.params, strict=False))
        if isinstance(value, Mapping):
            unknown = [k for k in value if k not in fields]
            if unknown:
                return f"{cqltype.name} has no field {unknown[0]}"
            items = dict(value)
        else:
            items = {name: getattr(value, name) for name in fields if hasattr(value, name)}
            if not items:
                return f"it takes a dict of {cqltype.name}'s fields, not {_brief(value)}"
        for name, item in items.items():
            why = fits(fields[name], item)
            if why is not None:
                return f"field {name}: {why}"
        return None
    return None  # a custom type: the driver's


def _brief(value: object) -> str:
    text = repr(value)
    return f"{type(value).__name__} {text if len(text) <= 40 else text[:39] + '…'}"
