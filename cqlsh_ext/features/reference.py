"""The reference of docs/features.md, written from the declarations when it is shown (`cqlsh-ext
docs features` reads the guide, whose marker names `generated`): every feature's name, title, what
it reads or writes, its scope, its service and description, and each one's arguments; then every
statement and command of the shell's, its form or words and its HELP. cqlsh-ext's own features and
those of the packages installed beside it (the entry point group cqlsh_ext.features): the
reference is always the registry's, never a copy to keep in step."""

from __future__ import annotations

from cqlsh_ext.features.feature import Feature
from cqlsh_ext.features.forms import form, statement_words, usage


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _reads(feature: Feature) -> str:
    """What it reads, or for a write feature what it writes."""
    touched = feature.reads if feature.writes is None else feature.writes
    what = touched.what if feature.writes is None else f"writes {touched.what}"
    return what if touched.argument is None else f"{what} (`{touched.argument}`)"


def generated() -> str:
    """The reference of every feature declared (cqlsh-ext's own, then the packages'; a package that
    does not load is said in one line and left out), as docs/features.md shows it."""
    from cqlsh_ext.features import PluginError, declared

    try:
        return reference(declared())
    except PluginError as err:
        return f"{err}\n\n" + reference(declared(plugins=False))


def reference(features: dict[str, Feature]) -> str:
    """The Markdown of the reference of `features`: their table, each one's section, then the
    shell's statements and commands."""
    lines = ["| feature | title | reads, writes | scope | service | what it answers |",
             "|---|---|---|---|---|---|"]
    for feature in features.values():
        service = f"`{feature.service}`" if feature.service is not None else "its front end's own reading"
        scope = "the shell only" if feature.shell_only else f"`{feature.scope}`"
        lines.append(f"| `{feature.name}` | {_cell(feature.title)} | {_reads(feature)} | {scope} | "
                     f"{service} | {_cell(feature.description)} |")
    for feature in features.values():
        lines += ["", f"## {feature.name}", "", _cell(feature.details or feature.description)]
        if feature.statement is not None and feature.statement.parsed is None:
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
    features' statements (their form) and the commands (their word)."""
    from cqlsh_ext.features.commands import commands

    lines = ["", "## The shell's statements and commands", "",
             "Every statement and command cqlsh-ext adds to cqlsh's, declared once; the shell reads a "
             "feature's statement from its declaration, a command's, or a statement that claims its own "
             "among CQL's, by the handler its declaration names (docs/architecture.md).", "",
             "| statement or command | declared | HELP |", "|---|---|---|"]
    for feature in features.values():
        if feature.statement is not None and feature.statement.parsed is None:  # a command's: below
            lines.append(f"| `{_cell(form(feature))}` | feature `{feature.name}` | "
                         f"HELP {' '.join(statement_words(feature))} |")
    for declared in commands():
        if declared.handler is not None:
            lines.append(f"| `{declared.word.upper()}` | command | HELP {declared.word.upper()} |")
    return lines
