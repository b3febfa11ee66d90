"""The Model Context Protocol's side: the official `mcp` SDK's low-level Server over stdio, in a
thread of its own (the shell keeps the main thread: its Ctrl-C handling, its worker processes).

tools/list answers the declarations of tools.py; tools/call queues the call for the shell's
thread (calls.py) and waits for it, at most until its time limit and a grace after (a call that
does not end then is answered as stopped; the shell's thread finishes it in the background and
the next calls wait for that). A call the client cancels is halted there: its scan stops, and the
SDK sends no answer, as the protocol says. Each answer is text content that parses as JSON, and
the same JSON as structured content; an error answer is one line.

The protocol reads and writes file descriptors of its own (cli.py took them before anything else
could print): whatever the shell, cqlsh, the driver or a library prints cannot reach the wire.
"""

from __future__ import annotations

import os
import threading
import time
from typing import TYPE_CHECKING, Any

from cqlsh_ext import __version__
from cqlsh_ext.mcp_server.log import log
from cqlsh_ext.mcp_server.tools import PAYLOADS, TOOLS

if TYPE_CHECKING:
    from cqlsh_ext.mcp_server.answers import ToolAnswer
    from cqlsh_ext.mcp_server.calls import Calls

#: How long past its time limit a call's answer is waited for: the scan stops at its next page.
GRACE_SECONDS = 10.0
INSTRUCTIONS = (
    "cqlsh-ext reads an Apache Cassandra or Amazon Keyspaces database, read-only, and decodes what "
    f"is inside blob columns ({PAYLOADS}). Start with list_keyspaces, "
    "list_tables and describe_table; describe_payload shows the paths inside a blob column, which "
    "query can select, filter, group and count (SELECT data.status, count(*) FROM ks.t GROUP BY "
    "data.status ALLOW FILTERING). compression_stats, compression_settings and inspect_value explain "
    "sizes and encodings. Anything but a read is refused."
)


def start(calls: Calls, read_fd: int, write_fd: int) -> threading.Thread:
    """Serve the protocol on the two file descriptors in a daemon thread; calls.close() when the
    client closes its end."""

    def serve() -> None:
        import anyio

        try:
            anyio.run(_serve, calls, read_fd, write_fd)
        except BaseException as err:  # noqa: BLE001 - logged; the shell's loop is told to end
            log(f"the protocol ended: {type(err).__name__}: {err}")
        finally:
            calls.close()

    thread = threading.Thread(target=serve, name="mcp-protocol", daemon=True)
    thread.start()
    return thread


async def _serve(calls: Calls, read_fd: int, write_fd: int) -> None:
    import io

    import anyio
    from mcp.server.lowlevel import Server
    from mcp.server.stdio import stdio_server

    async def list_tools(ctx: Any, params: Any) -> Any:
        from mcp import types

        return types.ListToolsResult(tools=[_declaration(tool) for tool in TOOLS.values()])

    async def call_tool(ctx: Any, params: Any) -> Any:
        return await _call(calls, params.name, params.arguments or {})

    server: Server[Any] = Server("cqlsh-ext", version=__version__, instructions=INSTRUCTIONS,
                                 on_list_tools=list_tools, on_call_tool=call_tool)
    stdin = anyio.wrap_file(io.TextIOWrapper(os.fdopen(read_fd, "rb"), encoding="utf-8", errors="replace"))
    stdout = anyio.wrap_file(io.TextIOWrapper(os.fdopen(write_fd, "wb"), encoding="utf-8"))
    async with stdio_server(stdin, stdout) as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


def _declaration(tool: Any) -> Any:
    from mcp import types

    return types.Tool(name=tool.name, title=tool.title, description=tool.description,
                      input_schema=tool.input_schema(), output_schema={"type": "object"},
                      annotations=types.ToolAnnotations(title=tool.title, read_only_hint=True,
                                                        destructive_hint=False, idempotent_hint=True,
                                                        open_world_hint=False))


async def _call(calls: Calls, name: str, arguments: dict[str, Any]) -> Any:
    import asyncio

    import anyio

    from cqlsh_ext.mcp_server.answers import failed

    tool = TOOLS.get(name)
    if tool is None:
        return _result(failed(f"no tool {name!r} (tools: {', '.join(TOOLS)})"))
    loop = asyncio.get_running_loop()
    ended = anyio.Event()

    def on_done() -> None:  # from the shell's thread
        try:
            loop.call_soon_threadsafe(ended.set)
        except RuntimeError:  # the protocol is gone
            pass

    call = calls.submit(tool, arguments, on_done)
    try:
        with anyio.move_on_after(max(0.0, call.deadline - time.monotonic()) + GRACE_SECONDS):
            await ended.wait()
    except anyio.get_cancelled_exc_class():
        calls.halt(call, "cancelled by the client")
        raise
    if call.answer is None:
        calls.halt(call, f"the time limit ({calls.seconds:g} s)")
        return _result(failed(f"stopped at the time limit ({calls.seconds:g} s); the statement is still "
                              "ending, and the next calls wait for it"))
    return _result(call.answer)


def _result(answer: ToolAnswer) -> Any:
    from mcp import types

    content: list[types.ContentBlock] = [types.TextContent(type="text", text=text) for text in answer.texts()]
    return types.CallToolResult(content=content, structured_content=answer.data, is_error=answer.is_error)
