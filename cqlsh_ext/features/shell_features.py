"""The features only the shell serves (feature.Feature with `shell_only`), declared once as every
feature is: their statement in the shell, read from the declaration (features.calling), its request
built by its declared builder, its HELP from the declaration and its package's prose. Never an MCP
tool nor a Python API method. COMPRESSION TRIAL is one: it writes scratch tables, so it is no read
feature an assistant may call, nor one of the journaled writes."""

from __future__ import annotations

from cqlsh_ext.features import clauses, report_requests
from cqlsh_ext.features.feature import (
    FEATURES,
    REPORT,
    Argument,
    Clause,
    Feature,
    Reads,
    Service,
    Statement,
    register,
)
from cqlsh_ext.insight import command as insight_command
from cqlsh_ext.insight.help import TRIAL_ABOUT, TRIAL_SUMMARY
from cqlsh_ext.insight.trial import DEFAULT_CONCURRENCY, DEFAULT_ROWS

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
    request=report_requests.trial,
    statement=Statement(("COMPRESSION", "TRIAL"), "COMPRESSION TRIAL ks.t.data INTO scratch;",
                        options_last=True, help=TRIAL_ABOUT, summary=TRIAL_SUMMARY,
                        clauses=(Clause(("CODECS",), "codecs", clauses.trial_codecs, "chain, ...",
                                        grammar=clauses.TRIAL_CODECS_GRAMMAR[0],
                                        rules=clauses.TRIAL_CODECS_GRAMMAR[1]),),
                        completers=(("column", insight_command.trial_columns),)),
    shell_only=True))

#: The features declared here.
OWN = tuple(name for name, feature in FEATURES.items() if feature.shell_only)
