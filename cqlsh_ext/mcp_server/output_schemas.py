"""The JSON Schema (draft 2020-12) of each tool's answer, declared as its `outputSchema`: what the
structured content holds, so that a client can check it (the SDK's client validates every answer
against it) and an assistant can read it without guessing. An answer's text block is the same
JSON.

How values are spelt (answers.py, render.json_lines), said in `$defs`:

- a blob that decodes: {"label": "snappy>json", "kind": "text", "payload": ...} (and "cut",
  "size", "note" when there is something to say);
- an undecodable value: the stored bytes' hex, "0x1f8b...", as cqlsh prints it (a value in no
  known format), or {"kind": "failed" | "binary" | "unknown", "payload": "0x...", "note": why};
- the group of undecodable values (GROUP BY a path): {"$undecodable": true};
- a value the policy redacts: "[redacted]";
- anything else as `--output-format json` spells it (numbers, strings, arrays, objects, null).
"""

from __future__ import annotations

from typing import Any

_STRING = {"type": "string"}
_INT = {"type": "integer", "minimum": 0}
_STRINGS = {"type": "array", "items": _STRING}

#: How a value of an answer's row is spelt (a row's values are any of these).
VALUE_DEFS: dict[str, Any] = {
    "blob": {
        "title": "a decoded blob",
        "type": "object",
        "properties": {
            "label": {"type": "string", "description": "what it is, outside in: snappy>json, zstd>msgpack"},
            "kind": {"enum": ["text", "record", "binary", "unknown", "failed"],
                     "description": "text and record: its payload is read; the others are undecodable"},
            "payload": {"description": "the decoded value (JSON embedded as JSON), or its hex"},
            "cut": {"type": "string", "description": "why and where the value was cut (the output cap)"},
            "size": {"type": "integer", "description": "the decompressed size its header declares"},
            "note": {"type": "string", "description": "why it could not be read"},
            "class": {"type": "string"},
            "raw": {"type": "string", "description": "the stored bytes' hex (not sent when redacted)"},
        },
        "required": ["kind"],
    },
    "undecodable_hex": {"title": "an undecodable value: the stored bytes' hex, as cqlsh prints them",
                        "type": "string", "pattern": "^0x[0-9a-f]*(…)?$"},
    "undecodable_group": {"title": "GROUP BY's group of the values no path could be read in",
                          "type": "object", "properties": {"$undecodable": {"const": True}},
                          "required": ["$undecodable"], "additionalProperties": False},
    "redacted": {"title": "a value the policy redacts", "const": "[redacted]"},
    "value": {
        "description": "a column's, a path's or an aggregate's value, as --output-format json spells it",
        "anyOf": [{"$ref": "#/$defs/blob"}, {"$ref": "#/$defs/undecodable_hex"},
                  {"$ref": "#/$defs/undecodable_group"}, {"$ref": "#/$defs/redacted"},
                  {"title": "any other JSON value"}],
    },
}

STOPPED: dict[str, Any] = {
    "type": "object",
    "description": "the call was stopped (its time limit, or cancelled): the answer covers what was read",
    "properties": {"why": _STRING, "rows_read": _INT, "ranges_read": _INT, "ranges": _INT,
                   "share_done": {"type": "number", "minimum": 0, "maximum": 1}, "says": _STRING},
    "required": ["why"],
}

#: What an answer of rows says of its reading (reading.typed.ReadNotes.to_json).
READING: dict[str, Any] = {
    "type": "object",
    "properties": {
        "rows_read": _INT, "matched": _INT, "undecodable": _INT,
        "undecodable_by_kind": {"type": "object", "additionalProperties": _INT},
        "cut": _INT,
        "exact": {"type": "boolean", "description": "the figures cover every row the statement reads "
                  "(false when the reading was stopped before its end)"}, "aggregate_inputs_skipped": _INT,
        "limit_reached": _INT, "read": _STRING, "ranges_read": _INT, "ranges": _INT,
        "retried": {"type": "object", "additionalProperties": _INT},
        "paths_no_value_had": {"type": "array", "items": {"type": "object"}},
        "stopped": {"enum": [None, "interrupted", "cancelled", "output closed", "error"]},
        "error": _STRING,
    },
    "required": ["rows_read", "matched", "undecodable", "stopped"],
}

_COLUMN = {
    "type": "object",
    "properties": {"name": _STRING, "role": {"enum": ["cql", "blob", "path", "aggregate"]},
                   "type": {"type": "string", "description": "its CQL type, `json` for a path's value"},
                   "source": {"type": "string", "description": "the path or aggregate as written"}},
    "required": ["name", "role", "type"],
    "additionalProperties": False,
}

#: What every answer may carry besides its own keys.
_COMMON: dict[str, Any] = {
    "stopped": STOPPED,
    "values_cut": {**_STRINGS, "description": "where long values were cut inside the answer, and how much"},
    "notes": {**_STRINGS, "description": "what the reading said besides (a payload query's closing line)"},
}


def rows_schema(row_properties: dict[str, Any] | None = None) -> dict[str, Any]:
    """An answer of rows (`query`, `list_keyspaces`, `list_tables`); `row_properties`: each row's
    keys when they are known (else any column's value, spelt as VALUE_DEFS say)."""
    row: dict[str, Any] = {"type": "object", "additionalProperties": {"$ref": "#/$defs/value"}}
    if row_properties is not None:
        row = {"type": "object", "properties": row_properties, "additionalProperties": False}
    return {
        "type": "object",
        "$defs": VALUE_DEFS,
        "properties": {
            "statement": {"type": "string", "description": "the statement's start (at most 120 characters)"},
            "rows": {"type": "array", "items": row},
            "count": _INT,
            "cut": {"type": ["string", "null"],
                    "description": "null when the answer is whole; else where and why it stopped (the limit, "
                                   "the byte cap)"},
            "cursor": {"type": "string", "description": "give it to query with the same statement for the "
                                                        "rows that follow"},
            "rows_before": {**_INT, "description": "rows earlier answers of this statement had (a cursor's)"},
            "columns": {"type": "array", "items": _COLUMN},
            "reading": READING,
            "error": {"type": "string", "description": "an error after some rows were read"},
            **_COMMON,
        },
        "required": ["statement", "rows", "count", "cut", "columns", "notes"],
        "additionalProperties": False,
    }


DESCRIBE_TABLE: dict[str, Any] = {
    "type": "object",
    "properties": {
        "table": _STRING, "cql": {"type": "string", "description": "DESCRIBE TABLE's CQL"},
        "columns": {"type": "array", "items": {
            "type": "object",
            "properties": {"name": _STRING, "type": _STRING,
                           "key": {"enum": ["partition", "clustering", None]},
                           "holds": {"enum": ["blob", "blobs inside", "JSON text", "text", None]},
                           "sample": {"description": "the text values read to tell JSON text"}},
            "required": ["name", "type", "key", "holds"]}},
        "cut": _STRINGS,
        **_COMMON,
    },
    "required": ["table", "cql", "columns"],
    "additionalProperties": False,
}

_REPORT_COMMON: dict[str, Any] = {**_COMMON, "cut": {**_STRINGS, "description": "lists cut to fit the cap"}}

_DESCRIBE_REPORT: dict[str, Any] = {
    "title": "DESCRIBE PAYLOAD's report",
    "type": "object",
    "properties": {
        "describe": _STRING, "column_type": _STRING, "reading": {"type": "object"},
        "rows_read": _INT, "rows_without_value": _INT, "interrupted": {"type": "boolean"},
        "error": {"type": ["string", "null"]}, "where": {"type": "object"},
        "places": {"type": "array", "items": {
            "type": "object",
            "properties": {
                "place": _STRING, "values": _INT,
                "encodings": {"type": "array", "items": {
                    "type": "object",
                    "properties": {"label": _STRING, "kind": _STRING, "cut": {"type": "boolean"},
                                   "count": _INT}}},
                "reasons": {"type": "object", "additionalProperties": _INT,
                            "description": "why values were undecodable, by reason"},
                "hint": _STRING,
                "paths": {"type": "array", "items": {
                    "type": "object",
                    "properties": {"path": _STRING, "depth": _INT, "present": {"type": "object"},
                                   "occurrences": _INT, "types": {"type": "object"},
                                   "values": {"type": "array"}, "redacted": {"const": True}},
                    "required": ["path", "depth"]}}},
            "required": ["place", "values", "encodings", "paths"]}},
        **_REPORT_COMMON,
    },
    "required": ["describe", "rows_read", "places"],
}

_DESCRIBE_SCHEMA: dict[str, Any] = {
    "title": "DESCRIBE PAYLOAD's structure as JSON Schema (json_schema: true)",
    "type": "object",
    "properties": {
        "describe": _STRING, "rows_read": _INT, "interrupted": {"type": "boolean"},
        "json_schema": {"type": "object", "additionalProperties": {"type": "object"},
                        "description": "per place (a column, a map's values, a UDT's field): the JSON Schema "
                                       "(draft 2020-12) of its decoded values"},
        **_REPORT_COMMON,
    },
    "required": ["describe", "rows_read", "json_schema"],
    "additionalProperties": False,
}

DESCRIBE_PAYLOAD: dict[str, Any] = {"type": "object", "anyOf": [_DESCRIBE_REPORT, _DESCRIBE_SCHEMA]}

INSPECT: dict[str, Any] = {
    "type": "object",
    "properties": {
        "statement": _STRING,
        "values": {"type": "array", "items": {
            "type": "object",
            "properties": {"column": _STRING, "key": {"type": "object"}, "chain": _STRINGS,
                           "payload": {"description": "what the value holds (its preview `[redacted]` "
                                                      "where the policy says)"}}}},
        "count": _INT, "cut": {"type": ["string", "null"]}, "cursor": _STRING,
        **_COMMON,
    },
    "required": ["statement", "values", "count", "cut"],
    "additionalProperties": False,
}

_STATS = {
    "title": "COMPRESSION STATS",
    "properties": {
        "command": {"const": "COMPRESSION STATS"}, "rows": _INT, "complete": {"type": "boolean"},
        "interrupted": {"type": "boolean"}, "error": {"type": ["string", "null"]}, "verdict": _STRING,
        "columns": {"type": "array", "items": {
            "type": "object",
            "properties": {"column": _STRING, "values": _INT, "stored_bytes": _INT,
                           "decompressed_bytes": _INT,
                           "ratio": {"type": ["number", "null"]}, "by_chain": {"type": "array"},
                           "undecodable": {"description": "the values no codec read, by reason"}},
            "required": ["column", "values"]}},
    },
    "required": ["command", "rows", "interrupted", "columns"],
}
_SETTINGS = {
    "title": "COMPRESSION SETTINGS",
    "properties": {
        "command": {"const": "COMPRESSION SETTINGS"}, "keyspace": _STRING, "table": _STRING,
        "compression": {"type": "object"}, "sample": {"type": "object"},
        "advice": {"type": ["array", "string", "null"]}, "verdict": {"type": ["string", "null"]},
        "interrupted": {"type": "boolean"},
    },
    "required": ["command", "keyspace", "table", "compression"],
}
_ADVISE = {
    "title": "COMPRESSION ADVISE",
    "properties": {
        "command": {"const": "COMPRESSION ADVISE"}, "rows": _INT, "interrupted": {"type": "boolean"},
        "verdicts": {"type": "object", "additionalProperties": _STRING},
        "columns": {"type": "array", "items": {"type": "object", "properties": {"column": _STRING},
                                               "required": ["column"]}},
    },
    "required": ["command", "rows", "columns"],
}


def report_schema(shape: dict[str, Any]) -> dict[str, Any]:
    return {"type": "object", "title": shape["title"],
            "properties": {**shape["properties"], **_REPORT_COMMON}, "required": shape["required"]}


STATS, SETTINGS, ADVISE = report_schema(_STATS), report_schema(_SETTINGS), report_schema(_ADVISE)
