"""Redaction of answers: the values a policy's `[redact]` patterns name (policy.py) never leave the
server. Pure functions over an answer's JSON (rows as the shell's `--output-format json` spells
them, INSPECT's values, DESCRIBE PAYLOAD's report), called on every answer of a table that has
patterns; the statements whose conditions, groups, order or aggregates touch such a value are
refused before they run (guard.py), so what is left to do here is the values selected.

A place is a list of names: keyspace, table, column, then the steps inside the value (a JSON key, a
map's key, a UDT's field; an array's elements are one step `name[]`). A value at a place a pattern
covers (the place, or one above it, is named) becomes REDACTED; a value holding such places is
walked into, and what cannot be walked into (a payload that is no JSON: text, hex) is redacted whole.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from functools import partial
from typing import Any

from cqlsh_ext.mcp_server.policy import Pattern, normal, split_path
from cqlsh_ext.output.spellings import BLOB_OBJECT_KEYS

#: What a redacted value is answered as, and its JSON text.
REDACTED = "[redacted]"
REDACTED_TEXT = json.dumps(REDACTED)
#: The keys of a decoded blob's object (output.spellings.BLOB_OBJECT_KEYS): `payload` is walked
#: into, `raw` (the stored bytes' hex) is dropped.
_BLOB_KEYS = BLOB_OBJECT_KEYS
#: What a DESCRIBE PAYLOAD path entry keeps when it holds a redacted place: where it is, how often, its types.
_PATH_KEEPS = ("path", "depth", "present", "occurrences", "types")


def touches(patterns: Sequence[Pattern], place: Sequence[str]) -> bool:
    """Whether a value at `place` is redacted, or holds redacted values."""
    return any(p.covers(place) or p.reaches(place) for p in patterns)


def covered(patterns: Sequence[Pattern], place: Sequence[str]) -> bool:
    return any(p.covers(place) for p in patterns)


def value(patterns: Sequence[Pattern], place: list[str], found: Any) -> Any:
    """`found` (the JSON of the value at `place`) with what the patterns name redacted."""
    if not patterns or not touches(patterns, place):
        return found
    if covered(patterns, place):
        return REDACTED
    if _is_blob(found):
        kept = {k: v for k, v in found.items() if k != "raw"}
        if "payload" in kept:
            kept["payload"] = _inside(patterns, place, kept["payload"])
        return kept
    return _inside(patterns, place, found)


def _inside(patterns: Sequence[Pattern], place: list[str], found: Any) -> Any:
    if isinstance(found, dict):
        return {key: value(patterns, [*place, str(key)], item) for key, item in found.items()}
    if isinstance(found, list):
        element = [*place[:-1], place[-1] + "[]"]
        return [value(patterns, element, item) for item in found]
    if isinstance(found, str):
        # JSON held as text (a text column's JSON, a payload read as text): redacted inside, spelt
        # again; any other text holds the redacted place somewhere it cannot be told: all of it goes.
        try:
            parsed = json.loads(found)
        except ValueError:
            return REDACTED
        if isinstance(parsed, (dict, list)):
            return json.dumps(_inside(patterns, place, parsed), ensure_ascii=False, separators=(",", ":"))
        return REDACTED
    return REDACTED  # a number, a boolean: a value holding a redacted place it cannot show


def _is_blob(found: Any) -> bool:
    return isinstance(found, dict) and "kind" in found and set(found) <= _BLOB_KEYS


def rows(patterns: Sequence[Pattern], keyspace: str, table: str, found: list[Any],
         places: Mapping[str, Sequence[str] | None], columns: frozenset[str]) -> list[Any]:
    """Rows of keyspace.table (JSON objects by result name) redacted. `places`: each result name
    the statement selects -> the place below the table it reads (a column, or a column and path
    steps), or None for a name that reads none (an aggregate the patterns leave alone); a name that
    is neither there nor one of the table's `columns` is redacted whole when any pattern reaches
    into the table (what it holds cannot be told)."""
    if not patterns:
        return found
    base = [keyspace, table]
    redacted: list[Any] = []
    for row in found:
        if not isinstance(row, dict):
            redacted.append(row)
            continue
        out: dict[str, Any] = {}
        for key, item in row.items():
            if key in places:
                place = places[key]
                out[key] = item if place is None else value(patterns, [*base, *place], item)
            elif key in columns:
                out[key] = value(patterns, [*base, key], item)
            else:
                out[key] = REDACTED
        redacted.append(out)
    return redacted


def column_screens(patterns: Sequence[Pattern], keyspace: str, table: str, names: Sequence[str],
                   places: Mapping[str, Sequence[str] | None],
                   columns: frozenset[str]) -> list[str | Callable[[Any], Any] | None]:
    """rows()'s rule for each of an answer's columns (its result `names`), for rows laid out a
    column at a time (render.json_lines.JsonRows.answer_rows): None where it leaves the values as
    they are, REDACTED's JSON text where it redacts them whole, else the function of a value's
    JSON value that redacts inside it (value())."""
    if not patterns:
        return [None] * len(names)
    base = [keyspace, table]
    out: list[str | Callable[[Any], Any] | None] = []
    for key in names:
        if key in places:
            place = places[key]
            at = None if place is None else [*base, *place]
        elif key in columns:
            at = [*base, key]
        else:
            out.append(REDACTED_TEXT)
            continue
        if at is None or not touches(patterns, at):
            out.append(None)
        elif covered(patterns, at):
            out.append(REDACTED_TEXT)
        else:
            out.append(partial(value, patterns, at))
    return out


def path_place(column: str, steps: Sequence[str | int], access: str | None = None) -> list[str]:
    """The place below a table of a payload path (query.grammar.Path's column, access and steps)."""
    place = [column, *([access] if access is not None else [])]
    for step in steps:
        if isinstance(step, int):
            place[-1] += "[]"
        else:
            place.append(step)
    return place


def inspected(patterns: Sequence[Pattern], keyspace: str, table: str, found: list[Any]) -> list[Any]:
    """INSPECT's values of keyspace.table: a value whose column the patterns reach has its payload
    preview redacted (its layers, headers and sizes are no contents); key columns covered are redacted."""
    if not patterns:
        return found
    out = []
    for entry in found:
        if not isinstance(entry, dict):
            out.append(entry)
            continue
        entry = dict(entry)
        column = entry.get("column")
        place = [keyspace, table, *split_path(column)] if isinstance(column, str) else None
        if place is None or touches(patterns, place):
            payload = entry.get("payload")
            if isinstance(payload, dict):
                entry["payload"] = {k: (REDACTED if k in ("preview", "value", "text") else v)
                                    for k, v in payload.items()}
            elif payload is not None:
                entry["payload"] = REDACTED
        key = entry.get("key")
        if isinstance(key, dict):
            entry["key"] = {k: value(patterns, [keyspace, table, k], v) for k, v in key.items()}
        out.append(entry)
    return out


def payload_report(patterns: Sequence[Pattern], keyspace: str, table: str,
                   report: dict[str, Any]) -> dict[str, Any]:
    """A DESCRIBE PAYLOAD report of keyspace.table (a report of its payloads' schema, and the JSON
    Schema made of it): a path the patterns redact, and every path inside it, is left out (its
    types and presence tell of its values); a path holding one keeps where it is, how often and
    its types, and drops its values (frequent values, lengths, bounds)."""
    if not patterns:
        return report
    report = dict(report)
    places = []
    for place in report.get("places") or []:
        if not isinstance(place, dict):
            places.append(place)
            continue
        place = dict(place)
        paths = []
        for entry in place.get("paths") or []:
            text = entry.get("path") if isinstance(entry, dict) else None
            at = [keyspace, table, *map(normal, split_path(text))] if isinstance(text, str) else None
            if at is not None and covered(patterns, at):
                continue
            if at is not None and touches(patterns, at):
                entry = {k: entry[k] for k in _PATH_KEEPS if k in entry} | {"redacted": True}
            paths.append(entry)
        if "paths" in place:
            place["paths"] = paths
        places.append(place)
    if "places" in report:
        report["places"] = places
    return report
