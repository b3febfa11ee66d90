"""Why a query answered nothing, when it is a condition no stored value can meet: a path compared
with a literal of another type (data.status = 5 where data.status holds strings; data.total > '10'
where it holds numbers). The query layer treats such a comparison as SQL does, matching nothing;
so when a payload query answers no row (or a count of 0), the paths its conditions compare are
looked up in a DESCRIBE PAYLOAD of a small sample, and a comparison of a type none of the path's
values has is said as the call's error, with the literal written as it would match.

The answer's own notes come first: a compared path no value had (the reading's
`paths_no_value_had`) is no type mismatch, its closing line says so already, and costs no look-up.
The reading does not count the values a condition skipped for their type (conditions run on the
native core, a page at a time), so the types come from DESCRIBE PAYLOAD's figures (the typed
report, its values redacted by the policy, never sent).
"""

from __future__ import annotations

from collections.abc import Callable
from decimal import Decimal
from typing import TYPE_CHECKING, Any

from cqlsh_ext.mcp_server import redact

if TYPE_CHECKING:
    from cqlsh_ext.mcp_server.tools import Work

#: Rows the look-up reads.
SAMPLE = 200
#: The operators whose literal must be of the value's type.
COMPARING = ("=", "!=", "<", "<=", ">", ">=", "in")
#: DESCRIBE PAYLOAD's type names, by the kind of literal that can match them.
_KINDS = {"string": ("string",), "number": ("integer", "float", "decimal", "number"),
          "boolean": ("boolean",)}


def type_mismatch(work: Work, keyspace: str | None, table: str | None, plan: Any, reading: Any,
                  describe: Callable[[Work, str, int], dict[str, Any] | None]) -> str | None:
    """The one line saying which condition compares a path with a literal of a type its values do
    not have, or None (nothing found: the answer stands). `reading`: the answer's notes as data."""
    from cqlsh_ext.query.grammar import Path

    if keyspace is None or table is None:
        return None
    missing = {entry.get("path") for entry in (reading or {}).get("paths_no_value_had") or []
               if isinstance(entry, dict)}
    reports: dict[str, dict[str, Any] | None] = {}
    for pred in plan.predicates:
        if not isinstance(pred.ref, Path) or pred.op.lower() not in COMPARING or not pred.values:
            continue
        if pred.ref.text in missing:
            continue  # no value had the path: the closing line says so
        kinds = {_kind(v) for v in pred.values if v is not None}
        kind = kinds.pop() if len(kinds) == 1 else None
        if kind is None:
            continue
        column = pred.ref.column
        if column not in reports:
            reports[column] = describe(work, column, SAMPLE)
        path = ".".join(redact.path_place(column, pred.ref.steps, pred.ref.access))
        types = _types(reports[column], path)
        if not types or any(t in _KINDS[kind] for t in types) or "null" in types and len(types) == 1:
            continue
        held = ", ".join(sorted(types))
        literal = pred.values[0]
        return (f"{pred.ref.text} holds {held} values (a sample of {SAMPLE} rows), and the condition "
                f"compares it with a {kind} ({_spelt(literal)}): no value can match, so the answer would be "
                "empty"
                f"{_instead(literal, types)}")
    return None


def _kind(value: Any) -> str | None:
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float, Decimal)):
        return "number"
    if isinstance(value, str):
        return "string"
    return None


def _types(report: dict[str, Any] | None, path: str) -> set[str]:
    for place in (report or {}).get("places") or []:
        for entry in place.get("paths") or []:
            if isinstance(entry, dict) and entry.get("path") == path:
                return set(entry.get("types") or {})
    return set()


def _spelt(value: Any) -> str:
    if isinstance(value, str):
        return f"'{value}'"
    return str(value).lower() if isinstance(value, bool) else str(value)


def _instead(literal: Any, types: set[str]) -> str:
    """How the literal would match: a number written as one, a string quoted."""
    if isinstance(literal, str) and types & set(_KINDS["number"]):
        try:
            Decimal(literal)
            return f"; write {literal} (a number, unquoted)"
        except ArithmeticError:
            return ""
    if not isinstance(literal, str) and "string" in types:
        return f"; write '{_spelt(literal)}' (a string, quoted)"
    if isinstance(literal, str) and "boolean" in types and literal.lower() in ("true", "false"):
        return f"; write {literal.lower()} (a boolean, unquoted)"
    return ""
