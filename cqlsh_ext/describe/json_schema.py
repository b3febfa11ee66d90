"""DESCRIBE PAYLOAD's structure as JSON Schema (draft 2020-12): `describe_payload` with
`json_schema`. Made from the report's document (after the policy's redaction: a redacted path keeps
its place and types, never its values), one schema per place (a column, a map's values, a UDT's
field):

- each path's types as JSON Schema's (string, integer, number, boolean, null, object, array;
  bytes and timestamps are strings; a value cut by the output cap constrains nothing);
- an object's keys as `properties`, `required` when every occurrence of the object had the key;
  keys that stand for data (dates, ids: DESCRIBE PAYLOAD's `*`) as `additionalProperties`; an
  array's elements (`[]`) as `items`;
- a path's few distinct values (at most ENUM_MAX, read exactly) as `enum`, else up to
  EXAMPLES of the most frequent as `examples`; its presence and counts in `description`.

The report lists paths depth first with their depth (describe.report): the tree is rebuilt from
that order, each step read off the end of its path (`.key`, `."quoted key"`, `[]`, `.*`).
"""

from __future__ import annotations

from typing import Any

from cqlsh_ext.cql.spelling import unquoted

#: A path with at most this many distinct values, read exactly, is an enum.
ENUM_MAX = 12
#: Frequent values given as examples at most.
EXAMPLES = 5
#: DESCRIBE PAYLOAD's type names -> JSON Schema's.
TYPES = {"string": "string", "integer": "integer", "float": "number", "decimal": "number",
         "boolean": "boolean", "null": "null", "record": "object", "list": "array", "bytes": "string",
         "timestamp": "string", "symbol": "string"}
DIALECT = "https://json-schema.org/draft/2020-12/schema"


def schema_answer(report: dict[str, Any]) -> dict[str, Any]:
    """The answer of describe_payload with json_schema: the report's figures of the reading and,
    per place, its values' JSON Schema."""
    out: dict[str, Any] = {"describe": report.get("describe"), "rows_read": report.get("rows_read", 0),
                           "interrupted": bool(report.get("interrupted")),
                           "json_schema": {}}
    for place in report.get("places") or []:
        if isinstance(place, dict) and isinstance(place.get("place"), str):
            out["json_schema"][place["place"]] = place_schema(place)
    for key in ("stopped", "values_cut", "cut", "notes"):
        if key in report:
            out[key] = report[key]
    return out


def place_schema(place: dict[str, Any]) -> dict[str, Any]:
    """One place's JSON Schema, from its report (its `paths`)."""
    paths = [p for p in place.get("paths") or [] if isinstance(p, dict) and isinstance(p.get("path"), str)]
    schema: dict[str, Any] = {"$schema": DIALECT,
                              "description": f"{place.get('structured_values', 0):,} structured values of "
                                             f"{place.get('values', 0):,} read"}
    if not paths:
        return schema
    root = paths[0]
    schema.update(_node(root, _children(paths, 0)))
    return schema


def _children(paths: list[dict[str, Any]], at: int) -> list[tuple[dict[str, Any], list[Any]]]:
    """The entries directly below paths[at], each with its own children (depth first order)."""
    depth = paths[at].get("depth", 0)
    out: list[tuple[dict[str, Any], list[Any]]] = []
    i = at + 1
    while i < len(paths) and paths[i].get("depth", 0) > depth:
        if paths[i].get("depth", 0) == depth + 1:
            out.append((paths[i], _children(paths, i)))
        i += 1
    return out


def _node(entry: dict[str, Any], children: list[tuple[dict[str, Any], list[Any]]]) -> dict[str, Any]:
    schema: dict[str, Any] = {}
    found = entry.get("types")
    types: dict[str, Any] = found if isinstance(found, dict) else {}
    names = sorted({TYPES[t] for t in types if t in TYPES})
    if "cut" not in types and names:
        schema["type"] = names[0] if len(names) == 1 else names
    record = _count(types.get("record"))
    properties: dict[str, Any] = {}
    required: list[str] = []
    path = entry["path"]
    for child, below in children:
        step = child["path"][len(path):]
        sub = _node(child, below)
        if step == "[]":
            schema["items"] = sub
        elif step == ".*":
            schema["additionalProperties"] = sub
        elif step.startswith("."):
            key = unquoted(step[1:])  # as a path writes it (query.grammar.spell_key)
            properties[key] = sub
            if record and _int(child.get("occurrences")) >= record:
                required.append(key)
    if properties:
        schema["properties"] = properties
    if required:
        schema["required"] = required
    _values(schema, entry)
    return schema


def _values(schema: dict[str, Any], entry: dict[str, Any]) -> None:
    """enum or examples, and a description of its presence and counts; none for a redacted path."""
    found = entry.get("present")
    present: dict[str, Any] = found if isinstance(found, dict) else {}
    share = present.get("share")
    said = [f"present in {100 * share:.1f} % of values" if isinstance(share, (int, float)) else None,
            f"{_int(entry.get('occurrences')):,} occurrences" if entry.get("occurrences") else None]
    if entry.get("redacted"):
        said.append("its values are redacted by the server's policy")
    else:
        values = [v.get("value") for v in entry.get("values") or [] if isinstance(v, dict)]
        few = _int(entry.get("distinct")) <= min(ENUM_MAX, len(values))
        if values and entry.get("distinct_exact") and few:
            schema["enum"] = values
        elif values:
            schema["examples"] = values[:EXAMPLES]
        if entry.get("distinct"):
            about = "" if entry.get("distinct_exact") else "about "
            said.append(f"{about}{_int(entry.get('distinct')):,} distinct")
    schema["description"] = ", ".join(s for s in said if s)


def _count(share: Any) -> int:
    return _int(share.get("count")) if isinstance(share, dict) else 0


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


