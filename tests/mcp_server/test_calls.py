"""The calls' queue of `cqlsh-ext mcp` alone (no server, no protocol): calls made at once run one at
a time in arrival order on the serving thread; a running call stops as at Ctrl-C when halted (its
scan's CtrlC pressed) or when its time limit passes; a waiting call halted is not run; closing
ends the loop and what still waits is not run."""

from __future__ import annotations

import threading
from typing import Any

from cqlsh_ext.common.interrupt import CtrlC
from cqlsh_ext.mcp_server.answers import ToolAnswer
from cqlsh_ext.mcp_server.calls import Calls
from cqlsh_ext.mcp_server.tools import Tool, Work


def _tool(name: str, answer: Any) -> Tool:
    return Tool(name, name, name, {}, (), answer)


def _serve(calls: Calls) -> threading.Thread:
    thread = threading.Thread(target=calls.serve, args=(None,), daemon=True)
    thread.start()
    return thread


def test_calls_run_one_at_a_time_in_order_and_a_halted_one_stops_as_at_ctrl_c() -> None:
    calls = Calls(seconds=600)
    order: list[str] = []
    inside, running = threading.Event(), threading.Lock()

    def scan(work: Work, arguments: dict[str, Any]) -> ToolAnswer:
        assert running.acquire(blocking=False), "two calls at once"
        try:
            order.append("scan")
            with CtrlC() as ctrl_c:  # a scan's Ctrl-C, as scanning/scan.py enters it
                inside.set()
                ctrl_c.stop.wait(60)
                return ToolAnswer(data={"pressed": ctrl_c.pressed})
        finally:
            running.release()

    def quick(work: Work, arguments: dict[str, Any]) -> ToolAnswer:
        assert running.acquire(blocking=False), "two calls at once"
        order.append(arguments.get("n", "quick"))
        running.release()
        return ToolAnswer(data={"n": arguments.get("n")})

    thread = _serve(calls)
    first = calls.submit(_tool("scan", scan), {}, lambda: None)
    waiting = [calls.submit(_tool("quick", quick), {}, lambda: None) for _ in range(3)]
    dropped = calls.submit(_tool("quick", quick), {}, lambda: None)
    calls.halt(dropped, "cancelled by the client")  # still waiting: it will not run
    assert inside.wait(30)
    calls.halt(first, "cancelled by the client")
    for call in [first, *waiting, dropped]:
        assert call.done.wait(30)
    assert first.answer is not None and first.answer.data is not None
    assert first.answer.data["pressed"] is True
    assert first.answer.data["stopped"]["why"] == "cancelled by the client"
    assert dropped.answer is not None and dropped.answer.error == "not run: cancelled by the client"
    assert order == ["scan", "quick", "quick", "quick"]
    calls.close()
    thread.join(30)
    assert not thread.is_alive()


def test_the_time_limit_stops_a_running_call_and_what_waits_after_close_does_not_run() -> None:
    calls = Calls(seconds=0.5)

    def scan(work: Work, arguments: dict[str, Any]) -> ToolAnswer:
        with CtrlC() as ctrl_c:
            ctrl_c.stop.wait(60)  # only the time limit ends it
            return ToolAnswer(data={"pressed": ctrl_c.pressed})

    thread = _serve(calls)
    call = calls.submit(_tool("scan", scan), {}, lambda: None)
    assert call.done.wait(60)
    assert call.answer is not None and call.answer.data is not None
    assert call.answer.data["stopped"]["why"] == "the time limit (0.5 s)"
    calls.seconds = 600
    blocker = threading.Event()
    held = calls.submit(_tool("held", lambda work, arguments: ToolAnswer(data={"ok": blocker.wait(60)})), {},
                        lambda: None)
    after = calls.submit(_tool("quick", lambda work, arguments: ToolAnswer(data={})), {}, lambda: None)
    calls.close()  # the client went away: the running call is halted, the waiting one not run
    blocker.set()
    assert held.done.wait(30) and after.done.wait(30)
    assert after.answer is not None and after.answer.error == "not run: the client went away"
    thread.join(30)
    assert not thread.is_alive()
