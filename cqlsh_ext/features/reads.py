"""Every read feature, declared once (feature.Feature): what MCP lists and serves as its tools
(mcp_server/tools.py adds its answer's cap and its adapter), what its guard scopes each call by, and
what docs/features.md tabulates (tools/features_table.py). A new read feature is one more
`register(Feature(...))` here."""

from __future__ import annotations

from typing import Any

from cqlsh_ext.codecs.base import CODEC_EXAMPLES
from cqlsh_ext.describe import command as describe_command
from cqlsh_ext.describe import parse as describe_parse
from cqlsh_ext.describe.help import PAYLOAD_ABOUT
from cqlsh_ext.features import clauses, output_schemas, report_requests
from cqlsh_ext.features.feature import (
    FEATURES,
    READ,
    REPORT,
    Argument,
    Clause,
    Feature,
    Method,
    Reads,
    Service,
    Statement,
    register,
)
from cqlsh_ext.insight.help import (
    ADVISE_ABOUT,
    INSPECT_ABOUT,
    SETTINGS_ABOUT,
    SETTINGS_HELP_ABOUT,
    STATS_ABOUT,
)
from cqlsh_ext.payload.names import FORMAT_EXAMPLES, title

#: `query`'s rows by default, and at most.
DEFAULT_ROWS, MAX_ROWS = 100, 10_000
#: INSPECT's values at most (one value is what it is for; each is a few KB of layers and headers).
INSPECT_VALUES = 10
#: describe_table reads this many rows of the text columns to tell JSON text.
TEXT_SAMPLE_ROWS = 20
#: What blobs hold, as the descriptions say it (from the declarations: payload.names, codecs.base).
PAYLOADS = f"compressed JSON, {', '.join(title(name) for name in FORMAT_EXAMPLES)}, ..."
#: The largest SAMPLE a feature asks for.
MAX_SAMPLE = 10_000_000
#: compression_advise's SAMPLE at most: each value is compressed by every codec at several levels.
MAX_ADVISE_SAMPLE = 10_000

_DECODE_SCHEMA: dict[str, Any] = {"additionalProperties": {"type": "string"}, "maxProperties": 16}


def _statement(doc: str = "one SELECT (CQL, with payload paths)") -> Argument:
    return Argument("statement", "string", doc, required=True)


def _table() -> Argument:
    return Argument("table", "string", "keyspace.table", required=True)


def _decode() -> Argument:
    return Argument("decode", "object", "column -> spec: {\"data\": \"zstd>msgpack\"}",
                    keywords=_DECODE_SCHEMA)


def _cursor() -> Argument:
    return Argument("cursor", "string", "a cut answer's cursor: the same call with it answers what follows, "
                    "each row once", keywords={"maxLength": 4096}, listed=False)


_COLUMN = Argument("column", "string", "one column (default: every blob and text column)")


def _sample(doc: str, most: int | None = None, listed: bool = True) -> Argument:
    bounds = {"minimum": 1, **({"maximum": most} if most is not None else {})}
    return Argument("sample", "integer", doc, keywords=bounds, listed=listed, keyword="SAMPLE")


register(Feature(
    "list_keyspaces", "Keyspaces", "The cluster's keyspaces.", (_cursor(),), Reads("keyspaces"), READ,
    output_schemas.rows_schema({"keyspace_name": {"type": "string"}}),
    Service("cqlsh_ext.reading.statement", "read_statement"),
    details="The rows of SELECT keyspace_name FROM system_schema.keyspaces; the keyspaces the "
            "policy never reads are left out, and a note says so. A cut answer's cursor lists "
            "the rest."))
register(Feature(
    "list_tables", "Tables", "The tables of a keyspace.",
    (Argument("keyspace", "string", "a keyspace name", required=True, listed=False), _cursor()),
    Reads("keyspace", "keyspace"), READ, output_schemas.rows_schema({"table_name": {"type": "string"}}),
    Service("cqlsh_ext.reading.statement", "read_statement"),
    details="The rows of SELECT table_name FROM system_schema.tables WHERE keyspace_name = ...; a "
            "keyspace that does not exist is an error that says so. A cut answer's cursor lists "
            "the rest."))
register(Feature(
    "describe_table", "A table's schema",
    "A table's CQL schema, and which columns hold blobs (decoded by cqlsh-ext) or JSON text.",
    (_table(),), Reads("table", "table"), READ, output_schemas.DESCRIBE_TABLE, None,
    details=f"DESCRIBE TABLE, and per column its type, its key and what it holds: blob (whose "
            f"contents cqlsh-ext decodes: {PAYLOADS}), blobs inside (a collection, tuple or UDT "
            f"holding blobs), JSON text (a text column whose values hold JSON, told from "
            f"{TEXT_SAMPLE_ROWS} rows), text."))
register(Feature(
    "query", "Run a SELECT",
    "Runs one SELECT; rows as JSON, blob values decoded ({label, kind, payload}). Payload paths "
    "reach inside blobs: SELECT data.status, count(*) FROM ks.t WHERE data.total > 10 GROUP BY "
    "data.status ALLOW FILTERING. A cut answer carries a cursor for the rest.",
    (_statement(),
     Argument("limit", "integer", f"rows at most (default {DEFAULT_ROWS})",
              keywords={"minimum": 1, "maximum": MAX_ROWS}),
     _decode(), _cursor()),
    Reads("statement", "statement"), READ, output_schemas.rows_schema(),
    Service("cqlsh_ext.reading.select", "read_select"),
    details="Payload paths select, filter, group, order and aggregate: SELECT data.status, "
            "data.items[0].sku FROM ks.t WHERE data.status = 'FAILED' ALLOW FILTERING. A blob no "
            "detection reads is its \"0x...\" hex, or {kind, payload, note} saying why; the group "
            "of undecodable values is {\"$undecodable\": true}. A statement that reads beyond the "
            "partitions its WHERE names needs ALLOW FILTERING; a full scan that costs (Amazon "
            "Keyspaces, or a table of 1 GB or more) is refused with its estimated cost until the "
            "statement ends with ALLOW FILTERING CONFIRM. Anything but a SELECT is refused. At most "
            f"`limit` rows (default {DEFAULT_ROWS}); the same statement with a cut answer's cursor "
            "answers the rows that follow, each once."))
register(Feature(
    "describe_payload", "What a blob column holds",
    f"DESCRIBE PAYLOAD: a blob or text column's encodings (e.g. {CODEC_EXAMPLES[0]}>json) and the "
    "paths inside its values, with their types and frequent values; or their JSON Schema.",
    (Argument("column", "string", "keyspace.table.column", required=True),
     _sample("rows read at random", MAX_SAMPLE),
     Argument("where", "string", "conditions as after WHERE: data.status = 'PAID'", keyword="WHERE",
              conditions=True),
     _decode(),
     Argument("json_schema", "boolean", "answer the values' JSON Schema instead"),
     Argument("every_row", "boolean", "true: read every row (ALL), not a sample", listed=False,
              keyword="ALL"),
     Argument("confirm", "boolean", "true: read every row where it costs (Amazon Keyspaces, 1 GB or more) "
              "without asking", listed=False, keyword="CONFIRM", goes_with="every_row")),
    Reads("column", "column"), READ, output_schemas.DESCRIBE_PAYLOAD,
    Service("cqlsh_ext.describe.run", "describe"),
    details="From a sample of rows (sample: read at random; every_row: every row; else a reading "
            "chosen from the table's size) or the rows a where names: every path inside the values "
            "with its presence, types, frequent values, lengths and bounds. With json_schema, each "
            "place's values as a JSON Schema (draft 2020-12) instead of the report. Reading every "
            "row where it costs (Amazon Keyspaces, or a table of 1 GB or more) is refused with its "
            "estimated cost unless confirm is true.",
    request=report_requests.describe_payload,
    method=Method("describe_payload", omits=("decode", "json_schema")),
    # The shell's: DESC is its alias (describe.parse.recognizes tells it from cqlsh's DESCRIBE); how
    # values decode is the session's; JSON prints the report as JSON; SEED draws the same sample again.
    statement=Statement(("DESCRIBE", "PAYLOAD"),
                        "DESCRIBE PAYLOAD shop.orders.data WHERE data.status = 'PAID' SAMPLE 5000",
                        options_last=True, omits=("decode", "json_schema"), aliases=(("DESC", "PAYLOAD"),),
                        recognizes=describe_parse.recognizes, help=PAYLOAD_ABOUT,
                        completers=(("column", describe_command.complete_column),),
                        clauses=(Clause(("SEED",), "seed", "integer", "s", goes_with="sample"),))))
register(Feature(
    "compression_stats", "Compression statistics",
    "COMPRESSION STATS: per blob or text column, values by codec, stored and decompressed bytes "
    "and ratios, with a verdict.",
    (_table(), _COLUMN, _sample("rows to estimate from"),
     Argument("confirm", "boolean", "true: scan a whole table whose scan costs (Amazon Keyspaces, 1 GB or "
              "more) without asking", listed=False, keyword="CONFIRM")),
    Reads("table", "table"), REPORT, output_schemas.STATS,
    Service("cqlsh_ext.insight.run_stats", "stats_answer"),
    details="Also size buckets and Amazon Keyspaces capacity units per row. With sample, an "
            "estimate from random slices holding that many rows. A whole-table scan that costs "
            "(Amazon Keyspaces, or a table of 1 GB or more) is refused with its estimated cost "
            "unless confirm is true.",
    request=report_requests.stats, method=Method("stats"),
    # The shell's: a SELECT names the column; SAMPLE says more than rows; PARALLEL sets its
    # processes; DECODE ALL decompresses every value rather than reading sizes from headers.
    statement=Statement(("COMPRESSION", "STATS"), "COMPRESSION STATS SAMPLE SELECT data FROM ks.t;",
                        select=True, omits=("column", "sample"), help=STATS_ABOUT,
                        clauses=(Clause(("SAMPLE",), "sample", clauses.stats_sample, "...",
                                        grammar=clauses.STATS_SAMPLE_GRAMMAR[0],
                                        rules=clauses.STATS_SAMPLE_GRAMMAR[1]),
                                 Clause(("PARALLEL",), "parallel", "integer", "n"),
                                 Clause(("DECODE", "ALL"), "decode_all", "flag")))))
register(Feature(
    "compression_settings", "Compression settings",
    "COMPRESSION SETTINGS: the table's SSTable compression options beside measurements on a sample "
    "of its rows, and advice.",
    (_table(), _sample("rows measured (default 1000)", listed=False)), Reads("table", "table"), REPORT,
    output_schemas.SETTINGS, Service("cqlsh_ext.insight.run_settings", "settings_answer"),
    details=SETTINGS_ABOUT,
    request=report_requests.settings, method=Method("settings"),
    statement=Statement(("COMPRESSION", "SETTINGS"), "COMPRESSION SETTINGS ks.t;", help=SETTINGS_HELP_ABOUT)))
register(Feature(
    "inspect_value", "Inspect a value",
    "INSPECT the blob value a SELECT names: its nesting chain, containers, headers, checksums, "
    "sizes and payload kind.",
    (_statement("a SELECT naming one blob value"), _decode()),
    Reads("statement", "statement"), READ, output_schemas.INSPECT,
    Service("cqlsh_ext.insight.run_inspect", "inspect_values"),
    details=f"SELECT data FROM ks.t WHERE id = 42: one value is what it is for, at most "
            f"{INSPECT_VALUES}; each layer's container and headers, checksums verified, sizes and "
            "ratio, and the payload's kind.",
    request=report_requests.inspect,
    # The shell's: how values decode is its session's (-d, DECODE), each value printed as it is read.
    statement=Statement(("INSPECT",), "INSPECT SELECT data FROM ks.t WHERE id = 42;", select=True,
                        omits=("decode",), runs=Service("cqlsh_ext.insight.run_inspect", "print_values"),
                        help=INSPECT_ABOUT)))
register(Feature(
    "compression_advise", "Compression advice",
    "COMPRESSION ADVISE: each codec and level's ratio and speed, measured on a sample of each blob "
    "or text column's values, with a verdict.",
    (_table(), _COLUMN, _sample("values per column (default 300)", MAX_ADVISE_SAMPLE)),
    Reads("table", "table"), REPORT, output_schemas.ADVISE,
    Service("cqlsh_ext.insight.run_advise", "advise_answer"),
    details="Compresses the sample's decompressed values with every available codec and level (and "
            "a trained dictionary where it helps): ratio, compress and decompress speed measured "
            "here, capacity units. It never saves a dictionary (no file is written).",
    request=report_requests.advise, method=Method("advise"),
    # The shell's: a SELECT names the column (and the rows), SAVE DICTIONARY writes a file there.
    statement=Statement(("COMPRESSION", "ADVISE"),
                        "COMPRESSION ADVISE SELECT data FROM ks.t LIMIT 500;",
                        select=True, omits=("column",), help=ADVISE_ABOUT,
                        clauses=(Clause(("SAVE", "DICTIONARY"), "dictionaries_to", "string", "'file'",
                                        closing=True),))))
register(Feature(
    "export", "Export to a file",
    "Writes one SELECT's whole answer as Parquet or JSON Lines in the server's export directory; "
    "answers a resource_link, read by resources/read in chunks.",
    (_statement(),
     Argument("format", None, "parquet (default) or jsonl", keywords={"enum": ["parquet", "jsonl"]},
              listed=False),
     _decode()),
    Reads("statement", "statement"), READ, output_schemas.EXPORT, Service("cqlsh_ext.export.run", "export"),
    details="The file is what the shell's COPY (SELECT ...) TO 'file' writes for the same statement; "
            "the server names it, never the client. It is kept for the server's mcp_export_max_age "
            "while the directory holds at most mcp_export_max_bytes (the oldest go first); a chunk is "
            "at most the server's answer cap as sent, its _meta saying offset, size, truncated and "
            "next. Refused on a table whose values the policy redacts."))
register(Feature(
    "propose_edit", "Propose an edit",
    "The UPDATE (or DELETE) of a payload path, or the COMPRESSION REWRITE of a column (target), a "
    "person would run in cqlsh-ext, with its preview: rows to change, refused, bytes. Writes nothing.",
    (_table(), Argument("where", "string", "after WHERE: id = 42"),
     Argument("path", "string", "data.status", required=True),
     Argument("value", None, "the new value, any JSON (SET the path to it)", listed=False),
     Argument("remove", "boolean", "true: DELETE the path instead (no value)", listed=False),
     Argument("target", "string", "a chain to re-encode the column's values in ('zstd', 'gzip:9'): "
              "COMPRESSION REWRITE, path the column", listed=False),
     Argument("allow_filtering", "boolean", "true: the WHERE names no full primary key, and the rows a "
              "scan finds are edited", listed=False)),
    Reads("table", "table"), READ, output_schemas.PROPOSAL, Service("cqlsh_ext.edit.run", "preview_edit"),
    details="The statement is the shell's edit (docs/edit.md), or with target its COMPRESSION "
            "REWRITE (docs/rewrite.md: a sample of a big table, sampled: true): run as it is, the shell "
            "previews the same figures and asks before writing (to_write adds CONFIRM). The server only "
            "reads: each row's value is read and rewritten as the edit would, in memory. Refused on a "
            "table whose values the policy redacts (the preview shows values)."))

#: The features declared here (cqlsh-ext's own read features; docs/features.md documents these).
OWN = tuple(name for name, feature in FEATURES.items() if feature.writes is None)
