"""The shell side of the insight commands: grammar and handlers (their HELP: insight.help).

    INSPECT [JSON] <SELECT statement>
    COMPRESSION STATS [JSON] [SAMPLE ...] [PARALLEL <n>] [DECODE ALL] [CONFIRM]
                      <SELECT statement> | [<keyspace>.]<table>
    COMPRESSION ADVISE [JSON] [SAMPLE <n>] <SELECT statement> | [<keyspace>.]<table>
                       [SAVE DICTIONARY '<file>']
    COMPRESSION SETTINGS [JSON] [SAMPLE <n>] [<keyspace>.]<table>
                      (INSPECT, STATS, ADVISE and SETTINGS completed here; read by the shell
                      from their features' declarations, features/reads.py; INSPECT printed by
                      run_inspect.print_values, the others as reports)
    COMPRESSION TRIAL [JSON] [<keyspace>.]<table>.<column> | FROM '<path>'
                      [CODECS <chain>, ...] [ROWS <n>] [CONCURRENCY <n>] INTO <keyspace>
                      [KEEP] [CONFIRM]
    COMPRESSION REWRITE [<keyspace>.]<table>.<column> AS '<chain>' [WHERE ...]
                        [ALLOW FILTERING] [PACE <n>] [ALL] [CONFIRM]
    COMPRESSION REWRITE RESUME '<journal>' | LAST [CONFIRM]

This module is imported when the shell starts (cqlsh_ext.features.commands: the grammar must be
registered before cqlsh builds its rule set), so it imports nothing heavy at module level: the
handlers import the report modules on first use. JSON is printed when the command says JSON or
the shell's output format is JSON (--output-format json / OUTPUT FORMAT JSON); reports go to the
query output (CAPTURE applies), progress to stderr on a terminal only.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from cqlsh_ext.common.text import unknown

if TYPE_CHECKING:
    from cqlsh_ext.reading.context import ReadContext
    from cqlsh_ext.reading.typed import ReportAnswer
    from cqlsh_ext.upstream.protocol import Parsed, Shell

INSPECT_GRAMMAR = r"""
<inspectCommand> ::= "INSPECT" ( asjson="JSON" )? <selectStatement>
                   ;
"""
COMPRESSION_GRAMMAR = r"""
<compressionCommand> ::= "COMPRESSION"
      ( action="STATS" ( asjson="JSON" )? <statsSample>? ( "PARALLEL" parallel=<wholenumber> )?
        ( decode_all="DECODE" "ALL" )? ( confirm="CONFIRM" )? <insightTarget>
      | action="ADVISE" ( asjson="JSON" )? ( "SAMPLE" sample=<wholenumber> )? <insightTarget>
        ( "SAVE" "DICTIONARY" dictfile=<stringLiteral> )?
      | action="SETTINGS" ( asjson="JSON" )? ( "SAMPLE" sample=<wholenumber> )? <columnFamilyName>
      | action="TRIAL" ( asjson="JSON" )? ( <trialColumn> | "FROM" path=<stringLiteral> )
        ( "CODECS" [codec]=<trialChain> ( "," [codec]=<trialChain> )*
        | "ROWS" rows=<wholenumber>
        | "CONCURRENCY" concurrency=<wholenumber>
        )*
        ( "INTO" into=<cfOrKsName> )? ( keep="KEEP" | asjson="JSON" | confirm="CONFIRM" )*
      | action="REWRITE"
        ( "RESUME" ( path=<stringLiteral> | "LAST" ) ( confirm="CONFIRM" )?
        | <rewriteColumn> "AS" spec=<stringLiteral>
          ( "WHERE" <rewriteCondition> ( "AND" <rewriteCondition> )* )?
          ( "ALLOW" "FILTERING" | "PACE" pace=<wholenumber> | "ALL" | confirm="CONFIRM" )*
        )
      )
    ;
<rewriteColumn> ::= <columnFamilyName> "." colname=<cident>
                    ( "[" <stringLiteral> "]" | "." <cident> )?
    ;
<rewriteCondition> ::= <rewritePath> ( ( "=" | "<" | ">" | "<=" | ">=" | "!=" ) <term>
                                     | "IN" "(" <term> ( "," <term> )* ")"
                                     | "LIKE" <stringLiteral>
                                     | "IS" "NOT"? "NULL"
                                     | "CONTAINS" <term> )
    ;
<rewritePath> ::= <cident> ( "." ( <cident> | <quotedName> ) | "[" ( <wholenumber> | <stringLiteral> ) "]" )*
    ;
<trialColumn> ::= <columnFamilyName> "." colname=<cident>
    ;
<trialChain> ::= <quotedStringLiteral> | <trialStep> ( ">" <trialStep> )*
    ;
<trialStep> ::= <identifier> ( "/" <identifier> ( "-" <identifier> )* )? ( ":" "-"? <wholenumber> )?
    ;
<insightTarget> ::= <selectStatement> | <columnFamilyName>
    ;
<statsSample> ::= sample_mode="SAMPLE"
      ( "UNTIL" ( precision=<wholenumber> | precision=<float> ) "PERCENT"
      | sample=<wholenumber> ( percent="PERCENT" )?
      )?
      ( "WITHIN" seconds=<wholenumber> "SECONDS" )? ( "SEED" seed=<wholenumber> )?
    ;
"""
# ------------------------------------------------------------------------------------- helpers

#: What each form expects, and an example: shown when a command does not parse.
_FORMS = {
    "STATS": ("COMPRESSION STATS [JSON] [SAMPLE ...] [PARALLEL n] [DECODE ALL] [CONFIRM] "
              "<SELECT statement> | [keyspace.]table",
              "COMPRESSION STATS SAMPLE SELECT data FROM ks.t;"),
    "ADVISE": ("COMPRESSION ADVISE [JSON] [SAMPLE n] <SELECT statement> | [keyspace.]table "
               "[SAVE DICTIONARY 'file']",
               "COMPRESSION ADVISE SELECT data FROM ks.t LIMIT 500;"),
    "SETTINGS": ("COMPRESSION SETTINGS [JSON] [SAMPLE n] [keyspace.]table", "COMPRESSION SETTINGS ks.t;"),
    "TRIAL": ("COMPRESSION TRIAL [JSON] [keyspace.]table.column | FROM 'path' [CODECS chain, ...] [ROWS n] "
              "[CONCURRENCY n] INTO keyspace [KEEP] [CONFIRM]",
              "COMPRESSION TRIAL ks.t.data INTO scratch;"),
    "REWRITE": ("COMPRESSION REWRITE [keyspace.]table.column AS 'chain' [WHERE ...] [ALLOW FILTERING] "
                "[PACE n] [ALL] [CONFIRM]  |  COMPRESSION REWRITE RESUME 'journal'|LAST [CONFIRM]",
                "COMPRESSION REWRITE ks.t.data AS 'zstd' PACE 500;"),
}


def _usage(forms: list[str], word: str) -> str:
    expected = "\n".join(f"  {_FORMS[form][0]}" for form in forms)
    examples = "\n".join(f"  {_FORMS[form][1]}" for form in forms)
    return f"Expected:\n{expected}\nFor example:\n{examples}\nMore: HELP {word}"


def compression_usage(words: list[str]) -> str:
    """The form the command started as, or all of them when its second word is none of them."""
    action = words[1] if len(words) > 1 and words[1] in _FORMS else None
    return _usage([action] if action else ["STATS", "ADVISE", "SETTINGS", "TRIAL", "REWRITE"], "COMPRESSION")


#: COMPRESSION's statements, in the order HELP COMPRESSION gives them.
_STATEMENTS = ("STATS", "ADVISE", "SETTINGS", "TRIAL", "REWRITE")


def compression_mistyped(words: list[str]) -> str | None:
    """COMPRESSION followed by a word that is none of its statements: the nearest, and the five."""
    if len(words) < 2 or not words[1][:1].isalpha() or words[1].upper() in _STATEMENTS:
        return None
    return f"COMPRESSION {unknown('statement', words[1], _STATEMENTS)} (HELP COMPRESSION)"


def keyspace_names(ctxt: Parsed, shell: Shell) -> list[str]:
    """After INTO: the keyspaces (TRIAL's scratch tables go there)."""
    from cassandra.metadata import protect_name

    return [protect_name(name) for name in shell.get_keyspace_names()]


def trial_columns(ctxt: Parsed, shell: Shell) -> list[str]:
    """After COMPRESSION TRIAL [ks.]table. : the columns TRIAL takes (insight.trial.latency.column_kind)."""
    from cassandra.metadata import protect_name

    from cqlsh_ext.insight.shellside import cql_name
    from cqlsh_ext.insight.trial.latency import column_kind

    ks = cql_name(ctxt.get_binding("ksname")) or shell.current_keyspace
    table = cql_name(ctxt.get_binding("cfname"))
    try:
        meta = shell.conn.metadata.keyspaces[ks].tables[table]
    except (KeyError, AttributeError):
        return []
    return [protect_name(name) for name, column in meta.columns.items() if column_kind(str(column.cql_type))]


# ------------------------------------------------------------------------------------- handlers
# Each report in its own module, imported when the command first runs (this one loads at start-up).
# The handler is the shell's side: it makes the reading's context once, builds the typed request
# from cqlsh's parse, hands both to the report's service and prints the answer.


def _publish(shell: Shell, parsed: Parsed, ctx: ReadContext, answer: ReportAnswer | None) -> None:
    """A report's answer on the shell's output: one JSON document (asked for, or the shell's
    output format), else its text laid out for the screen (render.text_report)."""
    if answer is None:
        return
    from cqlsh_ext.insight.shellside import wants_json
    from cqlsh_ext.render.text_report import print_report

    print_report(answer, wants_json(ctx, parsed), shell.query_out, shell.results.screen_width())


def do_compression(shell: Shell, parsed: Parsed) -> None:
    action = (parsed.get_binding("action") or "").upper()
    if action == "TRIAL":
        from cqlsh_ext.insight.trial.run import trial_answer, trial_request
        from cqlsh_ext.reading.context import shell_context

        ctx = shell_context(shell)
        _publish(shell, parsed, ctx, trial_answer(ctx, trial_request(parsed, shell.cql_unprotect_value)))
    # REWRITE, STATS, ADVISE and SETTINGS never get here: rewrite.command takes the first, and the
    # shell the others from their features' declarations (features.reads: compression_stats,
    # compression_advise, compression_settings), before cqlsh parses them (the grammar above
    # completes them).
