"""The calls, served one at a time on the shell's thread: the shell's objects (its pipeline, its
current statement, cqlsh's Shell itself) are not made for two statements at once, so calls that
arrive together wait their turn in arrival order, each within its own time limit.

A call stops as a command stops at Ctrl-C (common.interrupt.Remote: the scan it runs stops at its
next page and reports what it read; the reading's context sees the call's stop too) when the client
cancels it or its time limit passes, and a plugin's call or an external command decoding one of its
values is cut then, none starting after (payload.formats._outside.stopping_with): the next call
waits for no command; one still waiting is dropped when its turn comes. The protocol's side
(server.py) is told when each call ends (`ToolCall.on_done`, from the shell's thread).
"""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from cqlsh_ext.common.interrupt import Remote
from cqlsh_ext.mcp_server.answers import ToolAnswer, failed
from cqlsh_ext.mcp_server.connection import Served
from cqlsh_ext.mcp_server.cursor import Cursors
from cqlsh_ext.mcp_server.log import log
from cqlsh_ext.mcp_server.tools import DEFAULT_BYTES, Tool, Work
from cqlsh_ext.payload.formats._outside import stopping_with

if TYPE_CHECKING:
    from cqlsh_ext.mcp_server.exports import ExportDir

#: A call's time limit by default (`cqlsh-ext mcp --time-limit`).
DEFAULT_SECONDS = 60.0


@dataclass(eq=False)
class ToolCall:
    tool: Tool
    arguments: dict[str, Any]
    #: time.monotonic() by which it must have ended.
    deadline: float
    on_done: Callable[[], None]
    number: int
    #: Whom its reading's progress events are told (the client's Reporter), if anyone.
    on_progress: Callable[[dict[str, Any]], None] | None = None
    #: The client that called (server.py: its MCP session's key): the cursors it is given are its own.
    owner: bytes = b""
    stop: threading.Event = field(default_factory=threading.Event)
    remote: Remote = field(default_factory=Remote)
    #: Why it was stopped (cancelled, the time limit), once it was.
    why: str | None = None
    answer: ToolAnswer | None = None
    done: threading.Event = field(default_factory=threading.Event)


class Calls:
    """The queue between the protocol's thread (submit, halt) and the shell's (serve)."""

    def __init__(self, seconds: float = DEFAULT_SECONDS, max_bytes: int = DEFAULT_BYTES,
                 exports: ExportDir | None = None) -> None:
        self.seconds = seconds
        self.max_bytes = max_bytes
        #: The export tool's directory (None: no export tool).
        self.exports = exports
        #: The cursors this server issues (`query`'s cursor): its secret and paging states.
        self.cursors = Cursors()
        self._waiting: queue.Queue[ToolCall | None] = queue.Queue()
        self._lock = threading.Lock()
        self._running: ToolCall | None = None
        self._closed = False
        self._numbers = iter(range(1, 1 << 62))

    def submit(self, tool: Tool, arguments: dict[str, Any], on_done: Callable[[], None],
               on_progress: Callable[[dict[str, Any]], None] | None = None, owner: bytes = b"") -> ToolCall:
        call = ToolCall(tool, arguments, time.monotonic() + self.seconds, on_done, next(self._numbers),
                        on_progress, owner)
        self._waiting.put(call)
        return call

    def halt(self, call: ToolCall, why: str) -> None:
        """Stop `call` (from any thread): running, it stops as at Ctrl-C; waiting, it will not run."""
        with self._lock:
            if call.done.is_set() or call.stop.is_set():
                return
            call.why = why
            call.stop.set()
            running = self._running is call
        if running:
            call.remote.press()

    def close(self) -> None:
        """No more calls (the client went away): the running one stops, serve() returns."""
        with self._lock:
            running = self._running
            self._closed = True
        if running is not None:
            self.halt(running, "the client went away")
        self._waiting.put(None)

    def serve(self, served: Served) -> None:
        """The shell's loop: run each call as it comes, until close(), on what the connection
        serves (`served`: made once by the headless shell)."""
        while True:
            call = self._waiting.get()
            if call is None:
                return
            self._run(served, call)

    def _run(self, served: Served, call: ToolCall) -> None:
        if self._closed:
            self.halt(call, "the client went away")
        elif time.monotonic() >= call.deadline:
            self.halt(call, f"the time limit ({self.seconds:g} s) passed while it waited for earlier calls")
        if call.stop.is_set():
            return self._finish(call, failed(f"not run: {call.why}"))
        with self._lock:
            self._running = call
        limit = f"the time limit ({self.seconds:g} s)"
        timer = threading.Timer(max(0.0, call.deadline - time.monotonic()), self.halt, (call, limit))
        timer.daemon = True
        timer.start()
        started = time.monotonic()
        work = Work(served, call.stop, self.max_bytes, cursors=self.cursors, on_progress=call.on_progress,
                    owner=call.owner, exports=self.exports)
        try:
            # A plugin's call or a command running at the stop is cut, not only at its own timeout.
            with call.remote, stopping_with(call.stop, call.deadline, lambda: call.why or limit):
                answer = call.tool.call(work, call.arguments)
        except Exception as err:  # a fault of ours: the call fails in one line, the server lives on
            import traceback

            from cqlsh_ext.keyspaces.errors import one_line

            log(f"call {call.number} ({call.tool.name}) failed:\n{traceback.format_exc().rstrip()}")
            answer = failed(f"{call.tool.name} failed: {one_line(f'{type(err).__name__}: {err}')}")
        finally:
            timer.cancel()
            with self._lock:
                self._running = None
        if call.why is not None:
            answer = answer.stopped(call.why, work.seen)
            log(f"call {call.number} ({call.tool.name}) stopped after {time.monotonic() - started:.1f} s: "
                f"{call.why}; {'; '.join(answer.notes + _notes_of(answer)) or 'nothing said'}")
        self._finish(call, answer.fit())

    def _finish(self, call: ToolCall, answer: ToolAnswer) -> None:
        call.answer = answer
        call.done.set()
        call.on_done()


def _notes_of(answer: ToolAnswer) -> list[str]:
    notes = answer.data.get("notes") if answer.data is not None else None
    return [str(note) for note in notes] if isinstance(notes, list) else []
