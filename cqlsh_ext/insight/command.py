"""The shell side of the insight commands: grammar, HELP text and handlers.

    INSPECT [JSON] <SELECT statement>
    COMPRESSION STATS [JSON] [SAMPLE ...] [PARALLEL <n>] [DECODE ALL] [CONFIRM]
                      <SELECT statement> | [<keyspace>.]<table>
    COMPRESSION ADVISE [JSON] [SAMPLE <n>] <SELECT statement> | [<keyspace>.]<table>
                       [SAVE DICTIONARY '<file>']
    COMPRESSION SETTINGS [JSON] [SAMPLE <n>] [<keyspace>.]<table>
    COMPRESSION TRIAL [JSON] [<keyspace>.]<table>.<column> | FROM '<path>'
                      [CODECS <chain>, ...] [ROWS <n>] [CONCURRENCY <n>] INTO <keyspace>
                      [KEEP] [CONFIRM]
    COMPRESSION REWRITE [<keyspace>.]<table>.<column> AS '<chain>' [WHERE ...]
                        [ALLOW FILTERING] [PACE <n>] [ALL] [CONFIRM]
    COMPRESSION REWRITE RESUME '<journal>' | LAST [CONFIRM]

This module is imported when the shell starts (cqlsh_ext.commands: the grammar must be
registered before cqlsh builds its rule set), so it imports nothing heavy at module level: the
handlers import the report modules on first use. JSON is printed when the command says JSON or
the shell's output format is JSON (--output-format json / OUTPUT FORMAT JSON); reports go to the
query output (CAPTURE applies), progress to stderr on a terminal only.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from cqlsh_ext.codecs.base import CODEC_EXAMPLES, CODEC_HEADERS, CODEC_TRIAL
from cqlsh_ext.commands import shell_command, word_from_list
from cqlsh_ext.common.text import fill, unknown
from cqlsh_ext.payload.names import STREAM_MAGICS, title
from cqlsh_ext.rewrite.help import REWRITE_HELP, REWRITE_SUMMARY

if TYPE_CHECKING:
    from cqlsh_ext.common.text import Line
    from cqlsh_ext.insight.inspect import ValueReport
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
#: The serialization stream INSPECT's help shows in its example chain.
_STREAM = next(iter(STREAM_MAGICS.values()))
INSPECT_HELP = """
        INSPECT [cqlsh-ext]

""" + fill(
    "Runs a SELECT and describes every blob value in its result: the nesting chain (e.g. "
    f"{CODEC_EXAMPLES[1]} > {_STREAM} > String), each layer's container, how it was found (by its "
    "signature, by a trial decode, or as named with -d) and its header fields "
    f"({', '.join(CODEC_HEADERS)}, ...), the checksums the format carries verified here (stored and "
    "computed values shown), the stored and decompressed sizes and ratio, and the payload's kind "
    f"(JSON, text, {title(_STREAM)} String, binary). Values that are not compressed or cannot be "
    "decoded say why.",
) + """

        INSPECT SELECT data FROM ks.t WHERE id = 42;
        INSPECT JSON SELECT data FROM ks.t LIMIT 10;

          JSON prints one JSON object per blob value (JSON Lines), as does
          OUTPUT FORMAT JSON. Without a server: cqlsh-ext inspect FILE|-|0x...
        """

COMPRESSION_HELP = """
        COMPRESSION STATS | ADVISE | SETTINGS | TRIAL | REWRITE [cqlsh-ext]

        COMPRESSION STATS [JSON] [SAMPLE ...] [PARALLEL n] [DECODE ALL]
                          [CONFIRM] <SELECT statement> | [<keyspace>.]<table>

          Opens with a verdict: what client-side compression saves in what you
          pay (Amazon Keyspaces: write and read units, then storage; Cassandra:
          storage). Pages through the result (a progress line on a terminal;
          Ctrl-C stops and still reports) and shows per blob column: values by
          codec and container, stored and decompressed bytes, overall and
          median ratio, the size distribution before (decompressed) and after
          (stored) in the Amazon Keyspaces compression article's buckets
          (<= 1 KB, 1-4 KB, 4-20 KB, 20-67 KB, 67 KB-1 MB, > 1 MB), and per
          row the Keyspaces write units (1 WCU per started KB), read units
          (1 RCU per started 4 KB) and rows near or over the 1 MB row quota.
          A text column (text, varchar, ascii) is reported too, as stored
          uncompressed (its UTF-8 bytes). A table named alone (COMPRESSION
          STATS ks.t) is a whole-table SELECT of its blob columns and its text
          columns outside the primary key.

          A whole-table SELECT (SELECT cols FROM t, nothing after the table
          name) of more than 64 MB is split into token ranges and scanned by
          one worker process per core; PARALLEL n sets the number of processes.
          Values whose container header declares their decompressed size are
          sized from it (the report says how many; for containers that decode a
          whole block to look inside, values of 256 KB or more); DECODE ALL
          decompresses every value instead. On Amazon Keyspaces, or for a table
          the server estimates at 1 GB or more, a full scan first shows its
          estimated rows, GB and read units and asks; from a script (-e, -f)
          it runs only with CONFIRM. Overload, throttling and timeouts are
          retried with backoff (at most 8 times per page) and named in the
          report.

          SAMPLE estimates the same figures for the whole table, each with a
          95 % interval, from random token-range slices read whole (every
          partition has the same chance, however wide). Unlike ADVISE and
          SETTINGS, whose SAMPLE n takes the first n values or rows, it reads
          from everywhere in the ring:
            SAMPLE n                   the first slices drawn that hold n rows
            SAMPLE p PERCENT           p % of the ring's slices
            SAMPLE UNTIL x PERCENT     until every figure shown is within +-x %
                                       (totals, ratios) or +-x points (shares)
            SAMPLE                     the same with x = 1
          followed by WITHIN s SECONDS (time limit, default 60) and SEED n (the
          same slices again, and unless the time limit stopped it, the same
          estimates). A table of 16 MB or less is read whole instead of
          sampled by SAMPLE and SAMPLE UNTIL: exact figures, said so.

        COMPRESSION ADVISE [JSON] [SAMPLE n]
                           <SELECT statement> | [<keyspace>.]<table>
                           [SAVE DICTIONARY '<file>']

          Takes the decompressed payloads of the first n values per blob or
          text column (default 300, in the result's order: not a random
          sample; a text value's payload is its UTF-8 bytes) and compresses
          them with every available codec at the levels producers use (each
          codec declares them; the report lists what ran and what is not
          installed), and with a dictionary trained on the other half of the
          sample where the codec takes one.
          Shows ratio, compress and decompress MB/s measured here (warm-up,
          then several runs; the spread is shown), the size buckets and
          capacity units each would give, a chart of ratio against speed, and
          opens with its verdict: the fast codec that saves the most of what
          you pay, what it saves and what it does not (a dictionary only where
          it saves 10 % more). A line on a terminal says which codec is
          measured; Ctrl-C there stops and reports the codecs measured so far.
          SAVE DICTIONARY '<file>' also writes the zstd dictionary trained on
          the whole sample (its ID inside; '<file>.<column>' for each column
          when there are several), loads it in this session and says how to
          use it: --dictionary <file>, encode('zstd:dict=<ID>', ...).

        COMPRESSION SETTINGS [JSON] [SAMPLE n] [<keyspace>.]<table>

          The table's SSTable compression options (class, chunk_length_in_kb,
          ...) next to measurements on a sample of its rows (default 1000): row
          and partition sizes, client-side compression of its blobs, the ratio
          the table's compressor gets on them, and advice where the numbers
          support it (e.g. a smaller chunk_length_in_kb for small partitions).

          JSON (or OUTPUT FORMAT JSON) prints one JSON document instead.

        COMPRESSION TRIAL [JSON] [<keyspace>.]<table>.<column> [CODECS ...]
                          [ROWS n] [CONCURRENCY n] INTO <keyspace>
                          [KEEP] [CONFIRM]

          Writes a sample of the column's values, re-compressed with each
          codec, into scratch tables and reads them back: latency, throughput
          and capacity units per codec on this cluster. More: HELP TRIAL.
""" + REWRITE_SUMMARY

#: The codecs TRIAL_HELP shows in its examples (declared: codecs.base), so help names none itself.
_EXAMPLE, _OTHER = CODEC_EXAMPLES[0], CODEC_EXAMPLES[1]
TRIAL_HELP = """
        COMPRESSION TRIAL [cqlsh-ext]

        COMPRESSION TRIAL [JSON] [<keyspace>.]<table>.<column> | FROM '<path>'
                          [CODECS <chain>, ...] [ROWS n] [CONCURRENCY n]
                          INTO <keyspace> [KEEP] [CONFIRM]

          What compressing a column with a codec does to latency, throughput
          and capacity units, measured on its own values and this cluster.

          Takes ROWS values (default 1000) with COMPRESSION STATS' sampler
          (random token-range slices), and for each variant re-compresses
          what is under each value's last compression layer, as a producer
          writes it.
          Each variant goes into a scratch table of its own in the keyspace
          named by INTO (never the column's table): written with prepared
          statements, CONCURRENCY requests in flight (default 16), the
          variants taking turns in rounds after a warm-up that is not counted;
          then every row is read back by key in random order at the session's
          consistency level. The scratch tables are dropped at the end, also
          after an error or Ctrl-C (which stops and reports what was measured),
          unless KEEP.

""" + fill(
    f"Variants are encode() chains (HELP ENCODE): CODECS '{_EXAMPLE}:3', {_OTHER}. Two more names: "
    "stored (the values as they are stored) and uncompressed (the payload itself: the baseline of "
    "every change in per cent, always measured). Default: stored, uncompressed, "
    f"{', '.join(CODEC_TRIAL)}. Blob columns, and text columns (their text is the uncompressed "
    "payload). FROM '<path>' takes the values from a file (one value, or one 0x... hex value per "
    "line) or a directory (a value per file) instead; `cqlsh-ext trial` does the same from the "
    "command line.",
) + """

          Per variant, side by side: stored bytes (mean, total, ratio), write
          and read operations per second, latency median, p95, p99, p99.9 and
          max, the client's decode time per value, Amazon Keyspaces write and
          read units per row, each against uncompressed in per cent; operations
          that failed, timed out or were retried. JSON (or OUTPUT FORMAT JSON)
          prints one JSON document instead.

          On Amazon Keyspaces the estimated capacity units are shown first and
          asked for ([y/N]; from a script, add CONFIRM), and the scratch tables
          are used once system_schema_mcs.tables says they are ACTIVE.

          COMPRESSION TRIAL ks.orders.data INTO scratch;
          COMPRESSION TRIAL ks.orders.data CODECS '""" + _EXAMPLE + "', '" + _OTHER + """:9'
                            ROWS 5000 CONCURRENCY 32 INTO scratch JSON;
        """


# ------------------------------------------------------------------------------------- helpers

#: What each form expects, and an example: shown when a command does not parse.
_FORMS = {
    "INSPECT": ("INSPECT [JSON] <SELECT statement>", "INSPECT SELECT data FROM ks.t WHERE id = 42;"),
    "STATS": ("COMPRESSION STATS [JSON] [SAMPLE ...] [PARALLEL n] [DECODE ALL] [CONFIRM] "
              "<SELECT statement> | [keyspace.]table",
              "COMPRESSION STATS ks.t;  or  COMPRESSION STATS SAMPLE SELECT data FROM ks.t;"),
    "ADVISE": ("COMPRESSION ADVISE [JSON] [SAMPLE n] <SELECT statement> | [keyspace.]table "
               "[SAVE DICTIONARY 'file']",
               "COMPRESSION ADVISE ks.t;  or  COMPRESSION ADVISE SELECT data FROM ks.t LIMIT 500;"),
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


def _inspect_usage(words: list[str]) -> str:
    return _usage(["INSPECT"], "INSPECT")


def _compression_usage(words: list[str]) -> str:
    """The form the command started as, or all of them when its second word is none of them."""
    action = words[1] if len(words) > 1 and words[1] in _FORMS and words[1] != "INSPECT" else None
    return _usage([action] if action else ["STATS", "ADVISE", "SETTINGS", "TRIAL", "REWRITE"], "COMPRESSION")


#: COMPRESSION's statements, in the order HELP COMPRESSION gives them.
_STATEMENTS = ("STATS", "ADVISE", "SETTINGS", "TRIAL", "REWRITE")


@word_from_list("COMPRESSION")
def _mistyped(words: list[str]) -> str | None:
    """COMPRESSION followed by a word that is none of its statements: the nearest, and the five."""
    if len(words) < 2 or not words[1][:1].isalpha() or words[1].upper() in _STATEMENTS:
        return None
    return f"COMPRESSION {unknown('statement', words[1], _STATEMENTS)} (HELP COMPRESSION)"


def _keyspace_names(ctxt: Parsed, shell: Shell) -> list[str]:
    """After INTO: the keyspaces (TRIAL's scratch tables go there)."""
    from cassandra.metadata import protect_name

    return [protect_name(name) for name in shell.get_keyspace_names()]


def _trial_columns(ctxt: Parsed, shell: Shell) -> list[str]:
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


def _fitted(shell: Shell, lines: Sequence[Line]) -> list[str]:
    """A text report laid out for the terminal the output goes to (-e too), else at its natural
    width; its charts in Unicode's block characters where the output's encoding has them."""
    from cqlsh_ext.common.text import draws_blocks, fit

    encoding = getattr(shell.query_out, "encoding", None)
    return list(fit(lines, shell.results.screen_width(), draws_blocks(encoding)))


@shell_command("INSPECT", "<inspectCommand>", INSPECT_GRAMMAR, INSPECT_HELP, usage=_inspect_usage, paged=True)
def do_inspect(shell: Shell, parsed: Parsed) -> None:
    """Each value's report printed as it comes (its JSON object, or its text fitted to the
    screen), then how many (text only; JSON says an interruption on stderr)."""
    import sys

    from cqlsh_ext.common import jsonenc
    from cqlsh_ext.insight.run_inspect import inspect_request, inspect_values
    from cqlsh_ext.insight.shellside import wants_json
    from cqlsh_ext.reading.context import shell_context
    from cqlsh_ext.render.text_report import write_lines

    ctx = shell_context(shell)
    as_json = wants_json(ctx, parsed)

    def spell(report: ValueReport) -> list[str]:
        return [jsonenc.dumps(report.to_json())] if as_json else [*report.render(), ""]

    def show(lines: list[str]) -> bool:
        write_lines(shell.query_out, lines if as_json else _fitted(shell, lines))
        return True

    seen = inspect_values(ctx, inspect_request(parsed), spell, show)
    if seen is None:
        return
    if not as_json:
        write_lines(shell.query_out, [seen.closing()])
    elif seen.interrupted:
        print("INSPECT interrupted", file=sys.stderr)


@shell_command("COMPRESSION", "<compressionCommand>", COMPRESSION_GRAMMAR, COMPRESSION_HELP,
               usage=_compression_usage, paged=True,
               completers=((("compressionCommand", "into"), _keyspace_names),
                           (("trialColumn", "colname"), _trial_columns)),
               topics=(("trial", TRIAL_HELP), ("rewrite", REWRITE_HELP)))  # HELP TRIAL, HELP REWRITE in full
def do_compression(shell: Shell, parsed: Parsed) -> None:
    action = (parsed.get_binding("action") or "").upper()
    if action == "STATS":
        from cqlsh_ext.insight.run_stats import stats_answer, stats_request
        from cqlsh_ext.reading.context import shell_context

        ctx = shell_context(shell)
        _publish(shell, parsed, ctx, stats_answer(ctx, stats_request(parsed)))
    elif action == "ADVISE":
        from cqlsh_ext.insight.run_advise import advise_answer, advise_request
        from cqlsh_ext.reading.context import shell_context

        path = parsed.get_binding("dictfile")  # SAVE DICTIONARY's file: the shell's to read
        saved_to = str(shell.cql_unprotect_value(path.strip())) if path is not None else None
        ctx = shell_context(shell)
        _publish(shell, parsed, ctx, advise_answer(ctx, advise_request(parsed), saved_to))
    elif action == "SETTINGS":
        from cqlsh_ext.insight.run_settings import settings_answer, settings_request
        from cqlsh_ext.reading.context import shell_context

        ctx = shell_context(shell)
        _publish(shell, parsed, ctx, settings_answer(ctx, settings_request(parsed)))
    elif action == "TRIAL":
        from cqlsh_ext.insight.trial.run import trial_answer, trial_request
        from cqlsh_ext.reading.context import shell_context

        ctx = shell_context(shell)
        _publish(shell, parsed, ctx, trial_answer(ctx, trial_request(parsed, shell.cql_unprotect_value)))
    # REWRITE never gets here: rewrite.command takes it before cqlsh parses it (the grammar above
    # completes it and HELP gives it).
