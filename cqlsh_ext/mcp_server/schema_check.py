"""A call's arguments held to the input schema its tool declares (tools/list's `inputSchema`), as
declared: each value's type (a JSON null is no value of a declared type, never an argument left
out), its bounds (minimum, maximum, maxLength, maxProperties, enum), every required one, and no
argument the schema does not name. Checked by the validator the MCP SDK itself depends on
(jsonschema), before the feature's own checks and before the guard reads anything; refused in one
line that names the argument and what it takes, never echoing a value that may be long."""

from __future__ import annotations

from typing import Any

#: A JSON type as the lines say it.
_KINDS = {"integer": "a whole number", "number": "a number", "boolean": "true or false", "array": "a list",
          "object": "an object", "string": "a string", "null": "null"}


def refusal(tool: str, schema: dict[str, Any], arguments: Any, at: str = "") -> str | None:
    """Why `arguments` do not hold to `schema` (tool `tool`'s input schema; `at`: the argument they
    are, when they are one), in one line; None: they do."""
    from jsonschema import Draft202012Validator
    from jsonschema.exceptions import best_match

    error = best_match(Draft202012Validator(schema).iter_errors(arguments))
    if error is None:
        return None
    where = ".".join([*([at] if at else []), *(str(step) for step in error.absolute_path)])
    rule, bound, value = error.validator, error.validator_value, error.instance
    if rule == "additionalProperties" and not where:
        from cqlsh_ext.common.text import unknown

        declared = list(schema.get("properties", {}))
        extra = sorted(set(value) - set(declared))
        return f"{tool}: " + unknown("argument", extra[0], declared)
    if rule == "required":
        missing = [name for name in bound if name not in value]
        return f"{tool}: {missing[0] if missing else 'an argument'} is required"
    if rule == "type":
        kinds = [bound] if isinstance(bound, str) else bound
        wanted = " or ".join(_KINDS.get(kind, kind) for kind in kinds)
        return f"{tool}: {where} takes {wanted}, not {_KINDS[_kind(value)]}"
    said = {
        "maxProperties": lambda: f"takes at most {bound} entries, not {len(value)}",
        "minProperties": lambda: f"takes at least {bound} entries, not {len(value)}",
        "maxLength": lambda: f"is at most {bound:,} characters, not {len(value):,}",
        "minLength": lambda: f"is at least {bound:,} characters",
        "maximum": lambda: f"is at most {bound:,}, not {value:,}",
        "minimum": lambda: f"is at least {bound:,}, not {value:,}",
        "enum": lambda: f"is one of {', '.join(map(str, bound))}",
    }.get(str(rule))
    what = said() if said is not None else f"does not hold to its schema ({rule})"
    return f"{tool}: {where or 'the arguments'} {what}"


def null_refusal(tool: str, schema: dict[str, Any], arguments: dict[str, Any]) -> str | None:
    """The line for the first argument given as a JSON null where its schema takes no null (a null
    is no argument left out: said before any other check, which would read it as missing); None:
    there is none."""
    declared = schema.get("properties", {})
    for name, value in arguments.items():
        if value is None and name in declared:
            why = refusal(tool, declared[name], None, at=name)
            if why is not None:
                return why
    return None


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    return "array" if isinstance(value, list) else "object"
