"""The shell's completion: the grammar that completes a declared statement at the prompt, written
from its declaration (features.feature.Statement): cqlsh's completion and the interactive shell's
highlighting read it; cqlsh never parses the statement (the shell reads it from the declaration
first). Its words (and aliases), then its options in any order (JSON, each argument with its keyword
and its value's kind, the shell's clauses, a clause's own grammar where it declares one), its
required arguments as the statement names what it reads (a table, a SELECT of it, a column, a
SELECT), what stands instead of one (FROM 'path'), and its closing clauses: where its Statement says
`options_last`, its options come after its required arguments. A Statement's `completers` complete
the names an argument takes beyond cqlsh's own (a table's payload columns). `register_grammar`
teaches cqlsh's rule set these and the grammars the commands and the statements' claims declare
(features.commands), once, before cqlsh builds it."""

from __future__ import annotations

from typing import TYPE_CHECKING

from cqlsh_ext.features.forms import statement_words

if TYPE_CHECKING:
    from cqlsh_ext.features.feature import Argument, Clause, Feature

__all__ = ["CONDITIONS", "register_grammar", "rule", "rules", "words_of"]

#: A WHERE's conditions, as payload queries write them (an argument with `conditions`).
CONDITIONS = r"""
<declaredCondition> ::= <declaredPath> ( ( "=" | "<" | ">" | "<=" | ">=" | "!=" ) <term>
                                       | "IN" "(" <term> ( "," <term> )* ")"
                                       | "LIKE" <stringLiteral>
                                       | "IS" "NOT"? "NULL"
                                       | "CONTAINS" <term> )
                      ;
<declaredPath> ::= <cident> ( "." ( <cident> | <quotedName> ) | "[" ( <wholenumber> | <stringLiteral> ) "]" )*
                 ;
"""


def rule(feature: Feature) -> str:
    """The rule's symbol: `<compressionStatsStatement>` for compression_stats."""
    first, *rest = feature.name.split("_")
    return f"<{first}{''.join(part.capitalize() for part in rest)}Statement>"


def _literal(words: tuple[str, ...]) -> str:
    return " ".join(f'"{word}"' for word in words)


def _value(argument: Argument) -> str:
    """What follows an argument's keyword: its value's kind."""
    if argument.conditions:
        return '<declaredCondition> ( "AND" <declaredCondition> )*'
    if argument.type == "boolean":
        return ""
    if argument.type in ("integer", "number"):
        return "<wholenumber>"
    return "<stringLiteral>" if argument.placeholder.startswith("'") else "<keyspaceName>"


def _clause(clause: Clause) -> str:
    """A clause: its words, then its value's kind (or its own grammar)."""
    value = {"integer": "<wholenumber>", "string": "<stringLiteral>", "flag": ""}.get(str(clause.value), "") \
        if isinstance(clause.value, str) else clause.grammar
    return f"{_literal(clause.words)} {value}".strip()


def _positional(feature: Feature, name: str) -> str:
    """A required argument as the statement names it (the bindings its completers complete)."""
    declared = feature.statement
    selected = declared is not None and declared.select
    named = "" if declared is None else f"{name}="
    if feature.reads.argument == name and feature.reads.what == "column":
        return f'<columnFamilyName> "." {named}<cident>'
    if feature.reads.argument == name and feature.reads.what == "table":
        return "( <selectStatement> | <columnFamilyName> )" if selected else "<columnFamilyName>"
    if feature.reads.argument == name and feature.reads.what == "statement" and selected:
        return "<selectStatement>"
    return "<term>"


def _required(feature: Feature, name: str) -> str:
    """A required argument (after its keyword where it has one: `"TO" <wholenumber>`), or what stands
    instead of it (`| "FROM" <stringLiteral>`)."""
    own = feature.argument(name)
    if own.keyword is not None:
        return f"{_literal((own.keyword,))} {_value(own)}".strip()
    instead = next((argument for argument in feature.arguments if argument.instead_of == name), None)
    if instead is None or instead.keyword is None:
        return _positional(feature, name)
    return f"( {_positional(feature, name)} | {_literal((instead.keyword,))} {_value(instead)} )"


def rules(feature: Feature) -> str:
    """The rules of the feature's statement (its symbol: `rule`), in cqlsh's grammar language."""
    declared = feature.statement
    assert declared is not None, feature.name
    words = [declared.words, *declared.aliases]
    head = _literal(words[0]) if len(words) == 1 else \
        "( " + " | ".join(_literal(spelt) for spelt in words) + " )"
    options = [f"{_literal((argument.keyword,))} {_value(argument)}".strip()
               for argument in feature.arguments
               if argument.keyword is not None and not argument.required
               and argument.name not in declared.omits and argument.instead_of is None]
    options += [_clause(clause) for clause in declared.clauses if not clause.closing]
    if declared.json:
        options.insert(0, '"JSON"')
    target = [_required(feature, name) for name in feature.required]
    closing = [f"( {_clause(clause)} )?" for clause in declared.clauses if clause.closing]
    any_option = f"( {' | '.join(options)} )*" if options else ""
    json_first = '"JSON"?' if declared.json else ""  # JSON right after its words, as with its options
    body = [head, json_first, *target, any_option] if declared.options_last else [head, any_option, *target]
    text = " ".join(part for part in [*body, *closing] if part)
    own = "".join(clause.rules for clause in declared.clauses)
    return f"\n{rule(feature)} ::= {text}\n    ;\n{own}"


def words_of(feature: Feature) -> tuple[str, ...]:
    """The statement's first word, and its aliases' (lower case)."""
    declared = feature.statement
    spelt = [statement_words(feature), *(declared.aliases if declared is not None else ())]
    return tuple(dict.fromkeys(words[0].lower() for words in spelt))


_registered: list[bool] = []


def register_grammar() -> None:
    """Teach cqlsh's grammar and completion every declared command and statement (their rules:
    completion, highlighting and a line's end; a statement's claim's, and a feature's statement's,
    written from its declaration here, complete only: the shell reads those before cqlsh's
    grammar); must run before cqlshmain.main() builds its rule set. Once per process: the rule
    set is cqlsh's module-level singleton."""
    from cqlsh_ext.features import declared
    from cqlsh_ext.features.commands import claims, commands, statement_commands
    from cqlsh_ext.upstream import seams

    if _registered:
        return
    parsed = [c for c in commands() if c.rule]
    # A claimed statement (Statement.claims) completes by its own grammar, declared with its claim.
    completing = [claim for claim in claims() if claim.rule]
    stated = [feature for feature in declared(plugins=False).values()
              if feature.statement is not None and feature.statement.read_from_declaration]
    seams.register_special_commands(
        "".join(str(c.grammar) for c in parsed) + "".join(str(i.grammar) for i in completing)
        + "".join(rules(feature) for feature in stated) + CONDITIONS,
        (*(c.word for c in commands()), *statement_commands()),
        (*(c.rule for c in parsed), *(i.rule for i in completing), *(rule(feature) for feature in stated)),
    )
    for completers in [c.completers for c in parsed] + [i.completers for i in completing]:
        for (symbol, binding), complete in completers:
            seams.register_completer(symbol, binding, complete)
    for feature in stated:  # a declared statement's: its argument's binding in its rule
        for argument, complete in feature.statement.completers if feature.statement is not None else ():
            seams.register_completer(rule(feature).strip("<>"), argument, complete)
    _registered.append(True)
