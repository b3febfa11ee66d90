"""The shell's one way in for a declared statement (`arrival`: what its first word makes of it, before
the statements' claims and cqlsh's grammar): cqlsh-ext's own features that declare their statement and the
read features a package declares, found by features.statements, each read from its declaration with
the shell's lexer (features.calling; never cqlsh's grammar), its request built by its declared
builder (a package's service handed a FeatureCall, its table looked up as the shell looks up any
statement's), run in the shell's reading context and printed as every report is (`run`); a declared
write statement's service runs in a write context and says its own lines."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, NamedTuple

if TYPE_CHECKING:
    from cqlsh_ext.cql.lexer import Lexed
    from cqlsh_ext.features.feature import Feature
    from cqlsh_ext.reading.context import ReadContext
    from cqlsh_ext.reading.typed import ReportAnswer

__all__ = ["Arrival", "answer", "arrival", "called", "nearest_first_word", "run"]


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


class Arrival(NamedTuple):
    """What the shell's door makes of a statement by its first word, before the claims and
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
    from cqlsh_ext.features.statements import feature_of, own_feature_of, own_first_words
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
