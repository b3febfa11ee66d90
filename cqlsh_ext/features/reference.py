"""docs/features.md, written from the declarations (features/reads.py, features/write_features.py): every
feature's name, title, what it reads or writes, its scope, its service and description, and each
one's arguments.
tools/features_table.py writes the file; tests/mcp_server/test_declarations.py holds it equal to
this."""

from __future__ import annotations

from cqlsh_ext.features.feature import Feature
from cqlsh_ext.features.forms import statement_words, usage

HEADER = """# Features

Generated from the declarations in `cqlsh_ext/features/reads.py` and `write_features.py` by
`tools/features_table.py`; do not edit by hand (tests/mcp_server/test_declarations.py holds this
file equal to what they generate).

Each read feature is served as an MCP tool of the same name (docs/mcp.md), which adds `max_bytes`
(its answer's cap as sent) to its arguments; MCP's guard scopes each call by what the feature reads,
and OAuth asks for its scope. The shell and the Python API reach these through their own statements
and methods (docs/insight.md, docs/describe.md, docs/api.md); a feature whose section names its
statement in the shell is read there from this declaration (its words, `[JSON]`, its required
arguments in order, an argument with a keyword after that word: `SAMPLE n`, a SELECT for the table
where it says so, the shell's closing clauses), the others by cqlsh's grammar.

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
        lines += ["", "| argument | type | required | what it is |", "|---|---|---|---|"]
        for argument in feature.arguments:
            required = "yes" if argument.required else ""
            kind = argument.type or "any"
            lines.append(f"| `{argument.name}` | {kind} | {required} | {_cell(argument.doc)} |")
    return "\n".join(lines) + "\n"
