"""A declared statement's form, from its feature's declaration alone (features.feature.Statement, or a
package's feature: the words of its name): its words (`statement_words`), its arguments as the
statement takes them (`usage`), the two together (`form`) and with its example
(`form_and_example`). The shell's usage lines and one-line refusals, HELP's first lines, the man page
and docs/features.md all say a statement's form with these; nothing writes one by hand."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from cqlsh_ext.features.feature import Argument, Clause, Feature

__all__ = ["form", "form_and_example", "placeholder", "statement_words", "usage"]


def statement_words(feature: Feature) -> tuple[str, ...]:
    """The words of the feature's statement in the shell: those it declares (Feature.statement), else
    its name's, split at `_`, upper case."""
    if feature.statement is not None:
        return feature.statement.words
    return tuple(word.upper() for word in feature.name.split("_") if word)


def usage(feature: Feature) -> str:
    """Its arguments as its statement takes them: `<table> [limit = <integer>]`; a declared
    Statement's `[JSON] [SAMPLE n] [keyspace.]table`, `<SELECT statement> | [keyspace.]table` where a
    SELECT may name the table, then its closing clauses (`[SAVE DICTIONARY 'file']`); where its
    options come last, `[keyspace.]table.column [WHERE conditions] [SAMPLE n] ... [JSON]`."""
    statement = feature.statement
    if statement is not None and statement.usage:  # a claimed statement's, as declared
        return str(statement.usage)
    declared = statement is not None
    omitted = statement.omits if statement is not None else ()
    clauses = statement.clauses if statement is not None else ()
    json = ["[JSON]"] if statement is not None and statement.json else []
    shell_clauses = [_clause_usage(clause) for clause in clauses
                     if not clause.closing and clause.goes_with is None]
    # A WHERE's conditions first: the options that end the statement follow them. An option that
    # goes with another is written inside that one's brackets ([SAMPLE n [SEED s]]).
    keywords = [_option_usage(feature, argument)
                for argument in sorted(feature.arguments, key=lambda argument: not argument.conditions)
                if argument.keyword is not None and declared and not argument.required
                and argument.name not in omitted and argument.goes_with is None
                and argument.instead_of is None]
    instead = {argument.instead_of: argument for argument in feature.arguments
               if argument.instead_of is not None and argument.keyword is not None and declared}
    required = [(_required_usage(feature, name) if declared else f"<{name}>")
                + (f" | {_option_usage(feature, instead[name])[1:-1]}" if name in instead else "")
                for name in feature.required]
    named = [f"[{argument.name} = <{argument.type or 'value'}>]" for argument in feature.arguments
             if not argument.required and not (argument.keyword is not None and declared)
             and argument.name not in omitted]
    closing = [_clause_usage(clause) for clause in clauses if clause.closing]
    if statement is not None and statement.options_last:
        parts = [*required, *keywords, *shell_clauses, *named, *json, *closing]
    else:
        parts = [*json, *shell_clauses, *keywords, *required, *named, *closing]
    return " ".join(parts)


def _option_usage(feature: Feature, argument: Argument) -> str:
    """`[SAMPLE n]`, with what goes with it inside: `[SAMPLE n [SEED s]]`, `[ALL [CONFIRM]]`."""
    clauses = feature.statement.clauses if feature.statement is not None else ()
    inside = [_option_usage(feature, other) for other in feature.arguments
              if other.goes_with == argument.name and other.keyword is not None]
    inside += [_clause_usage(clause) for clause in clauses if clause.goes_with == argument.name]
    return "[" + " ".join(part for part in (argument.keyword, placeholder(argument), *inside) if part) + "]"


def _clause_usage(clause: Clause) -> str:
    return f"[{' '.join((*clause.words, clause.placeholder)).strip()}]"


def placeholder(argument: Argument) -> str:
    """What follows an argument's keyword in the usage: its own (Argument.placeholder: 'path'), n,
    nothing for a flag (CONFIRM), conditions (WHERE), <type>."""
    if argument.placeholder:
        return argument.placeholder
    if argument.conditions:
        return "conditions"
    return {"integer": "n", "boolean": ""}.get(argument.type or "", f"<{argument.type or 'value'}>")


def _required_usage(feature: Feature, name: str) -> str:
    """A required argument in a declared statement's usage: after its keyword where it has one
    (`TO n`: the statement reads it there alone), else where it stands (`_positional`)."""
    argument = feature.argument(name)
    if argument.keyword is not None:
        return " ".join(part for part in (argument.keyword, placeholder(argument)) if part)
    return _positional(feature, name)


def _positional(feature: Feature, name: str) -> str:
    """A required argument as a declared statement's usage names it: the table it reads as CQL names
    one (or a SELECT of it, where the Statement says `select`)."""
    selected = feature.statement is not None and feature.statement.select
    if feature.reads.argument == name and feature.reads.what == "column":
        return "[keyspace.]table.column"
    if feature.reads.argument == name and feature.reads.what == "table":
        return "<SELECT statement> | [keyspace.]table" if selected else "[keyspace.]table"
    if feature.reads.argument == name and feature.reads.what == "statement" and selected:
        return "<SELECT statement>"
    return f"<{name}>"



def form_and_example(feature: Feature) -> str:
    """Its statement's form, and a declared Statement's example: what a refusal names."""
    example = f", e.g. {feature.statement.example}" if feature.statement is not None else ""
    return f"{form(feature)}{example}"


def form(feature: Feature) -> str:
    """Its statement's words and usage: `COMPRESSION SETTINGS [JSON] [SAMPLE n] [keyspace.]table`."""
    return f"{' '.join(statement_words(feature))} {usage(feature)}".rstrip()
