"""docs/agents.md and docs/mcp.md print the read-only rule as the code holds it: the table between
the markers is the one features.read_rule writes from RULE, line for line; and each refused line of
it is what the rule says of a statement of it, at the shell's door and at MCP's."""

from __future__ import annotations

import pytest
from conftest import REPO_ROOT

from cqlsh_ext.cql.lexer import Lexed
from cqlsh_ext.features import read_rule


@pytest.mark.parametrize("page", ["agents.md", "mcp.md"])
def test_the_docs_print_the_rule_the_code_holds(page: str) -> None:
    text = (REPO_ROOT / "docs" / page).read_text()
    assert text.count(read_rule.TABLE_START) == 1 and text.count(read_rule.TABLE_END) == 1, page
    shown = text.split(read_rule.TABLE_START + "\n", 1)[1].split("\n" + read_rule.TABLE_END, 1)[0]
    assert shown == read_rule.table_text(), f"{page}: write the rule's table from read_rule.table_text()"


#: A statement of each refused line of the rule, and the words of its refusal.
REFUSED = {"CAPTURE": ("CAPTURE '/tmp/x'", "CAPTURE"),
           "COPY": ("COPY ks.t TO '/tmp/x'", "COPY"),
           "COMPRESSION ADVISE ... SAVE DICTIONARY": ("COMPRESSION ADVISE ks.t SAVE DICTIONARY '/tmp/d'",
                                                      "COMPRESSION ADVISE ... SAVE DICTIONARY"),
           "LOGIN": ("LOGIN someone", "LOGIN"),
           "SHOW SESSION": ("SHOW SESSION 6e1f5f30-0d8c-11ee-9a8f-5f2c3a1c1b2a", "SHOW SESSION"),
           "TRACING ON": ("tracing /* c */ On", "TRACING ON"),
           "a write feature's": ("COMPRESSION REWRITE ks.t.data TO zstd", "COMPRESSION REWRITE"),
           "INSERT": ("INSERT INTO ks.t (k) VALUES (1)", "INSERT"),
           "LIST": ("LIST ROLES", "LIST ROLES"),
           "any other statement": ("FROBNICATE ks.t", "FROBNICATE")}


@pytest.mark.parametrize("verdict", [v for v in read_rule.RULE if not v.runs], ids=lambda v: v.statement[:30])
def test_each_refused_line_is_what_both_doors_say(verdict: read_rule.Verdict) -> None:
    key = next(k for k in REFUSED if verdict.statement.startswith(k))
    statement, what = REFUSED[key]
    for reader, session in (("cqlsh-ext --read-only", True), ("cqlsh-ext mcp", False)):
        said = read_rule.statement_refusal(reader, Lexed(statement), None, session)
        assert said == read_rule.refusal_words(reader, what, verdict.why), (statement, said)
