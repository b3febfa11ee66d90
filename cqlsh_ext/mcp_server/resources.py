"""Resources and prompts: what an assistant's client can show or attach without a tool call.

Resources (their names URL-quoted, as the schema spells them):
    cqlsh-ext://schema/{keyspace}/{table}             describe_table's answer: the CQL schema, and
                                                      per column its type, key and payload
    cqlsh-ext://payload/{keyspace}/{table}/{column}   describe_payload's answer on a sample of
                                                      PAYLOAD_SAMPLE rows: encodings, paths, values
    cqlsh-ext://tools/{name}                          a tool's full description (tools.Tool.document:
                                                      tools/list carries its short one)
resources/list lists the tools' descriptions, and the first two for the tables of the keyspaces
that are not Cassandra's own (at most MAX_TABLES), one payload resource per blob or text column;
the templates name any other. A read of a table's resource is the tool's call (the same queue,
time limit, policy and audit), its answer the resource's text; a tool's description reads nothing.

Prompts: survey a keyspace's blobs, explain a table's compression, answer a question from a
table's payloads; each lists only when the tools it names are permitted.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import quote, unquote

from cqlsh_ext.cql.system import is_system_keyspace

if TYPE_CHECKING:
    from cqlsh_ext.mcp_server.answers import ToolAnswer
    from cqlsh_ext.mcp_server.policy import Policy
    from cqlsh_ext.mcp_server.tools import Work

SCHEME = "cqlsh-ext"
SCHEMA_TEMPLATE = f"{SCHEME}://schema/{{keyspace}}/{{table}}"
PAYLOAD_TEMPLATE = f"{SCHEME}://payload/{{keyspace}}/{{table}}/{{column}}"
TOOL_TEMPLATE = f"{SCHEME}://tools/{{name}}"
#: A tool's description is Markdown.
TOOL_MIME = "text/markdown"
MAX_TABLES = 200
PAYLOAD_SAMPLE = 200
MIME = "application/json"


class BadUri(Exception):
    """A resource URI that names nothing of ours; str() is the one line."""


def schema_uri(keyspace: str, table: str) -> str:
    return f"{SCHEME}://schema/{quote(keyspace, safe='')}/{quote(table, safe='')}"


def payload_uri(keyspace: str, table: str, column: str) -> str:
    return f"{SCHEME}://payload/{quote(keyspace, safe='')}/{quote(table, safe='')}/{quote(column, safe='')}"


def tool_uri(name: str) -> str:
    return f"{SCHEME}://tools/{quote(name, safe='')}"


def described_tool(uri: str) -> str | None:
    """The tool whose description `uri` names (cqlsh-ext://tools/NAME), or None: not a tool's description."""
    prefix = f"{SCHEME}://tools/"
    return unquote(uri[len(prefix):]) if uri.startswith(prefix) and "/" not in uri[len(prefix):] else None


#: A resource's cap as sent: its client application reads it (and decides what of it reaches a
#: model), so it is not held to a tool answer's default (sizing.DEFAULT_ANSWER_BYTES, which a model
#: reads whole).
RESOURCE_BYTES = 32 << 10


def tool_of(uri: str) -> tuple[str, dict[str, Any]]:
    """The tool call that reads `uri`: (tool name, arguments, RESOURCE_BYTES its cap). Raises BadUri."""
    from cqlsh_ext.cql.spelling import spell

    prefix = f"{SCHEME}://"
    if not uri.startswith(prefix):
        raise BadUri(f"no resource {uri!r} (resources are {SCHEMA_TEMPLATE} and {PAYLOAD_TEMPLATE})")
    kind, *parts = uri[len(prefix):].split("/")
    names = [unquote(part) for part in parts]
    if kind == "schema" and len(names) == 2 and all(names):
        return "describe_table", {"table": ".".join(spell(n) for n in names), "max_bytes": RESOURCE_BYTES}
    if kind == "payload" and len(names) == 3 and all(names):
        return "describe_payload", {"column": ".".join(spell(n) for n in names), "sample": PAYLOAD_SAMPLE,
                                    "max_bytes": RESOURCE_BYTES}
    raise BadUri(f"no resource {uri!r} (resources are {SCHEMA_TEMPLATE} and {PAYLOAD_TEMPLATE})")


def listing(work: Work, policy: Policy) -> ToolAnswer:
    """The resources of the tables (an answer of the `resources/list` call: data["resources"])."""
    from cqlsh_ext.cql.types import parse, udts_of
    from cqlsh_ext.mcp_server.answers import ToolAnswer

    found: list[dict[str, Any]] = []
    tables = 0
    metadata = work.served.context.cluster.metadata
    for keyspace in sorted(metadata.keyspaces):
        # the server's own keyspaces are not listed (reachable by URI)
        if is_system_keyspace(keyspace) or policy.refusal(keyspace) is not None:
            continue
        meta = metadata.keyspaces[keyspace]
        udts = udts_of(meta)
        for table in sorted(meta.tables):
            if policy.refusal(keyspace, table) is not None:
                continue
            tables += 1
            if tables > MAX_TABLES:
                break
            found.append({"uri": schema_uri(keyspace, table), "name": f"{keyspace}.{table} schema",
                          "description": f"The CQL schema of {keyspace}.{table} and what its columns hold",
                          "mimeType": MIME})
            table_meta = meta.tables[table]
            keys = {c.name for c in (*table_meta.partition_key, *table_meta.clustering_key)}
            for name, column in table_meta.columns.items():
                cqltype = parse(column.cql_type, udts)
                if cqltype.is_blob or cqltype.holds() or (cqltype.is_text and name not in keys):
                    found.append({"uri": payload_uri(keyspace, table, name),
                                  "name": f"{keyspace}.{table}.{name} payload",
                                  "description": f"What {keyspace}.{table}.{name} holds: encodings, "
                                                 f"paths and frequent values, from a sample of "
                                                 f"{PAYLOAD_SAMPLE} rows",
                                  "mimeType": MIME})
    # A listing for the client, not an answer for the assistant: MAX_TABLES bound it, not a cap.
    return ToolAnswer(data={"resources": found, "cut": tables > MAX_TABLES}, cap=8 << 20)


# ------------------------------------------------------------------------------------------ prompts


@dataclass(frozen=True)
class Prompt:
    name: str
    title: str
    description: str
    #: (argument name, description); all required.
    arguments: tuple[tuple[str, str], ...]
    #: The tools it asks for.
    tools: tuple[str, ...]
    text: str


PROMPTS = (
    Prompt("survey_keyspace_blobs", "Survey a keyspace's blobs",
           "What the blob and JSON text columns of a keyspace hold: encodings, paths, sizes, what cannot "
           "be read",
           (("keyspace", "the keyspace to survey"),),
           ("list_tables", "describe_table", "describe_payload", "compression_stats"),
           "Survey the compressed and JSON values of the Cassandra keyspace {keyspace}, reading only.\n"
           "1. list_tables {{\"keyspace\": \"{keyspace}\"}}.\n"
           "2. For each table, describe_table: note the columns whose `holds` is blob, blobs inside or "
           "JSON text.\n"
           "3. For each such column, describe_payload with a sample of 200 rows: its encodings (codec and "
           "format labels, shares), and its main paths with their types and most frequent values.\n"
           "4. For each such table, compression_stats: stored against decompressed sizes, the verdict.\n"
           "Then report, per table and column: what the values are (codec > format), the paths that matter "
           "(ids, statuses, timestamps, amounts), the share of values that could not be read and why, and "
           "the storage saved. Where values are in no known format and you can tell what they are, say "
           "which decode spec would read them (a decode argument such as {{\"data\": \"deflate\"}})."),
    Prompt("explain_table_compression", "Explain a table's compression",
           "How a table's values are compressed, by the client and by Cassandra, and what would do better",
           (("table", "keyspace.table"),),
           ("describe_table", "compression_stats", "compression_settings", "compression_advise"),
           "Explain how the Cassandra table {table} is compressed, reading only.\n"
           "1. describe_table {{\"table\": \"{table}\"}}: which columns hold blobs or JSON text.\n"
           "2. compression_stats: the codecs the application used (client-side), stored against "
           "decompressed bytes, and (on Amazon Keyspaces) the capacity units per row.\n"
           "3. compression_settings: the table's SSTable compression (chunk length, compressor) and what "
           "a different chunk length would change.\n"
           "4. compression_advise: what each codec and level would save on a sample, and at what speed.\n"
           "Explain the two layers (the application's codec inside each value, Cassandra's chunk "
           "compression on disk) and how they interact, then recommend one change at most, with its "
           "measured gain and cost. Say which figures are estimates from a sample."),
    Prompt("answer_from_payloads", "Answer a question from a table's payloads",
           "Find the paths inside a table's compressed values, then query them to answer a question",
           (("table", "keyspace.table"), ("question", "what to find out")),
           ("describe_table", "describe_payload", "query"),
           "Answer from the Cassandra table {table}, reading only: {question}\n"
           "1. describe_table {{\"table\": \"{table}\"}} to find the blob or JSON text columns.\n"
           "2. describe_payload on the column that matters, to learn the paths inside its values and "
           "their values.\n"
           "3. query with payload paths: SELECT data.status, count(*) FROM {table} GROUP BY data.status "
           "ALLOW FILTERING, or a WHERE on a path. Keep answers small: select the paths you need, use a "
           "LIMIT. A cut answer says so: narrow the query rather than asking for everything.\n"
           "Answer with the figures the queries returned, and say how many rows each one read."),
)


def prompts_for(policy: Policy) -> list[Prompt]:
    return [p for p in PROMPTS if all(policy.permits_tool(t) for t in p.tools)]


def prompt_text(prompt: Prompt, arguments: dict[str, str]) -> str:
    """The prompt's text with its arguments; raises BadUri (a bad argument) in one line."""
    missing = [name for name, _ in prompt.arguments if not str(arguments.get(name, "")).strip()]
    if missing:
        raise BadUri(f"prompt {prompt.name} needs {', '.join(missing)}")
    for name, value in arguments.items():
        if len(str(value)) > 4096:
            raise BadUri(f"prompt {prompt.name}: {name} is longer than 4,096 characters")
    return prompt.text.format(**{name: str(arguments.get(name, "")).strip() for name, _ in prompt.arguments})
