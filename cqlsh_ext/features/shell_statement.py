"""The shell's door to the read features a package declares (features.ENTRY_POINT_GROUP), from their
declarations alone: each is a statement of the shell (features.calling: the words of its name, its
arguments), read with the shell's lexer (never cqlsh's grammar), its table looked up as the shell
looks up any statement's, its service handed a FeatureCall in the shell's reading context, its
report printed as the shell prints every report (render.text_report); HELP lists them and
HELP <its words> prints its document. cqlsh_ext/shell.py hands it a statement whose first word is
none of the shell's, so a package's feature never takes a statement of cqlsh's, CQL's or ours.

Imported when the shell starts: it imports nothing heavy at module level (the packages' features
are loaded at the first statement or HELP that may be one of theirs)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from cqlsh_ext.cql.lexer import Lexed
    from cqlsh_ext.features.feature import Feature
    from cqlsh_ext.upstream.protocol import Shell

__all__ = ["feature_of", "help_of", "help_section", "run"]


def _words_first() -> list[tuple[tuple[str, ...], Feature]]:
    """The packages' features by their statement's words, the longest first (TOY ROWS before TOY)."""
    from cqlsh_ext.features.calling import plugins, statement_words

    found = [(statement_words(feature), feature) for feature in plugins().values()]
    return sorted(found, key=lambda pair: -len(pair[0]))


def feature_of(statement: Lexed) -> tuple[Feature, int] | None:
    """The package's feature whose statement `statement` is, and how many of its tokens the feature's
    words are; None when it is none of theirs (or does not lex: cqlsh says so as ever)."""
    from cqlsh_ext.cql.errors import QueryError

    try:
        tokens = statement.tokens
    except QueryError:
        return None
    for words, feature in _words_first():
        typed = tokens[:len(words)]
        if len(typed) == len(words) and all(tok.kind == "word" and tok.value.upper() == word
                                             for tok, word in zip(typed, words, strict=True)):
            return feature, len(words)
    return None


def run(shell: Shell, feature: Feature, skip: int, statement: Lexed) -> None:
    """The feature's statement run: its arguments (after its `skip` words) checked against its
    declaration, its table found, its service's report printed; a bad argument, a table that is
    not there or the service's failure said in one line."""
    from cqlsh_ext.features.arguments import Invalid
    from cqlsh_ext.features.calling import statement_arguments, table_named
    from cqlsh_ext.features.feature import FeatureCall
    from cqlsh_ext.reading.context import shell_context
    from cqlsh_ext.reading.resolve import find_table
    from cqlsh_ext.reading.typed import ReportAnswer
    from cqlsh_ext.render.text_report import print_report

    tokens = [tok for tok in statement.tokens[skip:] if tok.kind != "end"]
    while tokens and tokens[-1].kind == "punct" and tokens[-1].value == ";":
        tokens.pop()
    try:
        arguments = statement_arguments(feature, statement.text, tokens)
        table = table_named(feature, arguments, shell.current_keyspace)
    except Invalid as err:
        shell.printerr(str(err))
        return
    ctx = shell_context(shell)
    if table is not None and find_table(ctx.cluster, table[0], table[0], table[1], refresh=True) is None:
        shell.printerr(f"{feature.name}: no table {table[0]}.{table[1]}")
        return
    if feature.service is None:
        shell.printerr(f"{feature.name} declares no service: the shell cannot run it")
        return
    try:
        answer = feature.service(ctx, FeatureCall(arguments, table))
    except Exception as err:  # the package's service: its failure in one line, the shell goes on
        shell.printerr(f"{feature.name}: {type(err).__name__}: {err}".splitlines()[0])
        return
    if answer is None:  # the reading said why (ctx.error)
        return
    if not isinstance(answer, ReportAnswer):
        shell.printerr(f"{feature.name} answered a {type(answer).__name__}, not a report the shell prints")
        return
    print_report(answer, ctx.display.output_format.reports_as_json, shell.query_out,
                 shell.results.screen_width())


def help_of(asked: list[str]) -> str | None:
    """HELP <words> (lower case) of a package's feature: its document (the words of its statement,
    or its name), else None."""
    from cqlsh_ext.features.calling import document

    typed = " ".join(asked)
    for words, feature in _words_first():
        if typed in (" ".join(words).lower(), feature.name.lower()):
            return document(feature)
    return None


def help_section() -> str:
    """What HELP lists of the packages' features after cqlsh's topics ('' when none is declared):
    each one's statement, title and description, and its arguments' one-line docs."""
    from cqlsh_ext.features.calling import plugins, statement_words, usage

    features = plugins()
    if not features:
        return ""
    lines = ["Read features of installed packages (HELP <words> for one):"]
    for feature in features.values():
        lines.append(f"  {' '.join(statement_words(feature))} {usage(feature)}".rstrip()
                     + f"  -- {feature.title}: {feature.description}")
        lines += [f"      {argument.name}: {argument.doc}" for argument in feature.arguments]
    return "\n".join(lines) + "\n"
