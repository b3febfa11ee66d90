"""docs/features.md, written from the declarations (features/reads.py, write_features.py,
shell_features.py, and the shell's commands and statements: features/shell_commands.py): every
feature's name, title, what it reads or writes, its scope, its service and description, and each
one's arguments; then every statement and command of the shell's, its form or words and its HELP.
tools/features_table.py writes the file; tests/mcp_server/test_declarations.py holds it equal to
this."""

from __future__ import annotations

from cqlsh_ext.features.feature import Feature
from cqlsh_ext.features.forms import form, statement_words, usage

HEADER = """# Features

Generated from the declarations in `cqlsh_ext/features/` (reads.py, write_features.py,
shell_features.py, shell_commands.py) by `tools/features_table.py`; do not edit by hand
(tests/mcp_server/test_declarations.py holds this file equal to what they generate).

Each read feature is served as an MCP tool of the same name (docs/mcp.md), which adds `max_bytes`
(its answer's cap as sent) to its arguments; MCP's guard scopes each call by what the feature reads,
and OAuth asks for its scope. A feature whose section names its statement in the shell is read there
from this declaration (its words, `[JSON]`, its required arguments in order, an argument with a
keyword after that word: `SAMPLE n`, a SELECT for the table where it says so, the shell's closing
clauses), its usage, refusals, HELP and Tab completion written from it too; one whose section names
its method in the Python API (`db.stats(...)`) has that method, made from the declaration
(docs/api.md).

A feature of the shell only (its scope says so: COMPRESSION TRIAL, which writes scratch tables) is a
statement of the shell alone, read from its declaration as the others are; it is no MCP tool and
no method of the Python API.

Each write feature (scope `cqlsh.write`) is a statement of the shell and the Python API's method of
its name (`db.edit`, `db.rewrite`, `db.resume`, `db.undo`), which hands its request to the declared
service; a preview unless confirmed, each row written on its condition and journaled, undone by
`undo` (docs/edit.md, docs/rewrite.md). None is an MCP tool: `propose_edit` proposes the statement a
person runs. A package declares read features only.

A read feature a package declares (the entry point group `cqlsh_ext.features`) is served from its
declaration at every front end: an MCP tool of its name; in the shell the statement of its name's
words, upper case, then its required arguments in order and any as `name = value` (`toy_rows`:
`TOY ROWS ks.t;`), listed by HELP, `HELP TOY ROWS` its document, Tab completing its words and its
arguments' names (a name whose first word starts a statement of the shell's, `select_sample`, is
no statement there: HELP says so); in the Python API
`db.feature("toy_rows", table="ks.t")`.
"""


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _reads(feature: Feature) -> str:
    """What it reads, or for a write feature what it writes."""
    touched = feature.reads if feature.writes is None else feature.writes
    what = touched.what if feature.writes is None else f"writes {touched.what}"
    return what if touched.argument is None else f"{what} (`{touched.argument}`)"


def reference(features: dict[str, Feature]) -> str:
    """The Markdown of docs/features.md for `features`."""
    lines = [HEADER, "| feature | title | reads, writes | scope | service | what it answers |",
             "|---|---|---|---|---|---|"]
    for feature in features.values():
        service = f"`{feature.service}`" if feature.service is not None else "its front end's own reading"
        scope = "the shell only" if feature.shell_only else f"`{feature.scope}`"
        lines.append(f"| `{feature.name}` | {_cell(feature.title)} | {_reads(feature)} | {scope} | "
                     f"{service} | {_cell(feature.description)} |")
    for feature in features.values():
        lines += ["", f"## {feature.name}", "", _cell(feature.details or feature.description)]
        if feature.statement is not None:
            lines += ["", f"In the shell: `{' '.join(statement_words(feature))} {usage(feature)}`, e.g. "
                          f"`{feature.statement.example}`"]
        if feature.method is not None:
            lines += ["", f"In the Python API: `db.{feature.method.name}(...)`"]
        lines += ["", "| argument | type | required | what it is |", "|---|---|---|---|"]
        for argument in feature.arguments:
            required = "yes" if argument.required else ""
            kind = argument.type or "any"
            lines.append(f"| `{argument.name}` | {kind} | {required} | {_cell(argument.doc)} |")
    return "\n".join([*lines, *_shell(features)]) + "\n"


def _shell(features: dict[str, Feature]) -> list[str]:
    """Every statement and command the shell adds to cqlsh's, each with how HELP asks for it: the
    features' statements (their form), the commands (their word), the statement intercepts (what
    they take)."""
    from cqlsh_ext.features.commands import commands, intercepts

    lines = ["", "## The shell's statements and commands", "",
             "Every statement and command cqlsh-ext adds to cqlsh's, declared once; the shell reads a "
             "feature's statement from its declaration, a command's or an intercepted statement's by "
             "the handler its declaration names (docs/architecture.md).", "",
             "| statement or command | declared | HELP |", "|---|---|---|"]
    for feature in features.values():
        if feature.statement is not None:
            lines.append(f"| `{_cell(form(feature))}` | feature `{feature.name}` | "
                         f"HELP {' '.join(statement_words(feature))} |")
    for declared in commands():
        if declared.handler is not None:
            lines.append(f"| `{declared.word.upper()}` | command | HELP {declared.word.upper()} |")
    for intercept in intercepts():
        if intercept.handler is not None:
            topics = ", ".join(f"HELP {topic.upper()}" for topic, _ in intercept.topics) \
                or "(none of its own)"
            lines.append(f"| {_cell(intercept.name)} | statement intercept | {topics} |")
    return lines
