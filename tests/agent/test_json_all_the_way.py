"""Under `--output-format json` a program reads nothing but JSON (docs/agents.md): every statement the
skill (`cqlsh-ext skill -`) and `--spec` name, run as an assistant runs them on the demo's data,
prints JSON lines on standard output (DESCRIBE's schema as objects, not CQL text) and one JSON
object a line on standard error (`error`, `note`, `warning`, `truncated`, `stats`), and a path no
document holds is a `warning` that names the nearest paths, the answer not `exact`."""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path

from shell_runner import CQLSH_EXT, run

DEMO = "compression_demo"
#: What a line on standard error may be.
STDERR_TYPES = {"error", "note", "warning", "truncated", "stats"}
#: The spec's examples name tables of their own: read on the demo's instead.
SPEC_NAMES = (("shop.orders.data", f"{DEMO}.table_with_compressed_json.data"),
              ("ks.t WHERE id = 42", f"{DEMO}.blob_formats WHERE name = 'zstd'"),
              ("ks.t", f"{DEMO}.table_with_compressed_json"))
#: DESCRIBE's forms beside the skill's.
DESCRIBES = ("DESCRIBE KEYSPACES", "DESCRIBE TABLES", f"DESCRIBE KEYSPACE {DEMO}",
             f"DESCRIBE TABLE {DEMO}.table_with_compressed_json", "DESCRIBE CLUSTER", "DESCRIBE TYPES")


def _skill_statements_and_flags(home: Path) -> tuple[list[str], list[str]]:
    """The statements of the skill's examples, and the flags it runs them with."""
    text = run(CQLSH_EXT, ["skill", "-"], home).stdout
    commands = [shlex.split(line) for line in re.findall(r"^cqlsh-ext .*$", text, re.MULTILINE)]
    commands = [args for args in commands if "-e" in args]  # (--catalog's: tests/agent/test_catalog.py)
    statements = [args[args.index("-e") + 1] for args in commands if "STATEMENT" not in args]
    flags = next(args[1:args.index("-e")] for args in commands)
    return statements, flags


def _spec_statements(home: Path) -> list[str]:
    spec = json.loads(run(CQLSH_EXT, ["--spec"], home).stdout)
    out = []
    for entry in spec["statements"]:
        example = entry.get("example")
        if example and entry["read_only"]:
            for named, demo in SPEC_NAMES:
                example = example.replace(named, demo)
            out.append(example.rstrip(";"))
    return out


def _lines(text: str) -> list[dict[str, object]]:
    """Each non-blank line parsed as one JSON object (a line that is not fails the test)."""
    out = []
    for line in text.splitlines():
        if not line.strip():
            continue
        try:
            parsed = json.loads(line)
        except json.JSONDecodeError:
            raise AssertionError(f"not a JSON line: {line[:200]!r}") from None
        assert isinstance(parsed, dict), line[:200]
        out.append(parsed)
    return out


def test_every_statement_the_skill_and_the_spec_name_prints_only_json(demo_keyspace: str,
                                                                     connected_home: Path) -> None:
    home = connected_home
    statements, flags = _skill_statements_and_flags(home)
    statements += _spec_statements(home)
    statements += DESCRIBES
    assert len(statements) >= 18
    script = home / "statements.cql"
    script.write_text("".join(f"{s.replace(DEMO, demo_keyspace)};\n" for s in statements))
    result = run(CQLSH_EXT, [*flags, "-f", str(script)], home)
    out, said = _lines(result.stdout), _lines(result.stderr)
    assert {str(o["type"]) for o in said} <= STDERR_TYPES, said
    assert said[-1]["type"] == "stats" and said[-1]["statements"] == len(statements), said[-1]
    # DESCRIBE's answers are objects: the keyspaces, a keyspace's tables, a table's columns and keys.
    described = {str(o["describe"]): o for o in out if "describe" in o and "places" not in o}
    assert demo_keyspace in described["keyspaces"]["keyspaces"]  # type: ignore[operator]
    assert {"keyspace": demo_keyspace, "table": "blob_formats"} in described["tables"]["tables"]  # type: ignore[operator]
    keyspace = described["keyspace"]
    assert keyspace["keyspace"] == demo_keyspace and "replication" in keyspace
    assert "table_with_compressed_json" in {t["table"] for t in keyspace["tables"]}  # type: ignore[attr-defined, union-attr]
    table = described["table"]
    assert table["partition_key"] == ["id"] and table["clustering_key"] == []
    assert {"name": "data", "type": "blob", "key": None, "holds": "blob"} in table["columns"]  # type: ignore[operator]
    assert "compression" in table["options"]  # type: ignore[operator]
    assert described["cluster"]["cluster"]
    # the payload query's closing figures are a note, with its numbers
    notes = [o for o in said if o["type"] == "note" and o.get("kind") == "payload_query"]
    assert notes and all(isinstance(n["rows_read"], int) for n in notes), said


def test_a_path_no_document_holds_is_a_warning_naming_the_nearest_and_the_answer_not_exact(
        demo_keyspace: str, connected_home: Path) -> None:
    result = run(CQLSH_EXT, ["--read-only", "--output-format", "json", "--stats", "-e",
                             f"SELECT data.stauts FROM {demo_keyspace}.table_with_compressed_json LIMIT 2"],
                 connected_home)
    assert result.returncode == 0, result.stderr
    assert _lines(result.stdout) == [{"data.stauts": None}, {"data.stauts": None}]
    said = _lines(result.stderr)
    [warning] = [o for o in said if o["type"] == "warning"]
    assert warning["kind"] == "path_not_found" and warning["path"] == "data.stauts", warning
    assert "data.status" in warning["nearest"], warning  # type: ignore[operator]
    assert "data.status" in str(warning["message"])
    stats = said[-1]
    assert stats["type"] == "stats" and stats["exact"] is False, stats
