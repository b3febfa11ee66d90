"""DESCRIBE for servers reporting release 3.x (Amazon Keyspaces reports 3.11.2), client-side.

Since 4.0 DESCRIBE runs on the server, so cqlsh 6.x only prints a warning against a 3.x server.
Here the same statements are answered from the driver's schema metadata (keyspaces, tables,
types, indexes, materialized views, functions, aggregates): `described(cluster, keyspace,
request)` gives what to print, and the shell (ExtShell.do_describe) prints it with cqlsh's own
describe_* printers, so the output looks like cqlsh's against a 4.0+ server.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from cqlsh_ext.cql.system import is_system_keyspace  # not shown by DESCRIBE SCHEMA (FULL SCHEMA shows them)

#: Whether a read-only policy hides keyspace.name (name None: the keyspace whole).
Hidden = Callable[[str, str | None], bool]

if TYPE_CHECKING:
    from cqlsh_ext.upstream.protocol import Parsed

#: The names a DESCRIBE may give, as cqlsh's grammar binds them.
_BINDINGS = ("ksname", "cfname", "utname", "mvname", "idxname", "udfname", "udaname")


@dataclass(frozen=True)
class DescribeRequest:
    """One DESCRIBE: its words after DESCRIBE (lower case), and the names it gives (keyspace,
    table, type, ..., by cqlsh's binding names), as the schema spells them."""

    words: tuple[str, ...]
    names: Mapping[str, str]

    def name(self, binding: str) -> str | None:
        return self.names.get(binding)


def describe_request(parsed: Parsed, unquote: Callable[[str], str]) -> DescribeRequest:
    """The request of a DESCRIBE cqlsh parsed; `unquote` reads a name as cqlsh does (the shell's
    cql_unprotect_name)."""
    names = {}
    for binding in _BINDINGS:
        value = parsed.get_binding(binding, None)
        if value is not None:
            names[binding] = unquote(value)
    return DescribeRequest(tuple(token[1].lower() for token in parsed.matched[1:]), names)


class KeyspacesDescribeError(Exception):
    """str() is the error line cqlsh prints."""


def _keyspace(metadata: Any, current: str | None, name: str | None) -> Any:
    name = name or current
    if name is None:
        raise KeyspacesDescribeError("Not in any keyspace.")
    keyspaces = metadata.keyspaces
    if name not in keyspaces:
        raise KeyspacesDescribeError(f"'{name}' not found in keyspaces")
    return keyspaces[name]


def _lookup(metadata: Any, current: str | None, request: DescribeRequest, attribute: str,
            binding: str) -> Any:
    keyspace = _keyspace(metadata, current, request.name("ksname"))
    name = request.name(binding)
    found = getattr(keyspace, attribute).get(name)
    if found is None:
        raise KeyspacesDescribeError(f"'{name}' not found in keyspace '{keyspace.name}'")
    return found


def _index(keyspace: Any, name: str) -> Any:
    for table in keyspace.tables.values():
        if name in table.indexes:
            return table.indexes[name]
    return None


def _routines(keyspace: Any, attribute: str, name: str) -> list[Any]:
    routines = getattr(keyspace, attribute).values()
    return sorted((r for r in routines if r.name == name), key=lambda r: r.signature)


def _names(metadata: Any, current: str | None, attribute: str, sort_key: Any = None) -> list[dict[str, str]]:
    keyspaces = metadata.keyspaces
    selected = [current] if current else sorted(keyspaces)
    rows = []
    for ks_name in selected:
        if ks_name not in keyspaces:
            continue
        items = getattr(keyspaces[ks_name], attribute).values()
        for item in sorted(items, key=sort_key or (lambda i: i.name)):
            rows.append({"keyspace_name": ks_name, "name": item.name})
    return rows


def described(cluster: Any, current: str | None, request: DescribeRequest,
              hidden: Hidden | None = None) -> tuple[str, Any]:
    """('keyspaces' | 'list' | 'elements' | 'cluster', rows) for one DESCRIBE, from the driver's
    schema (`cluster`'s metadata, refreshed first), `current` the keyspace in use; `hidden`: what a
    read-only policy hides (agent.read_only.ReadOnly.hidden_in), left out of every list and
    keyspace. KeyspacesDescribeError: the line cqlsh prints."""
    try:
        cluster.refresh_schema_metadata(max_schema_agreement_wait=0)
    except Exception:  # noqa: BLE001 -- stale metadata is better than none; the driver logs why
        pass
    return statements(cluster.metadata, current, request, hidden)


def statements(meta: Any, current: str | None, request: DescribeRequest,
               hidden: Hidden | None = None) -> tuple[str, Any]:
    """('keyspaces' | 'list' | 'elements' | 'cluster', rows) for one DESCRIBE, from `meta` (the
    driver's cluster metadata), without what `hidden` hides."""
    words = request.words
    what = words[0] if words else ""
    if what == "keyspaces":
        return "keyspaces", [{"name": name} for name in sorted(meta.keyspaces)
                             if hidden is None or not hidden(name, None)]
    if what in ("tables", "columnfamilies"):
        return "list", [row for row in _names(meta, current, "tables")
                        if hidden is None or not hidden(row["keyspace_name"], row["name"])]
    if what == "types":
        return "list", _names(meta, current, "user_types")
    if what == "functions":
        return "list", _names(meta, current, "functions", lambda f: f.signature)
    if what == "aggregates":
        return "list", _names(meta, current, "aggregates", lambda a: a.signature)
    if what == "cluster":
        return "cluster", [{"cluster": meta.cluster_name, "partitioner": meta.partitioner,
                            "snitch": "(not known client-side)"}]
    if what in ("full", "schema"):
        full = what == "full"
        return "elements", [keyspace_cql(meta.keyspaces[name], hidden) for name in sorted(meta.keyspaces)
                            if (full or not is_system_keyspace(name))
                            and (hidden is None or not hidden(name, None))]
    if what in ("keyspace", "only"):
        keyspace = _keyspace(meta, current, request.name("ksname"))
        if what == "only":
            return "elements", [keyspace.as_cql_query() + ";"]
        return "elements", [keyspace_cql(keyspace, hidden)]
    if what in ("table", "columnfamily"):
        return "elements", [_lookup(meta, current, request, "tables", "cfname").export_as_string()]
    if what == "type":
        return "elements", [_lookup(meta, current, request, "user_types", "utname").export_as_string()]
    if what == "materialized":
        return "elements", [_lookup(meta, current, request, "views", "mvname").export_as_string()]
    if what == "index":
        keyspace = _keyspace(meta, current, request.name("ksname"))
        name = request.name("idxname") or ""
        index = _index(keyspace, name)
        if index is None:
            raise KeyspacesDescribeError(f"'{name}' not found in keyspace '{keyspace.name}'")
        return "elements", [index.export_as_string()]
    if what in ("function", "aggregate"):
        attribute, binding = ("functions", "udfname") if what == "function" else ("aggregates", "udaname")
        keyspace = _keyspace(meta, current, request.name("ksname"))
        name = request.name(binding) or ""
        found = _routines(keyspace, attribute, name)
        if not found:
            raise KeyspacesDescribeError(f"'{name}' not found in keyspace '{keyspace.name}'")
        return "elements", [routine.export_as_string() for routine in found]
    return "elements", [_generic(meta, current, request, hidden)]


def keyspace_cql(keyspace: Any, hidden: Hidden | None) -> str:
    """The CQL that makes the keyspace (the driver's KeyspaceMetadata) and what it holds, as the
    driver writes it, without the tables `hidden` hides (each table's CQL holds its indexes and
    views, a hidden table's with it)."""
    tables, whole = keyspace.tables, str(keyspace.export_as_string())
    if hidden is None or not any(hidden(keyspace.name, name) for name in tables):
        return whole
    # The driver's head and tail kept as it writes them (a virtual keyspace's are a comment's).
    made, last = keyspace.as_cql_query() + ";", str(list(tables.values())[-1].export_as_string())
    head = whole[:whole.find(made) + len(made)] if made in whole else made
    tail = whole[whole.rfind(last) + len(last):] if last in whole else ""
    parts = [head, *keyspace.user_type_strings(),
             *(f.export_as_string() for f in keyspace.functions.values()),
             *(a.export_as_string() for a in keyspace.aggregates.values()),
             *(t.export_as_string() for name, t in tables.items() if not hidden(keyspace.name, name))]
    return "\n\n".join(str(part) for part in parts) + tail


def _generic(meta: Any, current: str | None, request: DescribeRequest, hidden: Hidden | None) -> str:
    """DESCRIBE <name>: a keyspace, else a table, index or view of the (given or current) keyspace."""
    keyspaces = meta.keyspaces
    ks_name = request.name("ksname")
    names = [request.name(b) for b in ("cfname", "idxname", "mvname")]
    name = next((n for n in names if n), None)
    if name is None:
        if ks_name in keyspaces:
            return keyspace_cql(keyspaces[ks_name], hidden)
        if ks_name is not None and current:
            name, ks_name = ks_name, None
        else:
            raise KeyspacesDescribeError(f"'{ks_name}' not found in keyspaces")
    keyspace = _keyspace(meta, current, ks_name)
    if name in keyspace.tables:
        return str(keyspace.tables[name].export_as_string())
    index = _index(keyspace, name)
    if index is not None:
        return str(index.export_as_string())
    if name in keyspace.views:
        return str(keyspace.views[name].export_as_string())
    raise KeyspacesDescribeError(f"'{name}' not found in keyspace '{keyspace.name}'")
