"""`cqlsh-ext --spec`: the command line as one JSON document, for a program or an assistant to read
instead of --help: every flag (cqlsh's and cqlsh-ext's, from the parsers themselves), every tool
(`cqlsh-ext <tool>`), every statement and command the shell adds to cqlsh's (from the declarations:
features, commands) with whether --read-only runs it, the output formats, the exit
codes, the kinds of error a JSON error names and the fields of --stats. Versioned twice: the
document's own shape (`spec_version`, raised when a field changes meaning or goes) and the
program's (`version`).
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from typing import Any

#: The document's shape: raised when a field is taken away or changes meaning (new fields do not).
SPEC_VERSION = 1
#: What --stats' object holds, field by field.
STATS_FIELDS = {
    "type": "always \"stats\"",
    "statements": "statements run",
    "rows": "rows the run's SELECTs printed",
    "exact": "nothing was cut and every statement ran",
    "truncated": "an answer was cut short",
    "truncated_why": "why, in order: max_rows, timed_out, interrupted (null when nothing was cut)",
    "resume": "the --resume token that goes on with the first answer cut, from its next row (null: none)",
    "values": "blob values printed that decoded, and those that did not: {decoded, undecodable}",
    "elapsed_s": "seconds from the start of the run to its end",
    "cpu_s": "CPU seconds of the process and its worker processes",
    "exit": "the run's exit code and its name: {code, name}",
}


def spec(cqlsh_parser: argparse.ArgumentParser, ext_parser: argparse.ArgumentParser,
         tools: Sequence[tuple[str, str]]) -> dict[str, Any]:
    """The document, from cqlsh's parser and cqlsh-ext's, and the tools --help lists."""
    from cqlsh_ext import __version__
    from cqlsh_ext.agent.errors import KINDS
    from cqlsh_ext.agent.read_only import RUNS
    from cqlsh_ext.common.exits import EXITS
    from cqlsh_ext.features.read_rule import SESSION_WORDS
    from cqlsh_ext.settings.output_formats import DECLARED
    from cqlsh_ext.upstream.seams import import_cqlshmain

    return {
        "spec_version": SPEC_VERSION,
        "program": "cqlsh-ext",
        "version": __version__,
        "cqlsh_version": str(import_cqlshmain(None).version),
        "usage": "cqlsh-ext [options] [host [port]] | cqlsh-ext <tool> ...",
        "flags": [*_flags(cqlsh_parser, "cqlsh"), *_flags(ext_parser, "cqlsh-ext")],
        "tools": [{"name": command.split()[1], "command": command, "does": does} for command, does in tools],
        "statements": statements(),
        "read_only": {"runs": RUNS, "session_commands": sorted(word.upper() for word in SESSION_WORDS),
                      "turned_on_by": ["--read-only", "--policy"],
                      "exit_code": next(e.code for e in EXITS if e.name == "refused")},
        "output_formats": [{"name": fmt.name, "machine": fmt.machine, "help": fmt.help,
                            "reports_as_json": fmt.reports_as_json} for fmt in DECLARED],
        "exit_codes": [{"code": e.code, "name": e.name, "meaning": e.meaning} for e in EXITS],
        "error": {"fields": ["type", "kind", "message", "hint", "position", "detail"],
                  "kinds": [{"kind": k.name, "meaning": k.meaning, "hint": k.hint} for k in KINDS]},
        "stats": {"fields": STATS_FIELDS},
        "reports": reports(),
    }


def spec_text(cqlsh_parser: argparse.ArgumentParser, ext_parser: argparse.ArgumentParser,
              tools: Sequence[tuple[str, str]]) -> str:
    return json.dumps(spec(cqlsh_parser, ext_parser, tools), indent=1, ensure_ascii=False)


#: A value's type by the setting's parser (cqlsh_ext.settings: each Key's `parse`), as --spec says it.
_VALUE_TYPES = {
    "parse_bool": "boolean", "parse_count": "integer", "parse_seconds": "number (seconds; 30, 2.5, 2m)",
    "parse_duration": "number (seconds; 90, 30m, 1h, 2d)", "parse_size": "integer (bytes; 256MiB, 1GiB)",
    "parse_width": "integer", "parse_path": "path", "parse_paths": "path", "parse_url": "url",
}


def _flag_value(owner: str, action: argparse.Action, takes: str) -> dict[str, Any]:
    """A flag's value: its `type` (boolean for a switch, else what it is read as), its `default` (the
    value that holds without it; null when none) and, where none, what holds instead (`unset`)."""
    if owner == "cqlsh-ext":
        from cqlsh_ext.settings import SETTINGS

        key = next((k for k in SETTINGS if k.name == action.dest), None)
        if key is not None:
            kind = "boolean" if takes == "switch" else _VALUE_TYPES.get(key.parse.__name__, "string")
            default: Any = key.default
            if kind == "boolean":
                default = default == "true"
            elif kind == "integer" and default is not None and default.isdigit():
                default = int(default)
            return {"type": kind, "default": default,
                    **({"unset": key.unset} if default is None and key.unset else {})}
    if takes == "switch":
        return {"type": "boolean", "default": bool(action.default) if action.default is not None else False}
    default = action.default if action.default not in (None, argparse.SUPPRESS) else None
    numeric = action.type if action.type in (int, float) else type(default)
    kind = "integer" if numeric is int else "number" if numeric is float else "string"
    return {"type": kind, "default": default}


def _flags(parser: argparse.ArgumentParser, owner: str) -> list[dict[str, Any]]:
    """Each flag of `parser`: its spellings, what it takes, its value's name, type and default, its
    help and group."""
    groups = {id(action): group.title for group in parser._action_groups for action in group._group_actions}
    out = []
    for action in parser._actions:
        if not action.option_strings or action.help == argparse.SUPPRESS:
            continue
        takes = ("switch" if action.nargs == 0 else "optional" if action.nargs == "?"
                 else "repeat" if isinstance(action, argparse._AppendAction) else "value")
        entry: dict[str, Any] = {"flags": list(action.option_strings), "takes": takes,
                                 "metavar": _metavar(action) if takes != "switch" else None,
                                 **_flag_value(owner, action, takes),
                                 "help": _help(parser, action), "owner": owner,
                                 "group": groups.get(id(action))}
        if action.choices is not None:
            entry["choices"] = [str(choice) for choice in action.choices]
        out.append(entry)
    return out


def _metavar(action: argparse.Action) -> str:
    metavar = action.metavar
    if isinstance(metavar, tuple):
        return " ".join(metavar)
    return str(metavar or action.dest.upper())


def _help(parser: argparse.ArgumentParser, action: argparse.Action) -> str:
    text = str(action.help or "")
    try:
        return " ".join((text % {**vars(action), "prog": parser.prog}).split())
    except (KeyError, TypeError, ValueError):
        return " ".join(text.split())


def reports() -> list[dict[str, Any]]:
    """The JSON Schema of each report a statement answers with `--output-format json` (its feature's
    declared output_schema: cqlsh_ext.features), and of --catalog's document."""
    from cqlsh_ext.agent.catalog import SCHEMA as CATALOG
    from cqlsh_ext.features import declared
    from cqlsh_ext.features.forms import statement_words

    out: list[dict[str, Any]] = [{"statement": " ".join(statement_words(feature)), "feature": feature.name,
            "schema": feature.output_schema}
           for feature in declared().values() if feature.statement is not None and feature.output_schema
           and feature.statement.read_from_declaration]  # a claim's or command's answers as it prints
    out.append({"statement": None, "flag": "--catalog", "schema": CATALOG})
    return out


def statements() -> list[dict[str, Any]]:
    """Every statement and command the shell adds to cqlsh's: each feature's statement (its form and
    example; one that claims its own among CQL's statements too) and each command (its word), with
    what it does to stored data and whether --read-only runs it."""
    from cqlsh_ext.agent.read_only import runs_read_only
    from cqlsh_ext.features import declared
    from cqlsh_ext.features.commands import commands
    from cqlsh_ext.features.forms import form, statement_words

    features = declared()
    out: list[dict[str, Any]] = []
    for feature in features.values():
        if feature.statement is None or feature.statement.parsed is not None:
            continue  # a statement cqlsh's grammar parses is a command, listed below
        # A claimed statement writes what its feature declares it writes (as the read-only rule reads
        # it: features.commands); a statement read from its declaration that is the shell's alone
        # writes scratch tables (COMPRESSION TRIAL).
        writes = feature.writes is not None or (feature.shell_only and feature.statement.claims is None)
        # A claimed statement (Statement.claims) is read by the rule by its words, as the shell's
        # door hands it: the feature's declaration is not what it is read by.
        ruled = feature if feature.statement.claims is None else None
        out.append({"kind": "feature", "words": " ".join(statement_words(feature)), "form": form(feature),
                    "example": feature.statement.example, "feature": feature.name,
                    "description": feature.statement.describes or feature.description, "writes": writes,
                    "read_only": runs_read_only(feature.statement.example, ruled)})
    for command in commands():
        if command.handler is None:
            continue  # its statement is a feature's, listed above
        out.append({"kind": "command", "words": command.word.upper(), "writes": not command.reads_only,
                    "read_only": runs_read_only(command.word)})
    return out
