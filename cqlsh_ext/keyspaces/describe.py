"""DESCRIBE for servers reporting release 3.x (Amazon Keyspaces reports 3.11.2), client-side.

Since 4.0 DESCRIBE runs on the server, so cqlsh 6.x only prints a warning against a 3.x server.
Here the same statements are answered from the driver's schema metadata (keyspaces, tables,
types, indexes, materialized views, functions, aggregates) and printed with cqlsh's own
describe_* printers, so the output looks like cqlsh's against a 4.0+ server.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from cqlsh_ext.cql.system import SYSTEM_KEYSPACES  # not shown by DESCRIBE SCHEMA (FULL SCHEMA shows them)

if TYPE_CHECKING:
    from cqlsh_ext.upstream.protocol import Parsed, Shell



class KeyspacesDescribeError(Exception):
    """str() is the error line cqlsh prints."""


def _words(parsed: Parsed) -> list[str]:
    return [token[1].lower() for token in parsed.matched[1:]]


def _binding(shell: Shell, parsed: Parsed, name: str) -> str | None:
    value = parsed.get_binding(name, None)
    return shell.cql_unprotect_name(value) if value is not None else None


def _keyspace(shell: Shell, name: str | None) -> Any:
    name = name or shell.current_keyspace
    if name is None:
        raise KeyspacesDescribeError("Not in any keyspace.")
    keyspaces = shell.conn.metadata.keyspaces
    if name not in keyspaces:
        raise KeyspacesDescribeError(f"'{name}' not found in keyspaces")
    return keyspaces[name]


def _lookup(shell: Shell, parsed: Parsed, attribute: str, binding: str, kind: str) -> Any:
    keyspace = _keyspace(shell, _binding(shell, parsed, "ksname"))
    name = _binding(shell, parsed, binding)
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


def _names(shell: Shell, attribute: str, sort_key: Any = None) -> list[dict[str, str]]:
    keyspaces = shell.conn.metadata.keyspaces
    selected = [shell.current_keyspace] if shell.current_keyspace else sorted(keyspaces)
    rows = []
    for ks_name in selected:
        if ks_name not in keyspaces:
            continue
        items = getattr(keyspaces[ks_name], attribute).values()
        for item in sorted(items, key=sort_key or (lambda i: i.name)):
            rows.append({"keyspace_name": ks_name, "name": item.name})
    return rows


def statements(shell: Shell, parsed: Parsed) -> tuple[str, Any]:
    """('keyspaces' | 'list' | 'elements' | 'cluster', rows) for one parsed DESCRIBE."""
    words = _words(parsed)
    what = words[0] if words else ""
    meta = shell.conn.metadata
    if what == "keyspaces":
        return "keyspaces", [{"name": name} for name in sorted(meta.keyspaces)]
    if what in ("tables", "columnfamilies"):
        return "list", _names(shell, "tables")
    if what == "types":
        return "list", _names(shell, "user_types")
    if what == "functions":
        return "list", _names(shell, "functions", lambda f: f.signature)
    if what == "aggregates":
        return "list", _names(shell, "aggregates", lambda a: a.signature)
    if what == "cluster":
        return "cluster", [{"cluster": meta.cluster_name, "partitioner": meta.partitioner,
                            "snitch": "(not known client-side)"}]
    if what in ("full", "schema"):
        full = what == "full"
        return "elements", [meta.keyspaces[name].export_as_string() for name in sorted(meta.keyspaces)
                            if full or name not in SYSTEM_KEYSPACES]
    if what in ("keyspace", "only"):
        keyspace = _keyspace(shell, _binding(shell, parsed, "ksname"))
        if what == "only":
            return "elements", [keyspace.as_cql_query() + ";"]
        return "elements", [keyspace.export_as_string()]
    if what in ("table", "columnfamily"):
        return "elements", [_lookup(shell, parsed, "tables", "cfname", "table").export_as_string()]
    if what == "type":
        return "elements", [_lookup(shell, parsed, "user_types", "utname", "type").export_as_string()]
    if what == "materialized":
        return "elements", [_lookup(shell, parsed, "views", "mvname", "view").export_as_string()]
    if what == "index":
        keyspace = _keyspace(shell, _binding(shell, parsed, "ksname"))
        name = _binding(shell, parsed, "idxname") or ""
        index = _index(keyspace, name)
        if index is None:
            raise KeyspacesDescribeError(f"'{name}' not found in keyspace '{keyspace.name}'")
        return "elements", [index.export_as_string()]
    if what in ("function", "aggregate"):
        attribute, binding = ("functions", "udfname") if what == "function" else ("aggregates", "udaname")
        keyspace = _keyspace(shell, _binding(shell, parsed, "ksname"))
        name = _binding(shell, parsed, binding) or ""
        found = _routines(keyspace, attribute, name)
        if not found:
            raise KeyspacesDescribeError(f"'{name}' not found in keyspace '{keyspace.name}'")
        return "elements", [routine.export_as_string() for routine in found]
    return "elements", [_generic(shell, parsed)]


def _generic(shell: Shell, parsed: Parsed) -> str:
    """DESCRIBE <name>: a keyspace, else a table, index or view of the (given or current) keyspace."""
    keyspaces = shell.conn.metadata.keyspaces
    ks_name = _binding(shell, parsed, "ksname")
    names = [_binding(shell, parsed, b) for b in ("cfname", "idxname", "mvname")]
    name = next((n for n in names if n), None)
    if name is None:
        if ks_name in keyspaces:
            return str(keyspaces[ks_name].export_as_string())
        if ks_name is not None and shell.current_keyspace:
            name, ks_name = ks_name, None
        else:
            raise KeyspacesDescribeError(f"'{ks_name}' not found in keyspaces")
    keyspace = _keyspace(shell, ks_name)
    if name in keyspace.tables:
        return str(keyspace.tables[name].export_as_string())
    index = _index(keyspace, name)
    if index is not None:
        return str(index.export_as_string())
    if name in keyspace.views:
        return str(keyspace.views[name].export_as_string())
    raise KeyspacesDescribeError(f"'{name}' not found in keyspace '{keyspace.name}'")


def describe(shell: Shell, parsed: Parsed) -> None:
    """Run one DESCRIBE from driver metadata and print it the way cqlsh does."""
    try:
        shell.conn.refresh_schema_metadata(max_schema_agreement_wait=0)
    except Exception:  # noqa: BLE001 -- stale metadata is better than none; the driver logs why
        pass
    try:
        kind, rows = statements(shell, parsed)
    except KeyspacesDescribeError as err:
        shell.printerr(str(err))
        return
    if kind == "keyspaces":
        shell.describe_keyspaces(rows)
    elif kind == "list":
        shell.describe_list(rows)
    elif kind == "cluster":
        shell.describe_cluster(rows)
    else:
        shell.describe_element([{"create_statement": text} for text in rows])
