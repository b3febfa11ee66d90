"""The describe package's declarations (found through the entry point group cqlsh_ext.features: the
registry imports this module, never its services): the cluster's keyspaces and tables, a table's
schema, and DESCRIBE PAYLOAD, what a blob column holds (its statement read by the shell from the
declaration, told from cqlsh's own DESCRIBE by describe.parse.recognizes)."""

from __future__ import annotations

from typing import Any

from cqlsh_ext.codecs.base import CODEC_EXAMPLES
from cqlsh_ext.features import output_schemas
from cqlsh_ext.features.arguments import (
    Invalid,
    cursor_argument,
    decode_argument,
    names,
    sample_argument,
)
from cqlsh_ext.features.commands import register_mistyped
from cqlsh_ext.features.feature import (
    READ,
    Argument,
    Clause,
    Feature,
    FeatureCall,
    Method,
    Reads,
    Service,
    Statement,
    Text,
    register,
)
from cqlsh_ext.features.help import StatementHelp
from cqlsh_ext.payload.names import FORMAT_EXAMPLES, title

#: describe_table reads this many rows of the text columns to tell JSON text.
TEXT_SAMPLE_ROWS = 20
#: What blobs hold, as the descriptions say it (from the declarations: payload.names, codecs.base).
PAYLOADS = f"compressed JSON, {', '.join(title(name) for name in FORMAT_EXAMPLES)}, ..."
#: The largest SAMPLE a feature asks for.
MAX_SAMPLE = 10_000_000

def describe_payload_request(call: FeatureCall) -> Any:
    """describe_payload: DESCRIBE PAYLOAD [keyspace.]table.column [WHERE where] [SAMPLE n [SEED s] |
    ALL [CONFIRM]] (the keyspace None: the context's; a table named without its column: the column
    '', refused by the reading with the table's columns). `decode` and `json_schema` are the front
    end's: how its context decodes values, how it shapes the answer; SEED is the shell's clause (what
    goes with what is the declaration's: Argument.goes_with)."""
    from cqlsh_ext.describe.parse import DescribeStatement
    from cqlsh_ext.features.forms import form

    said = "describe_payload: "
    # As many names as given, so that a place inside the column (ks.t.data.status) is said as one.
    found = names(call.arguments["column"], tuple(range(1, 17)), "column")
    if len(found) > 3:
        raise Invalid(f"{said}{'.'.join(found)}: name one column, as keyspace.table.column; a map's keys "
                      "and a UDT's fields are described as places of their column")
    keyspace = found[0] if len(found) == 3 else None
    table, column = (found[-2], found[-1]) if len(found) > 1 else (found[0], "")
    where = (call.arguments.get("where") or "").strip() or None
    if where is not None and where.upper().split()[-1] == "FILTERING":
        raise Invalid(f"{said}no ALLOW FILTERING here: DESCRIBE PAYLOAD reads what it describes (SAMPLE n "
                      "or ALL say how much)")
    rows, seed = call.arguments.get("sample"), call.clauses.get("seed")
    every_row, confirm = bool(call.arguments.get("every_row")), bool(call.arguments.get("confirm"))
    if rows is not None and every_row:
        raise Invalid(f"{said}SAMPLE n and ALL (every_row) are two readings: give one (or neither: the "
                      "table's size decides)")
    return DescribeStatement(keyspace, table, column, where, sample=rows, seed=seed, every_row=every_row,
                             confirm=confirm, form=form(DESCRIBE_PAYLOAD),
                             example=DESCRIBE_PAYLOAD_STATEMENT.example)


register(Feature(
    "list_keyspaces", "Keyspaces", "The cluster's keyspaces.", (cursor_argument(),), Reads("keyspaces"), READ,
    output_schemas.rows_schema({"keyspace_name": {"type": "string"}}),
    Service("cqlsh_ext.reading.statement", "read_statement"),
    details="The rows of SELECT keyspace_name FROM system_schema.keyspaces; the keyspaces the "
            "policy never reads are left out, and a note says so. A cut answer's cursor lists "
            "the rest."))
register(Feature(
    "list_tables", "Tables", "The tables of a keyspace.",
    (Argument("keyspace", "string", "a keyspace name", required=True, listed=False), cursor_argument()),
    Reads("keyspace", "keyspace"), READ, output_schemas.rows_schema({"table_name": {"type": "string"}}),
    Service("cqlsh_ext.reading.statement", "read_statement"),
    details="The rows of SELECT table_name FROM system_schema.tables WHERE keyspace_name = ...; a "
            "keyspace that does not exist is an error that says so. A cut answer's cursor lists "
            "the rest."))
register(Feature(
    "describe_table", "A table's schema",
    "A table's CQL schema, and which columns hold blobs (decoded by cqlsh-ext) or JSON text.",
    (Argument("table", "string", "keyspace.table", required=True),), Reads("table", "table"), READ,
    output_schemas.DESCRIBE_TABLE, None,
    details=f"DESCRIBE TABLE, and per column its type, its key and what it holds: blob (whose "
            f"contents cqlsh-ext decodes: {PAYLOADS}), blobs inside (a collection, tuple or UDT "
            f"holding blobs), JSON text (a text column whose values hold JSON, told from "
            f"{TEXT_SAMPLE_ROWS} rows), text."))

#: DESCRIBE PAYLOAD in the shell: DESC is its alias (describe.parse.recognizes tells it from cqlsh's
#: DESCRIBE); how values decode is the session's; JSON prints the report as JSON; SEED draws the same
#: sample again.
DESCRIBE_PAYLOAD_STATEMENT = Statement(
    ("DESCRIBE", "PAYLOAD"), "DESCRIBE PAYLOAD shop.orders.data WHERE data.status = 'PAID' SAMPLE 5000",
    options_last=True, omits=("decode", "json_schema"), aliases=(("DESC", "PAYLOAD"),),
    recognizes=Service("cqlsh_ext.describe.parse", "recognizes"),
    help=Text("cqlsh_ext.describe.help", "PAYLOAD_ABOUT"),
    completers=(("column", Service("cqlsh_ext.describe.command", "complete_column")),),
    clauses=(Clause(("SEED",), "seed", "integer", "s", goes_with="sample"),),
    spark=Service("cqlsh_ext.spark.describe_job", "on_spark"),
    # Its HELP topics, and what HELP DESCRIBE (HELP DESC) adds after cqlsh's.
    topics=tuple((topic, StatementHelp("describe_payload"))
                 for topic in ("payload", "describe payload", "desc payload")),
    see_also=tuple((word, Text("cqlsh_ext.describe.help", "DESCRIBE_SEE_ALSO"))
                   for word in ("describe", "desc")))
DESCRIBE_PAYLOAD = register(Feature(
    "describe_payload", "What a blob column holds",
    f"DESCRIBE PAYLOAD: a blob or text column's encodings (e.g. {CODEC_EXAMPLES[0]}>json) and the "
    "paths inside its values, with their types and frequent values; or their JSON Schema.",
    (Argument("column", "string", "keyspace.table.column", required=True),
     sample_argument("rows read at random", MAX_SAMPLE),
     Argument("where", "string", "conditions as after WHERE: data.status = 'PAID'", keyword="WHERE",
              conditions=True),
     decode_argument(),
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
    request=describe_payload_request,
    method=Method("describe_payload", omits=("decode", "json_schema")),
    statement=DESCRIBE_PAYLOAD_STATEMENT))

#: The words a DESCRIBE PAYLOAD statement starts with (its own and its alias's), lower case.
_WORDS = frozenset(words[0].lower() for words in (DESCRIBE_PAYLOAD_STATEMENT.words,
                                                  *DESCRIBE_PAYLOAD_STATEMENT.aliases))
register_mistyped(tuple(sorted(_WORDS, key=len, reverse=True)),
                  Service("cqlsh_ext.describe.command", "mistyped"))
