"""`cqlsh-ext --spec` and `cqlsh-ext skill`: the command line described to a program. The spec is
held to a JSON Schema written here and to the declarations it must list (every statement and
command the shell adds, every flag of both parsers, every exit code and output format); the skill
is read with a YAML parser as skill loaders read it, and every command it shows runs on the demo's
data and answers as it says."""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path

import yaml
from jsonschema import Draft202012Validator
from shell_runner import CQLSH_EXT, run, said_lines

_NAMES = {"type": "array", "items": {"type": "string", "minLength": 1}, "minItems": 1}
SPEC_SCHEMA = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "required": ["spec_version", "program", "version", "flags", "tools", "statements", "output_formats",
                 "exit_codes", "error", "stats", "read_only", "reports"],
    "properties": {
        "spec_version": {"type": "integer", "minimum": 1},
        "program": {"const": "cqlsh-ext"},
        "version": {"type": "string", "pattern": r"^\d+\.\d+"},
        "flags": {"type": "array", "items": {
            "type": "object", "required": ["flags", "takes", "type", "default", "help", "owner"],
            "properties": {"flags": _NAMES, "takes": {"enum": ["switch", "value", "optional", "repeat"]},
                           "type": {"type": "string", "minLength": 1},
                           "metavar": {"type": ["string", "null"]}, "help": {"type": "string"},
                           "owner": {"enum": ["cqlsh", "cqlsh-ext"]}}}},
        "tools": {"type": "array", "items": {"type": "object", "required": ["name", "command", "does"]}},
        "statements": {"type": "array", "items": {
            "type": "object", "required": ["kind", "words", "writes", "read_only"],
            "properties": {"kind": {"enum": ["feature", "command", "intercept"]}, "words": {"type": "string"},
                           "writes": {"type": "boolean"}, "read_only": {"type": "boolean"}}}},
        "output_formats": {"type": "array", "items": {"type": "object", "required": ["name", "machine"]}},
        "exit_codes": {"type": "array", "items": {
            "type": "object", "required": ["code", "name", "meaning"],
            "properties": {"code": {"type": "integer", "minimum": 0, "maximum": 255},
                           "name": {"type": "string", "pattern": "^[a-z_]+$"}}}},
        "error": {"type": "object", "required": ["fields", "kinds"]},
        "stats": {"type": "object", "required": ["fields"]},
        "read_only": {"type": "object", "required": ["runs", "exit_code"]},
        "reports": {"type": "array", "minItems": 1, "items": {
            "type": "object", "required": ["statement", "schema"],
            "properties": {"schema": {"type": "object", "minProperties": 1}}}},
    },
}


def _spec(home: Path) -> dict[str, object]:
    result = run(CQLSH_EXT, ["--spec"], home)
    assert result.returncode == 0 and not result.stderr, result.stderr
    return dict(json.loads(result.stdout))


def test_the_spec_validates_and_lists_every_declared_statement(home: Path) -> None:
    import argparse

    from cqlsh_ext import cli
    from cqlsh_ext.features import declared
    from cqlsh_ext.features.commands import claims, commands
    from cqlsh_ext.upstream.seams import import_cqlshmain

    spec = _spec(home)
    Draft202012Validator.check_schema(SPEC_SCHEMA)
    errors = list(Draft202012Validator(SPEC_SCHEMA).iter_errors(spec))
    assert not errors, [(e.json_path, e.message) for e in errors[:5]]
    statements = spec["statements"]
    assert isinstance(statements, list)
    words = {s["words"] for s in statements}
    for feature in declared().values():
        if feature.statement is not None:
            assert " ".join(feature.statement.words) in words, feature.name
    for command in commands():
        if command.handler is not None:
            assert command.word.upper() in words, command.word
    names = {s.get("name") or s.get("feature") for s in statements}  # a claim: its feature's statement
    assert {claim.name for claim in claims()} <= names
    flags = {flag for entry in spec["flags"] for flag in entry["flags"]}  # type: ignore[union-attr]
    for parser in (import_cqlshmain(None).parser, cli._ext_parser()):
        for action in parser._actions:
            if action.option_strings and action.help != argparse.SUPPRESS:
                assert set(action.option_strings) <= flags, action.option_strings
    assert {"--read-only", "--timeout", "--stats", "--max-rows", "--resume", "--spec"} <= flags
    codes = {(e["code"], e["name"]) for e in spec["exit_codes"]}  # type: ignore[union-attr]
    assert {(0, "ok"), (1, "connection"), (2, "statement"), (3, "refused"), (4, "timed_out"),
            (70, "internal"), (130, "interrupted")} <= codes
    assert {f["name"] for f in spec["output_formats"]} == {"table", "vertical", "json", "csv"}  # type: ignore[union-attr]
    by_flag = {entry["flags"][-1]: entry for entry in spec["flags"]}  # type: ignore[union-attr, index]
    assert (by_flag["--stats"]["type"], by_flag["--stats"]["default"]) == ("boolean", False)
    assert by_flag["--max-rows"]["type"] == "integer" and by_flag["--max-rows"]["unset"] == "every row"
    assert (by_flag["--request-timeout"]["type"], by_flag["--request-timeout"]["default"]) == ("integer", 10)
    assert {"--catalog", "--export-dir", "--credentials"} <= set(by_flag)
    assert {"--serve", "--session", "--session-status", "--session-idle"} <= set(by_flag)
    idle = by_flag["--session-idle"]
    assert idle["type"].startswith("number") and idle["unset"] == "900"
    reports = {r["statement"] or r["flag"]: r["schema"] for r in spec["reports"]}  # type: ignore[union-attr]
    for schema in reports.values():
        Draft202012Validator.check_schema(schema)
    assert {"DESCRIBE PAYLOAD", "COMPRESSION STATS", "INSPECT", "--catalog"} <= set(reports)
    by_words = {s["words"]: s for s in statements}
    assert by_words["UNDO"]["read_only"] is False and by_words["COMPRESSION STATS"]["read_only"] is True
    assert by_words["COMPRESSION TRIAL"]["read_only"] is False
    # The shell's COPY (SELECT ...) TO writes the file it names, not MCP's tool's export directory.
    copy_to = next(s for s in statements if s.get("feature") == "export")
    assert "export directory" not in copy_to["description"] and "the file it names" in copy_to["description"]


def test_the_skill_is_written_read_as_a_skill_and_every_command_in_it_runs(demo_keyspace: str,
                                                                          connected_home: Path) -> None:
    import subprocess

    from shell_runner import isolated_env

    from cqlsh_ext import __version__

    home = connected_home
    written = run(CQLSH_EXT, ["skill", str(home / "skills" / "cqlsh-ext")], home)
    assert written.returncode == 0, written.stderr
    path = home / "skills" / "cqlsh-ext" / "SKILL.md"
    assert written.stdout.strip() == str(path)
    text = path.read_text()
    assert text == run(CQLSH_EXT, ["skill", "-"], home).stdout
    # without DIR: where every agent finds a project's skills, .agents/skills and .claude/skills
    project = home / "project"
    project.mkdir()
    landed = subprocess.run([CQLSH_EXT, "skill"], cwd=project, env=isolated_env(home), capture_output=True,
                            text=True, timeout=60)
    both = [Path(".agents/skills/cqlsh-ext/SKILL.md"), Path(".claude/skills/cqlsh-ext/SKILL.md")]
    assert landed.returncode == 0 and landed.stdout.split() == [str(p) for p in both], landed
    assert all((project / p).read_text() == text for p in both)
    for named in ("--credentials", "--catalog", "--export-dir", "--serve", "--session ", "--session-status"):
        assert named in text, named
    head, body = re.fullmatch(r"---\n(.*?)\n---\n(.*)", text, re.DOTALL).groups()  # type: ignore[union-attr]
    front = yaml.safe_load(head)
    assert set(front) == {"name", "description"}
    assert re.fullmatch(r"[a-z0-9]+(?:-[a-z0-9]+)*", front["name"]) and len(front["name"]) <= 64
    assert 0 < len(front["description"]) <= 1024 and __version__ in front["description"]
    assert f"cqlsh-ext {__version__}" in body
    commands = [line for block in re.findall(r"^```\n(.*?)^```", body, re.DOTALL | re.MULTILINE)
                for line in block.splitlines() if line.startswith("cqlsh-ext ")]
    examples = [c for c in commands if '-e "STATEMENT"' not in c]
    assert len(examples) >= 8
    for command in examples:
        args = shlex.split(command.replace("compression_demo", demo_keyspace))
        assert "--read-only" in args, command
        result = run(CQLSH_EXT, args[1:], home)
        assert result.returncode == 0, (command, result.stderr)
        said = said_lines(result.stderr)
        stats = json.loads(said[-1])
        assert stats["type"] == "stats" and stats["exit"] == {"code": 0, "name": "ok"}, (command, said)
        assert not [line for line in said if '"type": "error"' in line], (command, said)
        out = result.stdout.strip()
        assert out, command
        if '-e "DESCRIBE ' in command and "PAYLOAD" not in command:
            assert demo_keyspace in out, (command, out[:200])  # cqlsh's DESCRIBE: its text, as ever
            continue
        try:  # JSON Lines, or one report's JSON document
            [json.loads(line) for line in out.splitlines()]
        except json.JSONDecodeError:
            json.loads(out)
