"""The insight package's declarations (found through the entry point group cqlsh_ext.features: the
registry imports this module, never its services): COMPRESSION STATS, ADVISE, SETTINGS and TRIAL,
INSPECT, each a feature whose statement the shell reads from its declaration (features.calling),
its request built by insight.report_requests, its HELP written from the declaration and insight/help.py's
prose, and each its own HELP topics (HELP COMPRESSION, their forms together, is written from them:
features.commands)."""

from __future__ import annotations

from cqlsh_ext.features import output_schemas
from cqlsh_ext.features.arguments import decode_argument, sample_argument
from cqlsh_ext.features.feature import (
    READ,
    REPORT,
    Argument,
    Clause,
    Feature,
    Method,
    Reads,
    Service,
    Statement,
    Text,
    register,
)
from cqlsh_ext.features.help import StatementHelp
from cqlsh_ext.insight import clauses
from cqlsh_ext.insight.trial import DEFAULT_CONCURRENCY, DEFAULT_ROWS

#: INSPECT's values at most (one value is what it is for; each is a few KB of layers and headers).
INSPECT_VALUES = 10
#: compression_advise's SAMPLE at most: each value is compressed by every codec at several levels.
MAX_ADVISE_SAMPLE = 10_000
#: What COMPRESSION SETTINGS answers: its feature's details (MCP's tool document) and HELP's words
#: (insight/help.py).
SETTINGS_ABOUT = ("The table's SSTable compression options (class, chunk_length_in_kb, ...) next to "
                  "measurements on a sample of its rows (default 1000): row and partition sizes, "
                  "client-side compression of its blobs, the ratio the table's compressor gets on them, "
                  "and advice where the numbers support it (e.g. a smaller chunk_length_in_kb for small "
                  "partitions).")

_HELP = "cqlsh_ext.insight.help"
_REQUESTS = "cqlsh_ext.insight.report_requests"


def _table() -> Argument:
    return Argument("table", "string", "keyspace.table", required=True)


_COLUMN = Argument("column", "string", "one column (default: every blob and text column)")

register(Feature(
    "compression_stats", "Compression statistics",
    "COMPRESSION STATS: per blob or text column, values by codec, stored and decompressed bytes "
    "and ratios, with a verdict.",
    (_table(), _COLUMN, sample_argument("rows to estimate from"),
     Argument("confirm", "boolean", "true: scan a whole table whose scan costs (Amazon Keyspaces, 1 GB or "
              "more) without asking", listed=False, keyword="CONFIRM")),
    Reads("table", "table"), REPORT, output_schemas.STATS,
    Service("cqlsh_ext.insight.run_stats", "stats_answer"),
    details="Also size buckets and Amazon Keyspaces capacity units per row. With sample, an "
            "estimate from random slices holding that many rows. A whole-table scan that costs "
            "(Amazon Keyspaces, or a table of 1 GB or more) is refused with its estimated cost "
            "unless confirm is true.",
    request=Service(_REQUESTS, "stats"), method=Method("stats"),
    # The shell's: a SELECT names the column; SAMPLE says more than rows; PARALLEL sets its
    # processes; DECODE ALL decompresses every value rather than reading sizes from headers.
    statement=Statement(("COMPRESSION", "STATS"), "COMPRESSION STATS SAMPLE SELECT data FROM ks.t;",
                        select=True, omits=("column", "sample"), help=Text(_HELP, "STATS_ABOUT"),
                        topics=(("compression stats", StatementHelp("compression_stats")),),
                        spark=Service("cqlsh_ext.spark.stats_job", "on_spark"),
                        clauses=(Clause(("SAMPLE",), "sample", clauses.stats_sample, "...",
                                        grammar=clauses.STATS_SAMPLE_GRAMMAR[0],
                                        rules=clauses.STATS_SAMPLE_GRAMMAR[1]),
                                 Clause(("PARALLEL",), "parallel", "integer", "n"),
                                 Clause(("DECODE", "ALL"), "decode_all", "flag")))))
register(Feature(
    "compression_advise", "Compression advice",
    "COMPRESSION ADVISE: each codec and level's ratio and speed, measured on a sample of each blob "
    "or text column's values, with a verdict.",
    (_table(), _COLUMN, sample_argument("values per column (default 300)", MAX_ADVISE_SAMPLE)),
    Reads("table", "table"), REPORT, output_schemas.ADVISE,
    Service("cqlsh_ext.insight.run_advise", "advise_answer"),
    details="Compresses the sample's decompressed values with every available codec and level (and "
            "a trained dictionary where it helps): ratio, compress and decompress speed measured "
            "here, capacity units. It never saves a dictionary (no file is written).",
    request=Service(_REQUESTS, "advise"), method=Method("advise"),
    # The shell's: a SELECT names the column (and the rows), SAVE DICTIONARY writes a file there.
    statement=Statement(("COMPRESSION", "ADVISE"),
                        "COMPRESSION ADVISE SELECT data FROM ks.t LIMIT 500;",
                        select=True, omits=("column",), help=Text(_HELP, "ADVISE_ABOUT"),
                        topics=(("compression advise", StatementHelp("compression_advise")),),
                        clauses=(Clause(("SAVE", "DICTIONARY"), "dictionaries_to", "string", "'file'",
                                        closing=True, writes_file=True),))))
register(Feature(
    "compression_settings", "Compression settings",
    "COMPRESSION SETTINGS: the table's SSTable compression options beside measurements on a sample "
    "of its rows, and advice.",
    (_table(), sample_argument("rows measured (default 1000)", listed=False)),
    Reads("table", "table"), REPORT,
    output_schemas.SETTINGS, Service("cqlsh_ext.insight.run_settings", "settings_answer"),
    details=SETTINGS_ABOUT,
    request=Service(_REQUESTS, "settings"), method=Method("settings"),
    statement=Statement(("COMPRESSION", "SETTINGS"), "COMPRESSION SETTINGS ks.t;",
                        help=Text(_HELP, "SETTINGS_HELP_ABOUT"),
                        topics=(("compression settings", StatementHelp("compression_settings")),))))
register(Feature(
    "inspect_value", "Inspect a value",
    "INSPECT the blob value a SELECT names: its nesting chain, containers, headers, checksums, "
    "sizes and payload kind.",
    (Argument("statement", "string", "a SELECT naming one blob value", required=True), decode_argument()),
    Reads("statement", "statement"), READ, output_schemas.INSPECT,
    Service("cqlsh_ext.insight.run_inspect", "inspect_values"),
    details=f"SELECT data FROM ks.t WHERE id = 42: one value is what it is for, at most "
            f"{INSPECT_VALUES}; each layer's container and headers, checksums verified, sizes and "
            "ratio, and the payload's kind.",
    request=Service(_REQUESTS, "inspect"),
    # The shell's: how values decode is its session's (-d, DECODE), each value printed as it is read.
    statement=Statement(("INSPECT",), "INSPECT SELECT data FROM ks.t WHERE id = 42;", select=True,
                        omits=("decode",), runs=Service("cqlsh_ext.insight.run_inspect", "print_values"),
                        help=Text(_HELP, "INSPECT_ABOUT"), command=True,
                        topics=(("inspect", StatementHelp("inspect_value")),))))
# COMPRESSION TRIAL writes scratch tables: no read feature an assistant may call, nor one of the
# journaled writes; the shell's alone.
register(Feature(
    "compression_trial", "Compression trial",
    "COMPRESSION TRIAL: a sample of a column's values re-compressed per codec, written into scratch "
    "tables and read back: latency, throughput and capacity units per codec on this cluster.",
    (Argument("column", "string", "keyspace.table.column whose values are measured", required=True),
     Argument("path", "string", "a file (one value, or a 0x... value a line) or a directory (a value a file) "
              "to take the values from instead", keyword="FROM", instead_of="column", placeholder="'path'"),
     Argument("rows", "integer", f"values measured (default {DEFAULT_ROWS})", keyword="ROWS"),
     Argument("concurrency", "integer", f"requests in flight (default {DEFAULT_CONCURRENCY})",
              keyword="CONCURRENCY"),
     Argument("into", "string", "the keyspace the scratch tables go in (never the column's table)",
              keyword="INTO", placeholder="keyspace"),
     Argument("keep", "boolean", "the scratch tables kept, not dropped", keyword="KEEP"),
     Argument("confirm", "boolean", "on Amazon Keyspaces, its estimated capacity units not asked for",
              keyword="CONFIRM")),
    Reads("column", "column"), REPORT,
    {"type": "object", "description": "COMPRESSION TRIAL's report: each variant's bytes, throughput, "
                                      "latencies and capacity units"},
    Service("cqlsh_ext.insight.trial.run", "trial_answer"),
    request=Service(_REQUESTS, "trial"),
    statement=Statement(("COMPRESSION", "TRIAL"), "COMPRESSION TRIAL ks.t.data INTO scratch;",
                        options_last=True, help=Text(_HELP, "TRIAL_ABOUT"),
                        summary=Text(_HELP, "TRIAL_SUMMARY"),
                        topics=(("compression trial", StatementHelp("compression_trial")),
                                ("trial", StatementHelp("compression_trial"))),
                        clauses=(Clause(("CODECS",), "codecs", clauses.trial_codecs, "chain, ...",
                                        grammar=clauses.TRIAL_CODECS_GRAMMAR[0],
                                        rules=clauses.TRIAL_CODECS_GRAMMAR[1]),),
                        completers=(("column", Service("cqlsh_ext.insight.command", "trial_columns")),)),
    shell_only=True))
