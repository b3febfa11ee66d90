"""Every tool's arguments are held to the input schema it declares in tools/list (issue 105): for each
property of each tool's declared `inputSchema`, a JSON null, a value of another type and one past
its bound (one entry too many, one character too many, one over the maximum, one under the
minimum, a word not in its enum), and one argument the schema does not name, each sent through the
MCP SDK's own client over stdio to the server on the real Cassandra, is refused in one line naming
the argument: never taken as absent, never run."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

#: A value of each JSON type but the one named, for "another type".
_OTHER = {"string": 7, "integer": "7", "number": "7", "boolean": "yes", "object": ["a"], "array": {}}
#: How the refusal names a JSON type.
_KINDS = {"integer": "a whole number", "number": "a number", "boolean": "true or false", "array": "a list",
          "object": "an object", "string": "a string"}


def _valid(name: str, keyspace: str) -> Any:
    """A value the tools take for a required argument `name`, on the demo's tables."""
    return {"keyspace": keyspace, "table": f"{keyspace}.blob_formats",
            "column": f"{keyspace}.blob_formats.data", "path": "data.status",
            "statement": f"SELECT name FROM {keyspace}.blob_formats LIMIT 1"}[name]


def _bad_values(name: str, schema: dict[str, Any]) -> list[tuple[str, Any, str]]:
    """(what, value, the words its refusal must hold) for property `name` of `schema`."""
    kind = schema.get("type")
    cases: list[tuple[str, Any, str]] = []
    if kind is not None:  # (a property of any type, propose_edit's value, takes null as a value)
        cases += [("null", None, f"{name} takes {_KINDS[kind]}, not null"),
                  ("another type", _OTHER[kind], f"{name} takes {_KINDS[kind]}")]
    if "maxProperties" in schema:
        most = schema["maxProperties"]
        entries = {f"c{i}": "gzip" for i in range(most + 1)}
        cases.append(("one entry too many", entries, f"{name} takes at most {most} entries, not {most + 1}"))
    if isinstance(schema.get("additionalProperties"), dict):
        cases.append(("an entry of another type", {"data": 1}, f"{name}.data takes"))
    if "maxLength" in schema:
        # (refused before it is queued, as any argument past its bytes: bounds.check_arguments)
        cases.append(("one character too many", "a" * (schema["maxLength"] + 1),
                      f"the {name} argument of {schema['maxLength'] + 1:,} bytes is more than"))
    if "maximum" in schema:
        cases.append(("one over", schema["maximum"] + 1, f"{name} is at most "))
    if "minimum" in schema:
        cases.append(("one under", schema["minimum"] - 1, f"{name} is at least "))
    if "enum" in schema:
        cases.append(("not in its enum", "no-such-word", f"unknown {name} 'no-such-word'"))
    if name == "max_bytes":  # MCP's own argument, refused in its own words but for a null
        return [(what, value, words if value is None else "max_bytes must be a whole number from 1,024 to "
                 "1,048,576") for what, value, words in cases]
    return cases


@pytest.mark.server
def test_every_tool_refuses_what_its_declared_schema_does_not_take(serve, demo, tmp_path: Path) -> None:
    from cqlsh_ext.mcp_server.tools import TOOLS

    server = serve("--export-dir", str(tmp_path / "exports"))
    declared = {tool.name: tool.input_schema for tool in server.tools()}
    assert set(declared) == set(TOOLS), set(TOOLS) ^ set(declared)  # every tool, walked
    taken: list[str] = []
    tried = 0
    for tool, schema in declared.items():
        base = {name: _valid(name, demo.keyspace) for name in schema.get("required", [])}
        cases = [(name, what, value, words) for name, prop in schema["properties"].items()
                 for what, value, words in _bad_values(name, prop)]
        cases.append(("no_such_argument", "an argument it does not declare", 1,
                      "unknown argument 'no_such_argument'"))
        for name, what, value, words in cases:
            answer = server.call(tool, **{**base, name: value})
            tried += 1
            text = answer.texts[0] if answer.texts else ""
            if not (answer.is_error and len(answer.texts) == 1 and "\n" not in text
                    and words in text):
                taken.append(f"{tool} {name} ({what}): {text[:160]!r}")
    assert not taken, f"{len(taken)} of {tried} not refused as declared:\n" + "\n".join(taken)
    assert tried > 60
