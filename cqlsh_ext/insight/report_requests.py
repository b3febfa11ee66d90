"""The typed requests of the insight reports (reading.read_requests, insight.trial.run), each built
once from its feature's declared arguments (insight/declared.py names each builder), for the front
ends that hand a report its arguments by name: MCP's tools and the Python API's methods. A feature
declares its builder (`Feature.request`); `calling.request_of` checks the arguments against the
declaration, then builds. A request names its table and columns as typed parts, never as a SELECT's
text, but for the SELECT a person typed as a statement's target (the shell's, where the feature's
Statement says `select`). The shell reads its declared statements into the same calls
(shell.dispatcher), with the values of the clauses only it has (FeatureCall.clauses: SAMPLE
UNTIL ..., PARALLEL n, SAVE DICTIONARY 'file')."""

from __future__ import annotations

from typing import TYPE_CHECKING

from cqlsh_ext.features.arguments import Invalid, names

if TYPE_CHECKING:
    from cqlsh_ext.features.feature import FeatureCall
    from cqlsh_ext.insight.trial.run import TrialRequest
    from cqlsh_ext.reading.read_requests import (
        AdviseRequest,
        InspectRequest,
        ReportTarget,
        SettingsRequest,
        StatsRequest,
    )

__all__ = ["advise", "inspect", "settings", "stats", "trial"]


def _table(call: FeatureCall) -> tuple[str | None, str]:
    if call.table is None:  # the front end reads the table before it builds (calling.request_of)
        raise ValueError("a table report's call names its table")
    return call.table


def _target(call: FeatureCall) -> ReportTarget:
    """The table's payload columns, or with `column` that column alone (whole rows of the table,
    so that it may be split into token ranges); or the SELECT the shell's statement wrote, as
    written (FeatureCall.select: a statement typed as one travels as its text)."""
    from cqlsh_ext.reading.read_requests import ReportTarget, select_target

    keyspace, table = _table(call)
    if call.select is not None:
        return select_target(keyspace, table, call.select.spanned(), call.select, call.found)
    column = call.arguments.get("column")
    columns = None if column is None else tuple(names(column, (1,), "column name"))
    return ReportTarget(keyspace, table, found=call.found, columns=columns)


def stats(call: FeatureCall) -> StatsRequest:
    """compression_stats: COMPRESSION STATS [SAMPLE ...] [PARALLEL n] [DECODE ALL] [CONFIRM] of the
    table, its column or (the shell's) a SELECT of it. The shell's SAMPLE clause says more than the
    `sample` argument's rows (insight.clauses.stats_sample)."""
    from cqlsh_ext.reading.read_requests import SampleSpec, StatsRequest

    rows = call.arguments.get("sample")
    sample = call.clauses.get("sample", SampleSpec(rows=rows) if rows else None)
    return StatsRequest(_target(call), sample, confirm=bool(call.arguments.get("confirm", False)),
                        parallel=call.clauses.get("parallel"),
                        from_headers=not call.clauses.get("decode_all", False))


def advise(call: FeatureCall) -> AdviseRequest:
    """compression_advise: COMPRESSION ADVISE [SAMPLE n] of the table, its column or (the shell's) a
    SELECT of it, and the shell's SAVE DICTIONARY 'file'."""
    from cqlsh_ext.reading.read_requests import AdviseRequest

    return AdviseRequest(_target(call), call.arguments.get("sample"), call.clauses.get("dictionaries_to"))


def settings(call: FeatureCall) -> SettingsRequest:
    """compression_settings: COMPRESSION SETTINGS [SAMPLE n] of the table."""
    from cqlsh_ext.reading.read_requests import SettingsRequest

    keyspace, table = _table(call)
    return SettingsRequest(keyspace, table, call.arguments.get("sample"), found=call.found)


def inspect(call: FeatureCall) -> InspectRequest:
    """inspect_value: INSPECT SELECT ...: the SELECT as written (its trailing `;` aside; the shell's
    lexed already: FeatureCall.select), the table it reads as the front end found it (else as the
    SELECT names it)."""
    from cqlsh_ext.cql.errors import QueryError
    from cqlsh_ext.cql.lexer import Lexed
    from cqlsh_ext.query.recognize import table_of
    from cqlsh_ext.reading.read_requests import InspectRequest, select_target

    lexed = call.select if call.select is not None else Lexed(call.arguments["statement"])
    try:
        tokens = lexed.tokens
    except QueryError as err:
        raise Invalid(f"inspect_value: statement: {err}") from None
    stop = len(tokens) - 1  # the end token
    while stop > 0 and tokens[stop - 1].kind == "punct" and tokens[stop - 1].value == ";":
        stop -= 1
    if stop < len(tokens) - 1:
        lexed = lexed.part(0, stop)
    named = call.table or table_of(lexed) or (None, None)
    return InspectRequest(select_target(named[0], named[1], lexed.spanned(), lexed, call.found))


def trial(call: FeatureCall) -> TrialRequest:
    """compression_trial: COMPRESSION TRIAL [keyspace.]table.column | FROM 'path' [CODECS chain, ...]
    [ROWS n] [CONCURRENCY n] INTO keyspace [KEEP] [CONFIRM] (the keyspace None: the context's; the
    codecs the shell's CODECS clause; what cannot run, a missing INTO among them, is the service's
    to refuse)."""
    from cqlsh_ext.insight.trial import DEFAULT_CONCURRENCY, DEFAULT_ROWS
    from cqlsh_ext.insight.trial.run import TrialRequest

    given = call.arguments
    keyspace = table = column = into = None
    try:
        if given.get("column") is not None:
            found = names(given["column"], (2, 3), "column")
            keyspace, table, column = found if len(found) == 3 else (None, *found)
        if given.get("into") is not None:
            into = names(given["into"], (1,), "keyspace")[0]
    except Invalid as err:
        raise Invalid(f"compression_trial: {err}") from None
    return TrialRequest(into=into, rows=given.get("rows", DEFAULT_ROWS),
                        concurrency=given.get("concurrency", DEFAULT_CONCURRENCY),
                        codecs=call.clauses.get("codecs"), path=given.get("path"),
                        keep=bool(given.get("keep")), confirm=bool(given.get("confirm")),
                        keyspace=keyspace, table=table, column=column)
