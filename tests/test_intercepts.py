"""One door for each statement: a feature's statement that claims its own among CQL's, declared once
(Statement.claims; cqlsh_ext.features.commands.claims() reads them), is all the shell needs to take a
statement, rewrite it, or leave it to cqlsh, with its HELP topic; on the real server, through the
shell a user runs."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest
from shell_runner import in_process_shell

from cqlsh_ext.features import commands
from cqlsh_ext.upstream import seams


@pytest.fixture(scope="module")
def keyspace(cassandra) -> str:
    ks = cassandra.create_keyspace("intercepts")
    session = cassandra.session(ks)
    session.execute("CREATE TABLE notes (pk int PRIMARY KEY, body text)")
    session.execute("INSERT INTO notes (pk, body) VALUES (1, 'one')")
    session.shutdown()
    return ks


@pytest.fixture(scope="module")
def ext_shell(cassandra, keyspace) -> Iterator[Any]:
    with in_process_shell(cassandra, keyspace) as sh:
        yield sh


@dataclass
class _Swapped:
    """The rewrite a toy intercept answers (commands.Rewrite)."""

    tokens: Any
    text: str
    lines: list[str] = field(default_factory=list)

    def said(self) -> None:
        self.lines.append("said")


def test_a_declared_claim_takes_rewrites_or_leaves_statements(ext_shell, keyspace, cassandra,
                                                             monkeypatch) -> None:
    # A feature's statement that claims its own among CQL's (Statement.claims) is all the shell
    # needs to take a statement, rewrite it, or leave it to cqlsh as written.
    from cqlsh_ext import features
    from cqlsh_ext.features.feature import DECLARED_IN, FEATURES, READ, Feature, Reads, Statement, register

    taken: list[str] = []
    swaps: list[_Swapped] = []

    def toy(shell: Any, statement: Any) -> bool:
        if "/* toy */" not in statement.text:
            return False
        taken.append(statement.text)
        return True

    def rewrite(shell: Any, statement: Any) -> Any:
        if "'draft'" not in statement.text:
            return False
        text = statement.text.replace("'draft'", "'final'")
        swaps.append(_Swapped(seams.statement_tokens(text), text))
        return swaps[-1]

    monkeypatch.setattr(features, "_own_modules", [*features._own_modules, __name__])
    toys = [Feature(name, "Toy", "A toy.", (), Reads("nothing"), READ, {}, lambda ctx, call: None,
                    statement=Statement((word,), example, claims=claims))
            for name, word, example, claims in (("toy_select", "SELECT", "SELECT /* toy */ pk;", toy),
                                                ("toy_rewrite", "INSERT", "INSERT ...", rewrite))]
    for feature in toys:
        register(feature)  # here, so that this module declares it: one of cqlsh-ext's own
    try:
        ext_shell.onecmd("SELECT /* toy */ pk FROM notes;")
        assert taken == ["SELECT /* toy */ pk FROM notes;"]
        # Another SELECT is cqlsh's (the toy said False), as is a statement no claim declares.
        assert ext_shell.onecmd("SELECT pk FROM notes;") and len(taken) == 1
        ext_shell.onecmd("INSERT INTO notes (pk, body) VALUES (2, 'draft');")
        session = cassandra.session(keyspace)
        try:
            assert session.execute("SELECT body FROM notes WHERE pk = 2").one().body == "final"
            assert swaps and swaps[0].lines == ["said"]  # told once cqlsh ran it
            ext_shell.onecmd("INSERT INTO notes (pk, body) VALUES (3, 'kept');")
            assert session.execute("SELECT body FROM notes WHERE pk = 3").one().body == "kept"
            assert len(swaps) == 1
        finally:
            session.shutdown()
    finally:
        for feature in toys:
            FEATURES.pop(feature.name, None)
            DECLARED_IN.pop(feature.name, None)


def test_the_shells_statements_are_declared_with_their_help_topics(ext_shell) -> None:
    declared = {claim.name: claim for claim in commands.claims()}
    assert set(declared) >= {"query", "copy_paths",
                             "export", "encode"}
    # A COPY (SELECT ...) is the export's, then a load's COPY ... FROM (a file of documents), before
    # a COPY's column paths are refused.
    assert [claim.name for claim in commands.claims_for("COPY")] == [
        "export", "write", "copy_paths"]
    assert not declared["encode"].reads_only
    # Each declared topic is a HELP topic of the shell, its text (read when HELP asks) what HELP prints.
    topics = commands.help_topics()
    assert {name for name, _ in topics} >= {"queries", "export", "payload", "encode", "trial"}
    for name, text in topics:
        if " " in name:  # HELP DESCRIBE PAYLOAD: asked for in words, not a do_<topic> method
            assert commands.phrase_help(name.split()) == str(text)
            assert not hasattr(type(ext_shell), f"do_{name}")
        else:
            assert getattr(ext_shell, f"do_{name}").__doc__ == str(text)
    assert "do_payload" in dir(ext_shell) and "payload" in ext_shell.get_help_topics()


def test_describe_payload_is_declared_once_its_statement_with_its_help() -> None:
    # Its HELP topics and HELP DESCRIBE's line were a second declaration (a statement intercept with
    # no handler) beside its feature's Statement; they are the Statement's now (issue 110).
    from cqlsh_ext.features import declared

    statement = declared(plugins=False)["describe_payload"].statement
    assert statement is not None
    assert [topic for topic, _ in statement.topics] == ["payload", "describe payload", "desc payload"]
    assert [word for word, _ in statement.see_also] == ["describe", "desc"]
    assert not [claim for claim in commands.claims() if {"describe", "desc"} & claim.words]


def test_a_features_statement_claims_its_own_among_cqls_in_the_intercepts_order(ext_shell,
                                                                                monkeypatch) -> None:
    # A feature's statement that starts with a word of CQL's declares its claim, its grammar and its
    # order in its Statement (issue 110): the shell's door tries it with the intercepts, in the one
    # list they are read from (Tab, HELP, the read-only rule read the same), and a statement it says
    # no to goes on to cqlsh unchanged.
    from cqlsh_ext import features
    from cqlsh_ext.agent.cli_spec import statements
    from cqlsh_ext.features.feature import DECLARED_IN, FEATURES, READ, Feature, Reads, Statement, register

    claimed: list[str] = []

    def claims(shell: Any, statement: Any) -> bool:
        if "/* claimed */" not in statement.text:
            return False
        claimed.append(statement.text)
        return True

    monkeypatch.setattr(features, "_own_modules", [*features._own_modules, __name__])
    toy = Feature("toy_claimed_select", "Toy", "A toy.", (), Reads("nothing"), READ, {"type": "object"},
                  lambda ctx, call: None,
                  statement=Statement(("SELECT",), "SELECT /* claimed */ pk FROM notes;", claims=claims,
                                      rule="<toyClaimed>", grammar="<toyClaimed> ::= \"SELECT\" ;",
                                      after=("query",)))
    register(toy)  # here, so that this module declares it: one of cqlsh-ext's own (features.own)
    try:
        select = [claim.name for claim in commands.claims_for("select")]
        assert select.index("query") < select.index("toy_claimed_select")
        claim = next(claim for claim in commands.claims() if claim.name == "toy_claimed_select")
        assert (claim.words, claim.reads_only, claim.rule) == (frozenset({"select"}), True, "<toyClaimed>")
        # --spec lists it once, as its feature's statement.
        assert [s.get("feature") or s.get("name") for s in statements()].count("toy_claimed_select") == 1
        ext_shell.onecmd("SELECT /* claimed */ pk FROM notes;")
        assert claimed == ["SELECT /* claimed */ pk FROM notes;"]
        # Said no to: cqlsh's, as written.
        assert ext_shell.onecmd("SELECT pk FROM notes;") and len(claimed) == 1
    finally:
        FEATURES.pop(toy.name, None)
        DECLARED_IN.pop(toy.name, None)
    assert "toy_claimed_select" not in {claim.name for claim in commands.claims()}


#: The statements of CQL's words the shell takes as a declared feature's (issue 110: each was a
#: statement intercept): its feature, and its form as --spec and the features' reference say it.
CLAIMED = {
    "encode": "INSERT | UPDATE | BEGIN BATCH ... encode('chain', 'text') ...",
    "export": "COPY (SELECT ...) TO 'file' [WITH option = value [AND ...]]",
    "query": "SELECT path, ... FROM [keyspace.]table [WHERE conditions] [GROUP BY path] [ALLOW FILTERING]",
    "copy_paths": "COPY [keyspace.]table (column, path, ...) TO | FROM 'file': refused",
    "edit": "UPDATE [keyspace.]table SET path = value [, ...] WHERE ... [CONFIRM] | DELETE path [, ...] FROM "
            "[keyspace.]table WHERE ... [CONFIRM]",
    "rewrite": "COMPRESSION REWRITE [keyspace.]table.column AS 'SPEC' [WHERE ...] [ALLOW FILTERING] [PACE n] "
               "[ALL] [CONFIRM]  |  COMPRESSION REWRITE RESUME 'journal'|LAST [CONFIRM]",
    "write": "COPY [keyspace.]table [(column, ...)] FROM 'file' [WITH ENCODE column = 'chain' [AND ...] "
             "[AND TTL = seconds]] [PACE n] [CONFIRM]  |  COPY RESUME 'journal'|LAST [CONFIRM]",
}


def test_a_claimed_statement_is_listed_as_its_features_statement() -> None:
    # --spec lists each as the other declared statements are (its feature, its form, its example),
    # not as an intercept; what it writes and whether --read-only runs it as before.
    from cqlsh_ext.agent.cli_spec import statements

    listed = statements()
    features = {s["feature"]: s for s in listed if s["kind"] == "feature"}
    assert {name: features[name]["form"] for name in CLAIMED if name in features} == CLAIMED
    assert (features["encode"]["writes"], features["encode"]["read_only"]) == (True, False)
    assert (features["export"]["writes"], features["export"]["read_only"]) == (False, False)
    assert (features["query"]["writes"], features["query"]["read_only"]) == (False, True)
    assert (features["copy_paths"]["writes"], features["copy_paths"]["read_only"]) == (False, False)
    assert (features["write"]["writes"], features["write"]["read_only"]) == (True, False)
    assert (features["edit"]["writes"], features["edit"]["read_only"]) == (True, False)
    assert (features["rewrite"]["writes"], features["rewrite"]["read_only"]) == (True, False)
    assert not [s for s in listed if s["kind"] == "intercept"]


def test_undo_is_its_features_statement_that_cqlshs_grammar_parses(ext_shell, capsys) -> None:
    # UNDO's handler (taking cqlsh's parse), grammar, usage and writes are its feature's Statement's
    # (Statement.parsed), no Command declared beside it: the shell's do_undo, its Tab grammar and a
    # malformed UNDO's line read that one declaration.
    from cqlsh_ext.features import declared

    statement = declared(plugins=False)["undo"].statement
    assert statement is not None and statement.parsed is not None and not statement.read_from_declaration
    undo = commands.command("UNDO")
    assert undo is not None
    assert (undo.handler, undo.usage, undo.rule, undo.grammar, undo.reads_only) == \
        (statement.parsed, statement.malformed, "<undoCommand>", statement.grammar, False)
    assert ext_shell.do_undo.__doc__ == str(statement.help)
    ext_shell.onecmd("UNDO NOW;")
    said = capsys.readouterr().err
    assert said.endswith("Improper UNDO command.\nUNDO 'journal' [CUT] [UNSEALED] [CONFIRM [UNSEALED]]: "
                         "the journal's path, the id an edit's Undo: line names, or LAST (HELP EDIT)\n")


def test_the_sessions_commands_are_shell_only_features_cqlshs_grammar_parses(ext_shell, capsys) -> None:
    # DECOMPRESS, DECODE and OUTPUT change only the session: each the Statement of a feature of the
    # shell's alone (its handler taking cqlsh's parse, its grammar, its HELP), nothing stored read or
    # written; the real shell runs each from that declaration.
    from cqlsh_ext.features import declared

    features = declared(plugins=False)
    for word in ("DECOMPRESS", "DECODE", "OUTPUT"):
        feature = features[word.lower()]
        statement = feature.statement
        assert feature.shell_only and feature.writes is None and statement is not None, word
        assert statement.words == (word,) and statement.parsed is not None, word
        declared_command = commands.command(word)
        assert declared_command is not None and declared_command.handler is statement.parsed, word
        assert getattr(ext_shell, f"do_{word.lower()}").__doc__ == str(statement.help), word
    ext_shell.onecmd("DECOMPRESS AUTO NOW;")
    told = capsys.readouterr().err
    assert told.endswith("Improper DECOMPRESS command.\nDECOMPRESS [AUTO | NONE | <codec>]\n")
    ext_shell.onecmd("OUTPUT;")
    assert capsys.readouterr().out.startswith("Output format is ")


def test_a_word_several_statements_start_with_is_a_command_written_from_them(monkeypatch) -> None:
    # COMPRESSION was a Command declared beside its statements; a word several of the features'
    # statements start with is now a command of its own, its HELP and usage written from them, each
    # statement's HELP topic its own (a toy's two statements make TOYS one).
    from cqlsh_ext import features
    from cqlsh_ext.features.feature import DECLARED_IN, FEATURES, READ, Feature, Reads, Statement, register
    from cqlsh_ext.shell.help import usage_of

    trial = features.declared(plugins=False)["compression_trial"].statement
    assert trial is not None and [topic for topic, _ in trial.topics] == ["compression trial", "trial"]
    assert commands.command("describe") is None  # one statement of ours starts with DESCRIBE
    assert commands.commands() is commands.commands()  # made once while the features stay the same
    monkeypatch.setattr(features, "_own_modules", [*features._own_modules, __name__])
    toys = [Feature(f"toys_{second.lower()}", "Toy", "A toy.", (), Reads("nothing"), READ, {},
                    lambda ctx, call: None,
                    statement=Statement(("TOYS", second), f"TOYS {second};", json=False))
            for second in ("ONE", "TWO")]
    for feature in toys:
        register(feature)
    try:
        toys_command = commands.command("TOYS")
        assert toys_command is not None and toys_command.umbrella and toys_command.handler is None
        told = usage_of(toys_command)
        assert told is not None and told(["TOYS", "THREE"]) == \
            "Expected:\n  TOYS ONE\n  TOYS TWO\nFor example:\n  TOYS ONE;\n  TOYS TWO;\nMore: HELP TOYS"
    finally:
        for feature in toys:
            FEATURES.pop(feature.name, None)
            DECLARED_IN.pop(feature.name, None)
    assert commands.command("TOYS") is None
