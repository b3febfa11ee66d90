"""The Model Context Protocol's side: the official `mcp` SDK's low-level Server, over stdio or the
SDK's Streamable HTTP transport (transport.py), in a thread of its own (the shell keeps the main
thread: its Ctrl-C handling, its worker processes).

tools/list answers the declarations of tools.py that the policy permits (policy.py), each with its
annotations. tools/call first takes what needs no shell, answered at once even while another call
runs: the bounds of its arguments (bounds.py: before anything parses them) and the calls-per-minute
limit (ratelimit.py); then it queues the call for the shell's thread (calls.py), where guard.py
checks it against the policy around the tool's answer, and waits for it, at most until its time
limit and a grace after (a call that does not end then is answered as stopped; the shell's thread
finishes it in the background and the next calls wait for that). A call the client cancels is
halted there: its reading stops at once, and the SDK sends no answer, as the protocol says. A call
whose client sent a progress token is told of its reading's progress (progress.py: the reading's
events), the last figure before the answer. Each answer is one text block, its JSON (one line)
between its summary's lines (answers.ToolAnswer.frame), and the same JSON as structured content,
declared by the tool's outputSchema (output_schemas.py), at most its cap as sent (answers.py); an
error answer is one line. Each call ends with its line in the audit log (audit.py), when there is
one.

resources/list, resources/read and the templates, prompts/list and prompts/get: resources.py; a
resource is read by its tool's call, through the same queue, policy and audit.

On stdio the protocol reads and writes file descriptors of its own (cli.py took them before anything
else could print): whatever the shell, cqlsh, the driver or a library prints cannot reach the wire.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from cqlsh_ext import __version__
from cqlsh_ext.describe.declared import PAYLOADS
from cqlsh_ext.mcp_server import bounds, sizing
from cqlsh_ext.mcp_server.answers import ToolAnswer, failed
from cqlsh_ext.mcp_server.log import log
from cqlsh_ext.mcp_server.tools import TOOLS, Tool

if TYPE_CHECKING:
    from mcp.server.caching import CacheableMethod

    from cqlsh_ext.mcp_server.audit import AuditLog
    from cqlsh_ext.mcp_server.calls import Calls
    from cqlsh_ext.mcp_server.guard import Guard
    from cqlsh_ext.mcp_server.oauth import Requirement
    from cqlsh_ext.mcp_server.ratelimit import RateLimit
    from cqlsh_ext.mcp_server.transport import HttpOptions, SpeltWriter

#: How long past its time limit a call's answer is waited for: the scan stops at its next page.
GRACE_SECONDS = 10.0
#: How long a client of 2026-07-28 may keep the lists of tools, templates and prompts, and the
#: resources (the tables), in milliseconds.
LIST_TTL_MS, RESOURCES_TTL_MS = 3_600_000, 60_000
#: The server's instructions: within 2 KB (Claude Code cuts them there, and every tool's description),
#: their first paragraph within 512 characters and whole in itself (ChatGPT's Apps SDK reads that
#: much alone): tests/mcp_server/test_sized_for_clients.py holds them so.
INSTRUCTIONS = (
    "cqlsh-ext reads an Apache Cassandra or Amazon Keyspaces database, read-only (anything but a read "
    f"is refused), and decodes what is inside blob columns ({PAYLOADS}). Start with list_keyspaces, "
    "list_tables and describe_table; query runs a SELECT. Every answer's text starts and ends with its "
    "summary: rows, exact, truncated and the cursor that goes on.\n\n"
    "describe_payload shows the paths inside a blob column, which query can select, filter, group and "
    "count (SELECT data.status, count(*) FROM ks.t GROUP BY data.status ALLOW FILTERING). "
    "compression_stats, compression_settings, compression_advise and inspect_value explain sizes and "
    "encodings; a column whose values no detection reads takes a decode argument "
    "({\"data\": \"deflate\"}). Never report a count or sum from the rows of a truncated answer: ask "
    "the database to count. Each tool's full description is the resource cqlsh-ext://tools/{name}."
)


@dataclass
class Setup:
    """What the protocol's side serves with (cli.py makes it)."""

    calls: Calls
    guard: Guard
    audit: AuditLog | None = None
    rate: RateLimit | None = None
    #: Streamable HTTP, or None for stdio on (read_fd, write_fd).
    http: HttpOptions | None = None
    read_fd: int = -1
    write_fd: int = -1


class Protocol:
    """The protocol's thread: start() serves; `failed` says why serving ended early (an HTTP
    address it could not listen on)."""

    def __init__(self, setup: Setup) -> None:
        self.setup = setup
        policy = setup.guard.policy
        self.tools = {name: setup.guard.wrap(tool) for name, tool in TOOLS.items()
                      if policy.permits_tool(name) and (not tool.files or setup.calls.exports is not None)}
        #: Every OAuth scope a tool declares (the protected resource's metadata names them).
        self.scopes = tuple(sorted({tool.scope for tool in TOOLS.values() if tool.scope is not None}))
        self.failed: str | None = None
        self.thread: threading.Thread | None = None
        #: stdio's writer, which writes an answer's structured content from its spelt JSON (None: HTTP).
        self.writer: SpeltWriter | None = None

    def start(self) -> threading.Thread:
        """Serve in a daemon thread; calls.close() when the client closes its end (stdio) or the
        server stops (HTTP)."""

        def serve() -> None:
            import anyio

            try:
                anyio.run(self._serve)
            except BaseException as err:  # noqa: BLE001 - said; the shell's loop is told to end
                from cqlsh_ext.mcp_server.transport import TransportError

                if isinstance(err, TransportError):
                    self.failed = str(err)  # said by the entry point, in one line
                else:
                    if self.setup.http is not None:
                        self.failed = f"the HTTP server ended: {type(err).__name__}: {err}"
                    log(f"the protocol ended: {type(err).__name__}: {err}")
            finally:
                self.setup.calls.close()

        self.thread = threading.Thread(target=serve, name="mcp-protocol", daemon=True)
        self.thread.start()
        return self.thread

    def server(self) -> Any:
        from mcp.server.caching import CacheHint
        from mcp.server.lowlevel import Server

        # 2026-07-28's cache hints (SEP-2549). Every list is what this server's policy permits (its
        # tools, templates and prompts; the tables it lists) and every read is redacted by it, so
        # none is for a cache shared across authorization contexts (a gateway in front of servers
        # with other policies): "private". The tools, templates and prompts are this server's for its
        # life; the resources list the tables, which come and go; a read is never kept.
        fixed = CacheHint(ttl_ms=LIST_TTL_MS, scope="private")
        cache_hints: dict[CacheableMethod, CacheHint] = {
            "tools/list": fixed, "resources/templates/list": fixed, "prompts/list": fixed,
            "resources/list": CacheHint(ttl_ms=RESOURCES_TTL_MS, scope="private"),
            "resources/read": CacheHint(ttl_ms=0, scope="private")}
        return Server("cqlsh-ext", version=__version__, instructions=INSTRUCTIONS, cache_hints=cache_hints,
                      on_list_tools=self._list_tools, on_call_tool=self._call_tool,
                      on_list_resources=self._list_resources,
                      on_list_resource_templates=self._list_resource_templates,
                      on_read_resource=self._read_resource,
                      on_list_prompts=self._list_prompts, on_get_prompt=self._get_prompt)

    async def _serve(self) -> None:
        from mcp.server.stdio import stdio_server

        server = self.server()
        if self.setup.http is not None:
            from cqlsh_ext.mcp_server.transport import serve_http

            await serve_http(server, self.setup.http, log, self)
            return
        from cqlsh_ext.mcp_server.transport import AnsweringUnreadable, BoundedLines, SpeltWriter

        stdin: Any = BoundedLines(self.setup.read_fd, log=log)
        self.writer = SpeltWriter(self.setup.write_fd, log)
        stdout: Any = self.writer
        async with stdio_server(stdin, stdout) as (read_stream, write_stream):
            await server.run(AnsweringUnreadable(read_stream, write_stream, log), write_stream,
                             server.create_initialization_options())

    def requirement(self, method: str, params: dict[str, Any]) -> Requirement | None:
        """The OAuth scope a request needs over HTTP (oauth.Guarded): a tool's call its tool's
        declared scope, a resource's read that of the tool that reads it, resources/list that of
        list_tables (it lists them); None for what reads nothing of the database (the lists of
        tools, templates and prompts, a prompt's text) and for what names no tool (answered so)."""
        from cqlsh_ext.mcp_server import resources
        from cqlsh_ext.mcp_server.oauth import Requirement

        if method == "tools/call":
            name, what = params.get("name"), "the tool {}"
        elif method == "resources/read":  # a tool's description (a BadUri here) reads nothing
            from cqlsh_ext.mcp_server import exports

            if exports.is_export(str(params.get("uri", ""))):  # a file of rows: read as its tool reads
                file_tool = next((tool for tool in TOOLS.values() if tool.files), None)
                return None if file_tool is None else Requirement(
                    f"a file written by {file_tool.name}", file_tool.scope)
            try:
                name, what = resources.tool_of(str(params.get("uri", "")))[0], "a resource read by {}"
            except resources.BadUri:
                return None
        elif method == "resources/list":
            name, what = "list_tables", "resources/list (it runs {})"
        else:
            return None
        tool = TOOLS.get(name) if isinstance(name, str) else None
        return None if tool is None else Requirement(what.format(tool.name), tool.scope)

    # ------------------------------------------------------------------------------ tools

    def no_tool(self, name: str) -> str:
        """Why this server offers no tool `name`: the flag that would offer one of ours, or the policy
        that leaves it out; the tools it offers."""
        offered = f"(tools: {', '.join(self.tools)})"
        tool = TOOLS.get(name)
        if tool is None:
            return f"no tool {name!r} {offered}"
        policy = self.setup.guard.policy
        if not policy.permits_tool(name):
            return f"no tool {name!r} on this server: the policy ({policy.source}) leaves it out {offered}"
        return (f"no tool {name!r} on this server: it writes files, and only a server started with "
                f"--export-dir DIR offers it {offered}")

    async def _list_tools(self, ctx: Any, params: Any) -> Any:
        from mcp import types

        return types.ListToolsResult(tools=[_declaration(tool) for tool in self.tools.values()])

    async def _call_tool(self, ctx: Any, params: Any) -> Any:
        from cqlsh_ext.mcp_server.transport import OVERSIZED

        arguments = params.arguments or {}
        if params.name == OVERSIZED:  # a message over bounds.MAX_MESSAGE_BYTES (transport.BoundedLines)
            answer = failed(str(arguments.get("why", "refused: the message is too large")))
            self._audit("(too large)", {}, answer, False, 0.0, refused=True)
            return _result(answer)
        tool = self.tools.get(params.name)
        if tool is None:
            return _result(failed(self.no_tool(params.name)))
        answer, stopped = await self.run(ctx, tool, arguments)
        writer = self.writer
        if writer is None:
            return _result(answer)
        version = str(getattr(ctx, "protocol_version", ""))
        return _result(answer, lambda body, frame: writer.stand_in(version, body, frame))

    async def run(self, ctx: Any, tool: Tool, arguments: dict[str, Any]) -> tuple[ToolAnswer, bool]:
        """Call `tool` on the shell's thread: its answer, and whether it was stopped; audited."""
        import asyncio

        import anyio

        started = time.monotonic()
        refusal = self._admit(arguments)
        if refusal is not None:
            answer = failed(refusal)
            self._audit(tool.name, arguments, answer, False, time.monotonic() - started, refused=True)
            return answer, False
        token = _progress_token(ctx)
        reporter = None
        if token is not None:
            from cqlsh_ext.mcp_server import progress

            send = progress.sender(asyncio.get_running_loop(), ctx.session.report_progress)
            reporter = progress.Reporter(send)
        loop = asyncio.get_running_loop()
        ended = anyio.Event()

        def on_done() -> None:  # from the shell's thread
            try:
                loop.call_soon_threadsafe(ended.set)
            except RuntimeError:  # the protocol is gone
                pass

        calls = self.setup.calls
        call = calls.submit(tool, arguments, on_done, reporter.event if reporter is not None else None,
                            _owner(ctx))
        try:
            with anyio.move_on_after(max(0.0, call.deadline - time.monotonic()) + GRACE_SECONDS):
                await ended.wait()
        except anyio.get_cancelled_exc_class():
            calls.halt(call, "cancelled by the client")
            self._audit(tool.name, arguments, None, True, time.monotonic() - started)
            raise
        if call.answer is None:
            calls.halt(call, f"the time limit ({calls.seconds:g} s)")
            answer = failed(f"stopped at the time limit ({calls.seconds:g} s); the statement is still "
                            "ending, and the next calls wait for it")
            self._audit(tool.name, arguments, answer, True, time.monotonic() - started)
            return answer, True
        last = reporter.last() if reporter is not None else None
        if last is not None:  # sent before the answer: a client stops listening once it has that
            try:
                await ctx.session.report_progress(*last)
            except Exception as err:  # noqa: BLE001 - a notification lost is no failed call
                log(f"a progress notification could not be sent: {type(err).__name__}: {err}")
        self._audit(tool.name, arguments, call.answer, call.why is not None, time.monotonic() - started)
        return call.answer, call.why is not None

    def _admit(self, arguments: dict[str, Any]) -> str | None:
        """What is refused before the call is queued: its arguments' bounds, the rate limit."""
        try:
            bounds.check_arguments(arguments)
        except bounds.TooLarge as err:
            return str(err)
        if self.setup.rate is not None:
            return self.setup.rate.take()
        return None

    def _audit(self, tool: str, arguments: dict[str, Any], answer: ToolAnswer | None, stopped: bool,
               seconds: float, refused: bool = False) -> None:
        if self.setup.audit is None:
            return
        try:
            self.setup.audit.record(tool, arguments, answer, stopped, seconds, refused)
        except Exception as err:  # noqa: BLE001 - a full disk must not take the answers down
            log(f"the audit log could not be written: {type(err).__name__}: {err}")

    # ------------------------------------------------------------------------------ resources

    async def _list_resources(self, ctx: Any, params: Any) -> Any:
        from mcp import types
        from mcp.shared.exceptions import MCPError

        from cqlsh_ext.mcp_server import resources

        policy = self.setup.guard.policy
        lister = Tool("resources/list", "Resources", "", {}, (),
                      lambda work, arguments: resources.listing(work, policy))
        answer, _ = await self.run(ctx, lister, {})
        if answer.data is None:
            raise MCPError(types.INTERNAL_ERROR, answer.error or "the resources could not be listed")
        described = [types.Resource(uri=resources.tool_uri(tool.name), name=f"{tool.name} (tool)",
                                    description=f"The full description of the tool {tool.name}",
                                    mime_type=resources.TOOL_MIME) for tool in self.tools.values()]
        return types.ListResourcesResult(resources=described + [
            types.Resource(uri=r["uri"], name=r["name"], description=r["description"],
                           mime_type=r["mimeType"])
            for r in answer.data["resources"]])

    async def _list_resource_templates(self, ctx: Any, params: Any) -> Any:
        from mcp import types

        from cqlsh_ext.mcp_server import resources

        templates = [types.ResourceTemplate(
            uri_template=resources.TOOL_TEMPLATE, name="tool description", mime_type=resources.TOOL_MIME,
            description="A tool's full description: what it does, each argument")]
        if "describe_table" in self.tools:
            templates.append(types.ResourceTemplate(
                uri_template=resources.SCHEMA_TEMPLATE, name="table schema", mime_type=resources.MIME,
                description="A table's CQL schema and what its columns hold (describe_table)"))
        if any(tool.files for tool in self.tools.values()):
            from cqlsh_ext.mcp_server import exports

            templates.append(types.ResourceTemplate(
                uri_template=exports.TEMPLATE, name="exported file", mime_type="application/octet-stream",
                description="A file the export tool wrote, in chunks: ?offset=N for the one a chunk's "
                            "_meta.next names"))
        if "describe_payload" in self.tools:
            templates.append(types.ResourceTemplate(
                uri_template=resources.PAYLOAD_TEMPLATE, name="column payload", mime_type=resources.MIME,
                description=f"What a blob or text column holds, from a sample of {resources.PAYLOAD_SAMPLE} "
                            "rows (describe_payload)"))
        return types.ListResourceTemplatesResult(resource_templates=templates)

    async def _read_resource(self, ctx: Any, params: Any) -> Any:
        from mcp import types
        from mcp.shared.exceptions import MCPError

        from cqlsh_ext.mcp_server import resources

        uri = str(params.uri)
        from cqlsh_ext.mcp_server import exports

        if exports.is_export(uri):
            return self._read_export(uri, _owner(ctx))
        described = resources.described_tool(uri)
        if described is not None:  # a tool's description: it reads nothing, and nothing is queued
            if described not in self.tools:
                raise MCPError(types.INVALID_PARAMS, f"{uri}: {self.no_tool(described[:100])}")
            return types.ReadResourceResult(contents=[types.TextResourceContents(
                uri=uri, mime_type=resources.TOOL_MIME, text=self.tools[described].document())])
        try:
            bounds.check_arguments({"uri": uri})
            name, arguments = resources.tool_of(uri)
        except (resources.BadUri, bounds.TooLarge) as err:
            raise MCPError(types.INVALID_PARAMS, str(err)) from None
        tool = self.tools.get(name)
        if tool is None:
            raise MCPError(types.INVALID_PARAMS, f"{uri}: the policy does not permit {name}")
        answer, _ = await self.run(ctx, tool, arguments)
        if answer.data is None:
            raise MCPError(types.INVALID_PARAMS, answer.error or f"{uri} could not be read")
        return types.ReadResourceResult(contents=[
            types.TextResourceContents(uri=uri, mime_type=resources.MIME,
                                       text=(answer.body() or b"").decode("utf-8", "surrogatepass"))])

    def _read_export(self, uri: str, owner: bytes) -> Any:
        """A chunk of an export's file (exports.py), at most the server's answer cap as sent, for the
        client that made it (`owner`, as _owner says); read here, on the protocol's thread: a file of
        the server's own, no statement."""
        from mcp import types
        from mcp.shared.exceptions import MCPError

        from cqlsh_ext.mcp_server import exports

        where = self.setup.calls.exports
        if where is None or not any(tool.files for tool in self.tools.values()):
            raise MCPError(types.INVALID_PARAMS, f"{uri[:200]}: this server writes no exports")
        try:
            bounds.check_arguments({"uri": uri})
            chunk_uri, mime, body, meta = where.chunk(uri, self.setup.calls.max_bytes, owner)
        except (exports.ExportRefused, bounds.TooLarge) as err:
            raise MCPError(types.INVALID_PARAMS, str(err)) from None
        if exports.is_text(mime):
            content: Any = types.TextResourceContents(uri=chunk_uri, mime_type=mime, text=body, _meta=meta)
        else:
            content = types.BlobResourceContents(uri=chunk_uri, mime_type=mime, blob=body, _meta=meta)
        return types.ReadResourceResult(contents=[content])

    # ------------------------------------------------------------------------------ prompts

    async def _list_prompts(self, ctx: Any, params: Any) -> Any:
        from mcp import types

        from cqlsh_ext.mcp_server import resources

        return types.ListPromptsResult(prompts=[
            types.Prompt(name=p.name, title=p.title, description=p.description,
                         arguments=[types.PromptArgument(name=n, description=d, required=True)
                                    for n, d in p.arguments])
            for p in resources.prompts_for(self.setup.guard.policy)])

    async def _get_prompt(self, ctx: Any, params: Any) -> Any:
        from mcp import types
        from mcp.shared.exceptions import MCPError

        from cqlsh_ext.mcp_server import resources

        permitted = resources.prompts_for(self.setup.guard.policy)
        prompt = next((p for p in permitted if p.name == params.name), None)
        if prompt is None:
            raise MCPError(types.INVALID_PARAMS, f"no prompt {params.name!r}")
        try:
            text = resources.prompt_text(prompt, dict(params.arguments or {}))
        except resources.BadUri as err:
            raise MCPError(types.INVALID_PARAMS, str(err)) from None
        return types.GetPromptResult(description=prompt.description, messages=[
            types.PromptMessage(role="user", content=types.TextContent(type="text", text=text))])


def _owner(ctx: Any) -> bytes:
    """The client that called, as a cursor is bound to it (cursor.Cursors' owner), hashed: over HTTP
    its MCP session (the Mcp-Session-Id the server gave it: random, known to that client alone);
    without one (the protocol's single-exchange revision), the OAuth token's issuer, subject and
    client (oauth.py); on stdio the one client there is (b""). A request of neither binds its
    cursors to nobody: any client the one token admits continues them."""
    import hashlib

    request = getattr(ctx, "request", None)
    headers = getattr(request, "headers", None)
    session = headers.get("mcp-session-id") if headers is not None else None
    if isinstance(session, str) and session:
        return hashlib.sha256(b"session\x00" + session.encode()).digest()[:16]
    scope = getattr(request, "scope", None)
    token = getattr(scope.get("user"), "access_token", None) if isinstance(scope, dict) else None
    claims = getattr(token, "claims", None) or {}
    if token is not None and claims.get("iss"):
        who = "\x00".join([str(claims["iss"]), str(getattr(token, "subject", None) or ""),
                           str(token.client_id)])
        return hashlib.sha256(b"oauth\x00" + who.encode()).digest()[:16]
    return b""


def _progress_token(ctx: Any) -> Any:
    meta = getattr(ctx, "meta", None)
    if not meta:
        return None
    getter = meta.get if hasattr(meta, "get") else lambda key: getattr(meta, key, None)
    return getter("progress_token") or getter("progressToken")


def _declaration(tool: Any) -> Any:
    from mcp import types

    # The destructive and idempotent hints mean something only beside readOnlyHint false (the
    # protocol's words): a tool that writes a file writes nothing of the database's, and is not
    # idempotent (each call writes one more); the others are read-only, and say no more.
    if tool.files:
        annotations = types.ToolAnnotations(read_only_hint=False, destructive_hint=False,
                                            idempotent_hint=False, open_world_hint=False)
    else:
        annotations = types.ToolAnnotations(read_only_hint=True, open_world_hint=False)
    # A tool that writes a file (export) may answer more than a client shows inline: it says how
    # much Claude Code is to take (else it keeps ~50,000 characters, in a file with a preview).
    declared = types.Tool(name=tool.name, title=tool.title, description=tool.description,
                          input_schema=tool.input_schema(), output_schema=tool.output_schema,
                          annotations=annotations)
    if tool.files:
        declared.meta = {sizing.RESULT_CHARS_KEY: sizing.EXPORT_RESULT_CHARS}
    return declared


def _result(answer: ToolAnswer,
            stand_in: Callable[[bytes, tuple[str, str]], tuple[str, dict[str, Any]] | None] | None = None,
            ) -> dict[str, Any]:
    """The CallToolResult as its wire dict, which the SDK takes as a handler's result: it validates
    and writes it as it would the model, without first dumping a model's copy of the structured
    content (a walk of every row's tree). `stand_in` (stdio's SpeltWriter): what the SDK is given in
    place of the text block and the structured content, which the writer writes from the answer's
    JSON as spelt, when it gives them; the SDK then walks no row and escapes no answer at all."""
    body = answer.body()
    given = stand_in(body, answer.frame()) if stand_in is not None and body is not None else None
    texts = answer.texts_of(body) if given is None else [given[0]]
    content: list[dict[str, Any]] = [{"type": "text", "text": text} for text in texts]
    content += [{"type": "resource_link", "uri": link["uri"], "name": link["name"],
                 "mimeType": link["mimeType"], "size": link["size"], "description": link["description"]}
                for link in answer.links]
    # (resultType: what the model's default adds; the 2026-07-28 revision requires it, and the
    # SDK's sieve leaves it out for the earlier ones)
    out: dict[str, Any] = {"content": content, "isError": answer.is_error, "resultType": "complete"}
    if body is not None:
        out["structuredContent"] = answer.json_data(body) if given is None else given[1]
    return out
