"""The shell's one way in for a declared statement (`arrival`: what its first word makes of it, before
the intercepts and cqlsh's grammar): cqlsh-ext's own features that declare their statement
(features.feature.Statement: COMPRESSION STATS, TRIAL, INSPECT, DESCRIBE PAYLOAD, ...) and the read
features a package declares (features.ENTRY_POINT_GROUP) come through the same door, each read from
its declaration with the shell's lexer (features.calling; never cqlsh's grammar), its request built
by its declared builder (a package's service handed a FeatureCall, its table looked up as the shell
looks up any statement's), run in the shell's reading context and printed as every report is
(`run`); a declared write statement's service runs in a write context and says its own lines. A
package's feature is the words of its name and its arguments; a statement whose first word is the
shell's (`select_sample` -> SELECT ...) is none of a package's: Tab never offers it, and
HELP says so beside it (MCP and the Python API serve it as ever). HELP lists the packages' features
and HELP <its words> prints its document; Tab at the prompt completes their words (repl.completer).

Imported when the shell starts: it imports nothing heavy at module level (the packages' features
are loaded at the first statement, HELP or Tab that may be one of theirs)"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, NamedTuple

if TYPE_CHECKING:
    from cqlsh_ext.cql.lexer import Lexed
    from cqlsh_ext.features.feature import Feature
    from cqlsh_ext.reading.context import ReadContext
    from cqlsh_ext.reading.typed import ReportAnswer

__all__ = ["Arrival", "answer", "arrival", "called", "feature_of", "help_of", "help_section",
           "nearest_first_word", "next_words", "own_feature_of", "own_first_words", "run"]


def _taken() -> frozenset[str]:
    """The words the shell's own statements start with: cqlsh's grammar, its commands and
    intercepts (features.commands). Not a declared statement's own first word: cqlsh's grammar
    learns those to complete them (shell.completion), but the shell reads them from
    their declarations (TOY REPORT, a built-in report with a first word of its own)."""
    from cqlsh_ext.features import declared
    from cqlsh_ext.features.commands import commands, intercepts
    from cqlsh_ext.features.forms import statement_words
    from cqlsh_ext.upstream.seams import first_words

    shells = {c.word.upper() for c in commands()} | {w.upper() for i in intercepts() for w in i.words}
    stated = {words[0].upper() for feature in declared(plugins=False).values()
              if feature.statement is not None
              for words in (statement_words(feature), *feature.statement.aliases)}
    return first_words() - (stated - shells)


def _unlisted() -> list[Feature]:
    """The features whose statement HELP lists and Tab completes from the declaration alone: a
    package's read features, and those of cqlsh-ext's own features whose statement's first word
    starts none of the shell's statements (a first word the shell has, COMPRESSION, INSPECT,
    DESCRIBE, is completed by its grammar and has its HELP topics: its package's declared.py)."""
    from cqlsh_ext.features import declared
    from cqlsh_ext.features.calling import plugins
    from cqlsh_ext.features.forms import statement_words

    taken = _taken()
    own = [feature for feature in declared(plugins=False).values()
           if feature.statement is not None and statement_words(feature)[0] not in taken]
    return [*own, *plugins().values()]


def _all_words() -> list[tuple[tuple[str, ...], Feature]]:
    """The features of `_unlisted()` by their statement's words, the longest first (TOY ROWS before
    TOY)."""
    from cqlsh_ext.features.forms import statement_words

    found = [(statement_words(feature), feature) for feature in _unlisted()]
    return sorted(found, key=lambda pair: -len(pair[0]))


def _words_first() -> list[tuple[tuple[str, ...], Feature]]:
    """Those of _all_words() that are statements of the shell: their first word none of its own."""
    taken = _taken()
    return [(words, feature) for words, feature in _all_words() if words[0] not in taken]


def _shadowed(words: tuple[str, ...]) -> str:
    """Why a feature's statement is none of the shell's ('' when it is one)."""
    if words[0] not in _taken():
        return ""
    return (f"not a statement of the shell: {words[0]} starts the shell's own statements "
            "(MCP and the Python API serve it)")


def _own_words() -> list[tuple[tuple[str, ...], Feature]]:
    """cqlsh-ext's own features that declare their statement (Feature.statement), by each of its
    words (its own, then its aliases)."""
    from cqlsh_ext.features import declared

    return [(words, feature) for feature in declared(plugins=False).values() if feature.statement is not None
            for words in (feature.statement.words, *feature.statement.aliases)]


def own_first_words() -> frozenset[str]:
    """The first words (lower case) of cqlsh-ext's own declared statements: a statement that starts
    with one is handed to own_feature_of before the intercepts and cqlsh's grammar."""
    return frozenset(words[0].lower() for words, _feature in _own_words())


def own_feature_of(statement: Lexed) -> tuple[Feature, int] | None:
    """cqlsh-ext's own feature whose declared statement (Feature.statement) `statement` is, and how
    many of its tokens the statement's words are; None when it is none of theirs (cqlsh's grammar
    reads the shell's other statements; a statement its Statement's `recognizes` does not take is
    cqlsh's). The packages' features are not loaded."""
    own = _own_words()
    found = _matching(statement, own)
    if found is not None or _lexes(statement):
        return found
    # One the lexer refuses is read by its text's words, so that the refusal is said as its own.
    typed = tuple(word.rstrip(";").upper() for word in statement.text.split())
    return next(((feature, len(words)) for words, feature in own if typed[:len(words)] == words
                 and _recognized(feature, None)), None)


def _recognized(feature: Feature, tokens: list[Any] | None) -> bool:
    """Whether the statement (its tokens; None: not lexed) is the feature's, as its Statement's
    `recognizes` says (one that does not lex is none of a statement that may be cqlsh's)."""
    recognizes = feature.statement.recognizes if feature.statement is not None else None
    if recognizes is None:
        return True
    return tokens is not None and recognizes(tokens)


def _lexes(statement: Lexed) -> bool:
    from cqlsh_ext.cql.errors import QueryError

    try:
        return bool(statement.tokens)
    except QueryError:
        return False


def feature_of(statement: Lexed) -> tuple[Feature, int] | None:
    """The package's feature whose statement `statement` is, and how many of its tokens the feature's
    words are; None when it is none of theirs (or does not lex: cqlsh says so as ever)."""
    return _matching(statement, _words_first())


def _matching(statement: Lexed,
              candidates: list[tuple[tuple[str, ...], Feature]]) -> tuple[Feature, int] | None:
    from cqlsh_ext.cql.errors import QueryError

    try:
        tokens = statement.tokens
    except QueryError:
        return None
    for words, feature in candidates:
        typed = tokens[:len(words)]
        if len(typed) == len(words) and all(tok.kind == "word" and tok.value.upper() == word
                                             for tok, word in zip(typed, words, strict=True)) \
                and _recognized(feature, tokens):
            return feature, len(words)
    return None


def run(ctx: ReadContext, feature: Feature, skip: int, statement: Lexed, out: Any, width: int) -> None:
    """A declared feature's statement run and printed on `out`, `width` columns wide: its report as
    every report is (render.text_report: JSON when the statement says JSON or the output format makes
    reports JSON), or by the printer its Statement names (`runs`: INSPECT's, each value printed as it
    is read). Refusals and failures are said in one line (ctx.error)."""
    from cqlsh_ext.render.text_report import print_report

    if feature.writes is not None:  # a write statement: it says its own lines (preview, journal, ...)
        _write(ctx, feature, skip, statement, out)
        return
    as_json_always = ctx.display.output_format.reports_as_json
    runs = feature.statement.runs if feature.statement is not None else None
    if runs is not None:  # printed as it comes, by its printer (INSPECT's values)
        request, as_json = called(ctx, feature, skip, statement)
        if request is not None:
            runs(ctx, request, as_json or as_json_always, out, width)
        return
    answered, as_json = answer(ctx, feature, skip, statement)
    if answered is not None:
        print_report(answered, as_json or as_json_always, out, width)


def _write(ctx: ReadContext, feature: Feature, skip: int, statement: Lexed, out: Any) -> None:
    """A declared write feature's statement (cqlsh-ext's own: a package's are refused) read as every
    declared statement is (`called`), its request handed to its service in a write context: the
    shell's journal directory, its lines (preview, journal, rows left alone, closing lines and UNDO)
    to `out`. A refusal before anything is written: one line ending `nothing was written`."""
    from cqlsh_ext.cql.errors import QueryError
    from cqlsh_ext.features.forms import statement_words
    from cqlsh_ext.writing.journal import journal_directory
    from cqlsh_ext.writing.refused import WriteRefused
    from cqlsh_ext.writing.write_context import write_context

    request, _as_json = called(ctx, feature, skip, statement)
    if request is None:
        return
    label = " ".join(statement_words(feature))
    if feature.service is None:
        ctx.error(f"{label}: {feature.name} declares no service; nothing was written")
        return
    try:
        feature.service(write_context(ctx, journal_directory(ctx.settings), out), request)
    except (QueryError, WriteRefused) as err:
        ctx.error(f"{label}: {err}; nothing was written")


def answer(ctx: ReadContext, feature: Feature, skip: int,
           statement: Lexed) -> tuple[ReportAnswer | None, bool]:
    """The feature's statement run in the shell's reading context: read (`called`); a feature that
    declares its request builder (cqlsh-ext's own) has its service handed that request, which finds
    the table itself; a package's service is handed a FeatureCall once the table is found. Its
    report, which the shell prints as every report, and whether the statement asked for JSON. A bad
    argument, a table that is not there, the service's failure: said in one line (ctx.error, naming
    the statement's words where it declares them), and None."""
    from cqlsh_ext.cql.errors import QueryError
    from cqlsh_ext.features.arguments import Invalid
    from cqlsh_ext.features.calling import ready_service, refusal, spoken
    from cqlsh_ext.reading.typed import ReportAnswer

    call, as_json = called(ctx, feature, skip, statement)
    if call is None:
        return None, as_json
    if feature.request is not None and feature.service is not None:
        own = feature.service
        return own(ctx, call), as_json  # its own errors said by its reading (ctx.error)
    try:
        service = ready_service(ctx, feature, call, "the shell")
    except Invalid as err:
        ctx.error(spoken(feature, str(err)))
        return None, as_json
    try:
        answered = service(ctx, call)
    except QueryError as err:  # its refusal: said as every front end says it
        ctx.error(spoken(feature, refusal(feature, err)))
        return None, as_json
    except Exception as err:  # the package's service: its failure in one line, the shell goes on
        ctx.error(f"{feature.name}: {type(err).__name__}: {err}".splitlines()[0])
        return None, as_json
    if answered is not None and not isinstance(answered, ReportAnswer):
        ctx.error(f"{feature.name} answered a {type(answered).__name__}, not a report the shell prints")
        return None, as_json
    return answered, as_json  # None: the reading said why (ctx.error)


def called(ctx: ReadContext, feature: Feature, skip: int, statement: Lexed) -> tuple[Any, bool]:
    """The feature's statement read (calling.read_statement: after its `skip` words, in the keyspace
    in use): the request its declared builder makes (cqlsh-ext's own features), else the FeatureCall
    (a package's), and whether it asked for JSON. None when refused (said in one line: ctx.error)."""
    from cqlsh_ext.cql.errors import QueryError
    from cqlsh_ext.features.arguments import Invalid
    from cqlsh_ext.features.calling import read_statement, spoken

    try:
        return read_statement(feature, statement, skip, ctx.keyspace)
    except QueryError as err:
        ctx.error(spoken(feature, f"{feature.name}: {err}"))
    except Invalid as err:
        ctx.error(spoken(feature, str(err)))
    return None, False


def next_words(head: str, partial: str) -> list[str]:
    """What completes `partial` after `head` (the statement typed so far, before the word under the
    cursor) in a package's feature's statement: the next word of its name (TOY after `T`, ROWS after
    `TOY R`), then, once its words are typed, each argument not named yet as `name =` (`limit =`
    after `TOY ROWS ks.t l`); nothing where a value is expected (after `=`)."""
    from cqlsh_ext.cql.errors import QueryError
    from cqlsh_ext.cql.lexer import Lexed

    try:
        tokens = [tok for tok in Lexed(head).tokens if tok.kind != "end"]
    except QueryError:  # an open string: a value is being typed
        return []
    typed = [tok.value.upper() if tok.kind == "word" else "" for tok in tokens]
    found: set[str] = set()
    for words, feature in _words_first():
        if len(typed) < len(words):
            if list(words[:len(typed)]) == typed and words[len(typed)].startswith(partial.upper()):
                found.add(words[len(typed)])
        elif tuple(typed[:len(words)]) == words and not (tokens and tokens[-1].value == "="):
            named = {tok.value.lower() for tok, after in zip(tokens, tokens[1:], strict=False)
                     if tok.kind == "word" and after.value == "="}
            found.update(f"{argument.name} =" for argument in feature.arguments
                         if argument.name not in named and argument.name.startswith(partial.lower()))
    return sorted(found)


def help_of(asked: list[str]) -> str | None:
    """HELP <words> (lower case) of a package's feature, or one of cqlsh-ext's own whose statement's
    first word is none of the shell's: its document (the words of its statement, or its name), else
    None."""
    from cqlsh_ext.features.calling import document

    typed = " ".join(asked)
    for words, feature in _all_words():
        if typed in (" ".join(words).lower(), feature.name.lower()):
            shadowed = _shadowed(words)
            return document(feature) + (f"\n\n{feature.name} is {shadowed}." if shadowed else "")
    return None


def help_section() -> str:
    """What HELP lists after cqlsh's topics of the statements `_unlisted()` declares ('' when there
    is none): cqlsh-ext's own, then the packages' read features, each one's statement, title and
    description, and its arguments' one-line docs."""
    from cqlsh_ext.features.calling import plugins
    from cqlsh_ext.features.forms import statement_words, usage

    packages = plugins()
    lines: list[str] = []
    for feature in _unlisted():
        heading = "Read features of installed packages (HELP <words> for one):" if feature.name in packages \
            else "More statements of cqlsh-ext's (HELP <words> for one):"
        if heading not in lines:
            lines.append(heading)
        words = statement_words(feature)
        lines.append(f"  {' '.join(words)} {usage(feature)}".rstrip()
                     + f"  -- {feature.title}: {feature.description}")
        shadowed = _shadowed(words)
        if shadowed:
            lines.append(f"      ({shadowed})")
        lines += [f"      {argument.name}: {argument.doc}" for argument in feature.arguments]
    return "\n".join(lines) + "\n" if lines else ""


class Arrival(NamedTuple):
    """What the shell's door makes of a statement by its first word, before the intercepts and
    cqlsh's grammar: the declared feature whose statement it is and how many of its tokens the
    statement's words are (cqlsh-ext's own, or a package's read feature: never a statement of
    cqlsh's, CQL's or ours); the one line a first word mistyped is told (no server takes it); the
    line a package whose features do not load is told (the statement goes on)."""

    feature: tuple[Feature, int] | None = None
    typo: str | None = None
    plugin_error: str | None = None


def arrival(first: str, statement: Callable[[], Lexed]) -> Arrival:
    """The door's reading of a statement whose first word is `first` (as typed), `statement` the
    statement itself, lexed only where a declared statement may start so."""
    from cqlsh_ext.features import PluginError
    from cqlsh_ext.upstream.seams import first_words

    word = first.lower()
    own = word in own_first_words()
    feature, error = None, None
    if own or first.upper() not in first_words():
        try:
            feature = own_feature_of(statement()) if own else feature_of(statement())
        except PluginError as err:  # a package's bug, in its one line; the statement goes on
            error = str(err)
    if feature is None:
        meant = nearest_first_word(first)
        if meant is not None:
            return Arrival(None, f"{first} is not a command or statement: did you mean {meant}? "
                                 "(HELP lists the commands)", error)
    return Arrival(feature, None, error)


def nearest_first_word(word: str) -> str | None:
    """The first word of a statement or command (cqlsh's, CQL's, ours: seams.first_words) that
    `word`, none of them, is a typo of ('COMPRESION': COMPRESSION), or None. A word that is near
    none goes to the server as typed (a newer server's statement cqlsh's grammar does not know)."""
    from cqlsh_ext.common.text import nearest
    from cqlsh_ext.upstream.seams import first_words

    if not word[:1].isalpha():
        return None
    words = first_words()
    if word.upper() in words:
        return None
    return nearest(word.upper(), words)
