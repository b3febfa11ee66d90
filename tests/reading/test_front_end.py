"""docs/architecture.md's recipe for a new front end, followed by a toy one: take an answer, write a
renderer. A Markdown table of any SELECT, payload paths and GROUP BY included, made from the typed
answer alone (its columns, its batches, its notes) in a context of its own, with no shell and
nothing printed by anyone else: what an HTTP API or a notebook would do."""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest
from orders import MISSING, take

from cqlsh_ext.cql.lexer import Lexed
from cqlsh_ext.payload.budget import Budget
from cqlsh_ext.payload.path_values import table_cell
from cqlsh_ext.reading.context import ReadContext
from cqlsh_ext.reading.select import payload_plan, read_select
from cqlsh_ext.reading.typed import TypedAnswer
from cqlsh_ext.render.closing import closing_text

from .conftest import Orders

pytestmark = pytest.mark.server


def markdown(answer: TypedAnswer) -> list[str]:
    """The toy renderer: a header of the columns' names and types, a line per row, the notes last."""
    budget = Budget()
    lines = ["| " + " | ".join(f"{c.name} ({c.type_text})" for c in answer.columns) + " |",
             "|" + "---|" * len(answer.columns)]
    for batch in answer:
        for row in batch:
            cells = [str(table_cell(v, budget)) if c.cql_type is None else str(v)
                     for c, v in zip(answer.columns, row, strict=True)]
            lines.append("| " + " | ".join(cells) + " |")
    if answer.notes is not None and answer.notes.answer is not None:
        lines.append(f"_{closing_text(answer.notes) or 'read whole'}_")
    return lines


def read(ctx: ReadContext, text: str) -> TypedAnswer:
    planned = payload_plan(ctx, Lexed(text))
    assert planned is not None
    answer = read_select(ctx, *planned)
    assert answer is not None
    return answer


def test_a_markdown_front_end_renders_a_payload_select(ctx: ReadContext, orders: Orders) -> None:
    lines = markdown(read(ctx, f"SELECT ck, data.customer.name FROM {orders.name} WHERE pk = 'p2'"))
    assert lines[:2] == ["| ck (int) | data.customer.name (json) |", "|---|---|"]
    truth = sorted((row["ck"], take(doc, ("customer", "name")))
                   for row, doc in orders.rows if row["pk"] == "p2")
    assert lines[2:-1] == [f"| {ck} | {'None' if name is MISSING else name} |" for ck, name in truth]
    assert "undecodable" in lines[-1]  # its random values, said in the notes


def test_the_same_front_end_renders_groups(ctx: ReadContext, orders: Orders) -> None:
    lines = markdown(read(ctx, f"SELECT data.tags[0], count(*) FROM {orders.name} GROUP BY data.tags[0] "
                               "ALLOW FILTERING"))
    assert lines[0] == "| data.tags[0] (json) | count (bigint) |"
    counted: Counter[Any] = Counter()
    for _row, doc in orders.rows:
        if doc is None:
            counted["<undecodable>"] += 1
        else:
            first = take(doc, ("tags", 0))
            counted["None" if first is MISSING else first] += 1
    got = {cells[0]: int(cells[1]) for line in lines[2:-1] for cells in [line.strip("| ").split(" | ")]}
    assert got == dict(counted)
