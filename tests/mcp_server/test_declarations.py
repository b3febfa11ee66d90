"""Each tool declares with itself what it reads (feature.Reads), and the guard's scope comes from that
declaration alone: a tool that declares nothing is refused before anything reads, a toy tool
declared in one place is scoped (its denied table refused by the policy) without a word of the
guard's changing, and the guard names no tool."""

from __future__ import annotations

import inspect
import threading
from types import SimpleNamespace
from typing import Any

import pytest

from cqlsh_ext.features.feature import READS, Reads
from cqlsh_ext.mcp_server import guard as guard_module
from cqlsh_ext.mcp_server.answers import ToolAnswer
from cqlsh_ext.mcp_server.guard import Guard
from cqlsh_ext.mcp_server.policy import Pattern, Policy
from cqlsh_ext.mcp_server.tools import TOOLS, Tool, Work


def _work() -> Work:
    # No connection: what is refused here is refused before anything reads, and the toy that is
    # admitted reads nothing (the call's decode settings are the only thing of the session touched).
    served = SimpleNamespace(context=SimpleNamespace(display=SimpleNamespace(columns={}), cluster=None))
    return Work(served=served, stop=threading.Event())  # type: ignore[arg-type]


def _toy(reads: Reads | None, arguments: dict[str, dict[str, Any]] | None = None) -> tuple[Tool, list[str]]:
    """A tool declared in one place, and the calls that reached its answer."""
    reached: list[str] = []

    def answer(work: Work, given: dict[str, Any]) -> ToolAnswer:
        reached.append("answered")
        return ToolAnswer(data={"answered": True})

    return Tool("toy_report", "Toy", "A toy.", arguments or {}, (), answer, reads=reads), reached


def test_a_tool_that_declares_nothing_it_reads_is_refused() -> None:
    tool, reached = _toy(None)
    answer = Guard(Policy()).wrap(tool).call(_work(), {})
    assert answer.is_error
    assert answer.error is not None and answer.error.startswith(
        "refused: the tool toy_report declares nothing of what it reads")
    assert reached == []


def test_a_toy_tool_is_scoped_by_its_declaration_alone() -> None:
    guard = Guard(Policy(denied=(Pattern.parse("secret_ks.vault", 2, 2, "deny"),)))
    table = {"table": {"type": "string"}}
    tool, reached = _toy(Reads("table", "table"), table)
    refused = guard.wrap(tool).call(_work(), {"table": "secret_ks.vault"})
    assert refused.is_error and refused.error is not None and "secret_ks.vault" in refused.error
    assert reached == []
    nothing, reached = _toy(Reads("nothing"))
    answered = guard.wrap(nothing).call(_work(), {})
    assert answered.data == {"answered": True} and reached == ["answered"]


def test_a_declaration_names_an_argument_where_it_reads_one() -> None:
    with pytest.raises(ValueError, match="named by an argument"):
        Reads("table")
    with pytest.raises(ValueError, match="names no argument"):
        Reads("nothing", "table")
    with pytest.raises(ValueError, match="not 'rows'"):
        Reads("rows", "statement")


def test_every_served_tool_declares_what_it_reads_and_the_guard_names_none() -> None:
    for tool in TOOLS.values():
        assert tool.reads is not None, tool.name
        assert tool.reads.what in READS
        if tool.reads.argument is not None:
            assert tool.reads.argument in tool.arguments, tool.name
            assert tool.reads.argument in tool.required, tool.name
        assert tool.scope is not None, tool.name  # its OAuth scope, declared with it too
    source = inspect.getsource(guard_module)
    named = [name for name in TOOLS if f'"{name}"' in source or f"'{name}'" in source]
    assert named == []
