"""The JSON Schema (draft 2020-12) of each feature's answer (each package's declared.py names its own),
which MCP declares as a read feature's tool's `outputSchema`: what the structured content holds, so
that a client can check it (the SDK's client validates every answer against it) and an assistant
can read it without guessing. An answer's text block is the same JSON.

How values are spelt (answers.py, render.json_lines), said in `$defs`:

- a blob that decodes: {"label": "snappy>json", "kind": "text", "confidence": "likely",
  "payload": ...} (and "cut",
  "size", "note" when there is something to say);
- an undecodable value: the stored bytes' hex, "0x1f8b...", as cqlsh prints it (a value in no
  known format), or {"kind": "failed" | "binary" | "unknown", "payload": "0x...", "note": why};
- the group of undecodable values (GROUP BY a path): {"$undecodable": true};
- a value the policy redacts: "[redacted]";
- anything else as `--output-format json` spells it (numbers, strings, arrays, objects, null).

Compact: every client reads tools/list whole (and some hand it to the model), so the schemas say
an answer's keys, their types and what is required, and of the objects inside it the keys they
require; what each key means is docs/mcp.md's ("The tools", "Output schemas"); the value spellings'
$defs only where rows hold any column's values (query).
All of tools/list stays within mcp_server.sizing.LIST_BYTES (tests/mcp_server measure it as sent).
"""

from __future__ import annotations

from typing import Any

_STRING = {"type": "string"}
_INT = {"type": "integer"}
_BOOL = {"type": "boolean"}
_OBJECT = {"type": "object"}
_STRINGS = {"type": "array", "items": _STRING}
#: A list of what an answer says of itself (its notes, its cuts): the items' type left out, as
#: tools/list is read whole (docs/mcp.md says they are strings).
_SAID = {"type": "array"}
_NULL_STRING = {"type": ["string", "null"]}


def _closed(properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
    """An object of these keys and no other."""
    return {"type": "object", "properties": properties, "required": required, "additionalProperties": False}


def _open(required: list[str], properties: dict[str, Any] | None = None) -> dict[str, Any]:
    """An object with these keys (and what else a report holds)."""
    return {"type": "object", **({"properties": properties} if properties else {}), "required": required}


#: How a value of an answer's row is spelt (a row's values are any of these).
VALUE_DEFS: dict[str, Any] = {
    "blob": _open(["kind"], {"label": _STRING, "kind": {"enum": ["text", "record", "binary", "unknown",
                                                                   "failed"]},
                             "confidence": _STRING, "cut": _STRING, "size": {"type": "integer"},
                             "note": _STRING}),
    "hex": {"type": "string", "pattern": "^0x[0-9a-f]*(…)?$"},
    "undecodable": _open(["$undecodable"]),
    "redacted": {"const": "[redacted]"},
    "value": {"anyOf": [{"$ref": "#/$defs/blob"}, {"$ref": "#/$defs/hex"}, {"$ref": "#/$defs/undecodable"},
                        {"$ref": "#/$defs/redacted"}, {}]},
}

#: The call was stopped (its time limit, or cancelled): the answer covers what was read.
STOPPED: dict[str, Any] = _OBJECT

#: What an answer of rows says of its reading (reading.typed.ReadNotes.to_json).
READING: dict[str, Any] = _OBJECT

#: A column of an answer of rows: its name, role (cql, blob, path, aggregate) and type.
_COLUMN = _OBJECT

#: What every answer may carry besides its own keys; `truncated`, always there: false, or the caps
#: that cut it (answers.CAPS).
_COMMON: dict[str, Any] = {"stopped": STOPPED, "values_cut": _SAID, "notes": _SAID,
                           "truncated": {"type": ["boolean", "array"]}}


def rows_schema(row_properties: dict[str, Any] | None = None) -> dict[str, Any]:
    """An answer of rows (`query`, `list_keyspaces`, `list_tables`); `row_properties`: each row's
    keys when they are known (else any column's value, spelt as VALUE_DEFS say)."""
    row: dict[str, Any] = {"type": "object", "additionalProperties": {"$ref": "#/$defs/value"}}
    if row_properties is not None:
        row = _closed(row_properties, [])
        del row["required"]
    schema = _closed({"statement": _STRING, "rows": {"type": "array", "items": row}, "count": _INT,
                      "cut": _NULL_STRING, "cursor": _STRING, "rows_before": _INT,
                      "columns": {"type": "array", "items": _COLUMN}, "reading": READING, "error": _STRING,
                      **_COMMON},
                     ["statement", "rows", "count", "cut", "columns", "notes"])
    return schema if row_properties is not None else {"$defs": VALUE_DEFS, **schema}


DESCRIBE_TABLE: dict[str, Any] = _closed({
    "table": _STRING, "cql": _STRING,
    "columns": {"type": "array", "items": _open(["name", "type", "key", "holds"])},
    "cut": _SAID, **_COMMON}, ["table", "cql", "columns"])

#: What a report's answer may carry besides (where its keys are closed: a report's are open).
_DESCRIBE_REPORT: dict[str, Any] = _open(["describe", "rows_read", "places"], {
    "describe": _STRING, "rows_read": _INT, "interrupted": _BOOL, "error": _NULL_STRING,
    "places": {"type": "array", "items": _open(["place", "values", "encodings", "paths"])}})

_DESCRIBE_SCHEMA: dict[str, Any] = _open(["describe", "rows_read", "json_schema"], {
    "json_schema": {"type": "object", "additionalProperties": _OBJECT}})

DESCRIBE_PAYLOAD: dict[str, Any] = {"type": "object", "anyOf": [_DESCRIBE_REPORT, _DESCRIBE_SCHEMA]}

INSPECT: dict[str, Any] = _closed({
    "statement": _STRING,
    "values": {"type": "array", "items": _OBJECT},
    "count": _INT, "cut": _NULL_STRING, "cursor": _STRING, **_COMMON},
    ["statement", "values", "count", "cut"])


def report_schema(command: str, required: list[str], properties: dict[str, Any]) -> dict[str, Any]:
    """A report of COMPRESSION `command`: the shell's JSON report."""
    return _open(["command", *required],
                 {"command": {"const": f"COMPRESSION {command}"}, "interrupted": _BOOL, **properties})


STATS = report_schema("STATS", ["rows", "interrupted", "columns"], {
    "rows": _INT, "columns": {"type": "array", "items": _open(["column", "values"])}})
SETTINGS = report_schema("SETTINGS", ["keyspace", "table", "compression"], {
    "keyspace": _STRING, "table": _STRING, "compression": _OBJECT})
ADVISE = report_schema("ADVISE", ["rows", "columns"], {
    "rows": _INT, "columns": {"type": "array", "items": _open(["column"])}})

#: An export's file (`export`): its resource's URI, what it holds (the rest, docs/mcp.md: format,
#: expires, statement, notes, truncated, ...; open, as tools/list is read whole).
EXPORT: dict[str, Any] = _open(["uri", "mimeType", "size", "rows"], {
    "uri": _STRING, "mimeType": _STRING, "size": _INT, "rows": _INT})

#: An edit proposed (`propose_edit`): the statement, and its preview's figures (the rest, docs/mcp.md:
#: to_write, refused, bytes_before, bytes_after, rows, truncated, ...).
PROPOSAL: dict[str, Any] = _open(["statement", "rows_found", "would_change", "preview"], {
    "statement": _STRING, "rows_found": _INT, "would_change": _INT, "preview": _STRINGS})


# ------------------------------------------------------------------ the write features' results
# (edit/, rewrite/ and load/declared.py): what the Python API's results' to_dict() hold
# (api/writes.py), held equal to those dataclasses' fields by tests/mcp_server/test_declarations.py.
# `request`: the write's typed request as its journal spells it.

_COUNT_OR_NULL = {"type": ["integer", "null"]}
_WRITTEN = {"confirmed": _BOOL, "written": _COUNT_OR_NULL, "left_alone": _COUNT_OR_NULL,
            "journal": _NULL_STRING, "stopped": _NULL_STRING, "request": _OBJECT}
_REWRITTEN = {**_WRITTEN, "rows_read": _INT, "found": _INT, "to_rewrite": _INT, "already": _INT,
              "refused": _OBJECT, "bytes_before": _INT, "bytes_after": _INT, "write_units": _INT,
              "sampled": _BOOL, "complete": {"type": ["boolean", "null"]}}

EDIT_RESULT: dict[str, Any] = _closed({
    **_WRITTEN, "found": _INT, "to_change": _INT, "unchanged": _INT, "refused": _OBJECT,
    "changes": {"type": "array", "items": _closed({"key": _OBJECT, "changes": {"type": "array"}},
                                                  ["key", "changes"])},
    "interrupted": _BOOL}, ["request", "confirmed", "found", "to_change", "unchanged", "refused", "changes"])
REWRITE_RESULT: dict[str, Any] = _closed(_REWRITTEN, ["request", "confirmed", "rows_read", "found",
                                                      "to_rewrite", "refused", "bytes_before", "bytes_after"])
RESUME_RESULT: dict[str, Any] = _closed({
    **_REWRITTEN, "resumed": {"type": ["object", "null"]}, "ranges": _INT, "ranges_finished": _INT,
    "rows_before": _INT}, ["request", "confirmed", "rows_read", "ranges", "ranges_finished", "rows_before"])
UNDO_RESULT: dict[str, Any] = _closed({**_WRITTEN, "rows": _INT, "still": _COUNT_OR_NULL},
                                      ["request", "confirmed", "rows"])
LOAD_RESULT: dict[str, Any] = _closed({
    "request": _OBJECT, "confirmed": _BOOL, "rows": _INT, "new": _INT, "overwritten": _INT,
    "unchanged": _INT, "refused": _OBJECT, "refused_rows": _STRINGS, "chains": _OBJECT, "bytes_before": _INT,
    "bytes_after": _INT, "write_units": _INT, "written": _COUNT_OR_NULL, "not_sent": _COUNT_OR_NULL,
    "journal": _NULL_STRING, "stopped": _NULL_STRING},
    ["request", "confirmed", "rows", "new", "overwritten", "refused"])
