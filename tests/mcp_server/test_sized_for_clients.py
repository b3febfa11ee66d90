"""`cqlsh-ext mcp`'s answers sized for the clients that read them: a default answer on the demo's
widest tables is within 10 KB as sent and 256 lines (Codex keeps no more of a tool's output),
compact JSON, its summary (rows, exact, truncated, cursor) the first line of its text and the last
(clients keep the head, or the head and the tail); through both transports. Every tool description
and the server's instructions within 2 KB (Claude Code cuts them there), the instructions' first
512 characters a whole paragraph (ChatGPT's Apps SDK reads that much alone), and
`_meta["anthropic/maxResultSizeChars"]` declared by the export-like tools only.

The limits are the clients' (written here, not read from the server's code)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from .conftest import ASSISTANT, ASSISTANT_PASSWORD, Demo
from .harness import HttpMcpServer, Result, framed, write_credentials

pytestmark = pytest.mark.server

#: Codex's cap on a tool's output, and Claude Code's on a description and on the instructions.
ANSWER_BYTES, ANSWER_LINES, DESCRIPTION_BYTES, FIRST_CHARS = 10_000, 256, 2048, 512
RESULT_CHARS = "anthropic/maxResultSizeChars"


def _calls(keyspace: str) -> list[tuple[str, dict[str, Any]]]:
    """Calls with no cap given, on the demo's widest tables: its documents (up to 67 KB each), its
    table of most columns (blobs inside collections and a UDT), a value of every container."""
    orders, nested = f"{keyspace}.table_with_compressed_json", f"{keyspace}.nested_blobs"
    return [("query", {"statement": f"SELECT * FROM {orders}"}),
            ("query", {"statement": f"SELECT * FROM {keyspace}.table_with_uncompressed_json"}),
            ("query", {"statement": f"SELECT * FROM {nested}"}),
            ("query", {"statement": f"SELECT * FROM {keyspace}.blob_formats"}),
            ("query", {"statement": f"SELECT data.status, count(*) FROM {orders} GROUP BY data.status "
                                    "ALLOW FILTERING"}),
            ("describe_table", {"table": nested}),
            ("describe_payload", {"column": f"{orders}.data"}),
            ("inspect_value", {"statement": f"SELECT data FROM {orders} LIMIT 3"}),
            ("compression_stats", {"table": orders, "sample": 50})]


def _sized(result: Result, line_bytes: int) -> dict[str, Any]:
    """An answer within the clients' caps (`line_bytes`: its message as sent), summary first and
    last, its JSON compact; its summary."""
    assert line_bytes <= ANSWER_BYTES, line_bytes
    [text] = result.texts
    assert len(text.split("\n")) <= ANSWER_LINES
    answer = framed(text)
    assert answer.data == result.structured
    assert text.split("\n")[1] == json.dumps(answer.data, ensure_ascii=False, separators=(",", ":"))
    return answer.summary


def test_default_answers_fit_every_client_through_stdio_and_http(serve, demo: Demo,
                                                                 assistant_home: Path) -> None:
    calls = _calls(demo.keyspace)
    server = serve()
    stdio = [server.call(tool, **arguments) for tool, arguments in calls]
    # The wire as the client read it: each call's answer is one JSON-RPC line, in the order asked.
    lines = [line for line in server.wire.read_bytes().split(b"\n") if b'"result":{"content":' in line]
    assert len(lines) == len(calls)
    summaries = [_sized(result, len(line)) for result, line in zip(stdio, lines, strict=True)]
    # The answers cut say so, with the cursor that goes on where there is one.
    first = summaries[0]
    assert first["truncated"] and first["exact"] is False and first["cursor"] and 0 < first["rows"] < 200
    assert summaries[4] == {"rows": summaries[4]["rows"], "exact": True, "truncated": False, "cursor": None}
    write_credentials(assistant_home, ASSISTANT, ASSISTANT_PASSWORD)
    with HttpMcpServer(list(demo.conn), assistant_home) as http, http.client() as client:
        for (tool, arguments), by_stdio in zip(calls, stdio, strict=True):
            result = client.call(tool, **arguments)
            sent = {"jsonrpc": "2.0", "id": 1, "result": {
                "content": [{"type": "text", "text": text} for text in result.texts],
                "structuredContent": result.structured, "isError": result.is_error}}
            size = len(json.dumps(sent, ensure_ascii=False, separators=(",", ":")).encode())
            summary = _sized(result, size)
            assert {k: v for k, v in summary.items() if k != "cursor"} == \
                {k: v for k, v in framed(by_stdio.texts[0]).summary.items() if k != "cursor"}


def test_descriptions_and_instructions_fit_and_only_exports_declare_their_size(serve, tmp_path: Path) -> None:
    server = serve("--export-dir", str(tmp_path / "exports"))
    tools = server.tools()
    for tool in tools:
        assert len((tool.description or "").encode()) <= DESCRIPTION_BYTES, tool.name
    declared = {tool.name: (tool.meta or {}).get(RESULT_CHARS) for tool in tools}
    writes_files = {tool.name for tool in tools if tool.annotations is not None
                    and tool.annotations.read_only_hint is False}
    assert writes_files == {"export"}
    assert {name for name, size in declared.items() if size is not None} == writes_files
    assert 50_000 < declared["export"] <= 500_000
    instructions = str(server.client.instructions or "")
    assert len(instructions.encode()) <= DESCRIPTION_BYTES
    first = instructions.split("\n\n")[0]
    assert len(first) <= FIRST_CHARS and first.endswith(".") and first != instructions
    for word in ("read-only", "list_keyspaces", "query", "summary", "truncated", "cursor"):
        assert word in first, word

