"""The shell's bounds on one statement at its door (ExtShell.handle_statement, on cqlsh's tokens),
before cqlsh's grammar reads it (features.statement_bounds measures its text before that, and says
why: cqlsh's grammar's time and memory grow with the square of the tokens):

- its brackets: at most cql.grammar_bounds.DEPTH inside one another, else refused before anything
  reads or sends it (`too_deep`); each statement of a text that holds several is read in its own
  text (`own_text`), not in all of it;
- its tokens: past cql.grammar_bounds.PARSED_TOKENS of cqlsh's, cqlsh's grammar never reads it
  (`admit`): a SELECT the claims left, or any statement cqlsh sends as written without a `do_`
  method (INSERT, UPDATE, BATCH, ...), goes to the server whole (`whole_statement`; a SELECT of
  system_traces untraced: `reads_traces`), and the table whose metadata formats its result is found
  by the shell's lexer (cql/lexer.py) where cqlsh would parse the text again (`table_of_whole`): the
  same table, so the same output, byte for byte. A shell command (COPY, DESCRIBE, SOURCE, ours)
  needs cqlsh's grammar: refused in one line.

Each function answers what becomes of the statement, and the line to say; the shell says it and
sends or refuses."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from cqlsh_ext.cql import grammar_bounds as bounds
from cqlsh_ext.features.statement_bounds import ADVICE, LEXED_BEFORE_ITS_END, REFUSED

if TYPE_CHECKING:
    from cqlsh_ext.cql.lexer import Lexed

__all__ = ["PARSE", "REFUSED", "WHOLE", "admit", "own_text", "reads_traces", "table_of_whole", "too_deep",
           "whole_statement"]

#: What handle_statement does with one statement (`admit`): cqlsh's grammar may read it; it is sent
#: as written; REFUSED.
PARSE, WHOLE = "parse", "whole"


def own_text(tokens: Any, srcstr: str) -> tuple[Any, str]:
    """One statement's cqlsh tokens and the text they index, from those of a text that holds
    several (cqlsh's onecmd hands every statement of a text all of it, which its handle_statement
    and ours read again: a line of 30,000 statements read 30,000 times): the statement's own
    text, its tokens' places moved to it. A text not much longer than the statement is kept."""
    start, end = tokens[0][2][0], tokens[-1][2][1]
    if len(srcstr) - (end - start) <= LEXED_BEFORE_ITS_END:
        return tokens, srcstr
    return [(tok[0], tok[1], (tok[2][0] - start, tok[2][1] - start), *tok[3:]) for tok in tokens], \
        srcstr[start:end]


def too_deep(tokens: Any) -> str | None:
    """The line refusing one statement (cqlsh's tokens) that nests brackets past
    cql.grammar_bounds.DEPTH, before anything reads it; None when it does not."""
    at = bounds.too_deep(bounds.cqlsh_brackets(tokens))
    if at is None:
        return None
    return (f"Statement refused: brackets nested more than {bounds.DEPTH} deep (at char {at:,}): "
            "the shell sends no statement nested so deep (Cassandra's parser fails on it)")


def admit(tokens: Any, has_command: Callable[[str], bool]) -> tuple[str, str | None]:
    """What becomes of one statement (cqlsh's tokens) that no claim took: (PARSE (cqlsh's
    grammar may read it), WHOLE (sent as written: ExtShell.send_whole) or REFUSED, the line
    refusing it or None). `has_command(word)`: the shell has a `do_<word>` method (a command its
    grammar must read)."""
    count, commas = bounds.cqlsh_count(tokens)
    if count <= bounds.PARSED_TOKENS:
        return PARSE, None
    word = str(tokens[0][1]).lower()
    if word == "select" or not has_command(word):
        return WHOLE, None
    return REFUSED, (f"{word.upper()} refused: its {count:,} tokens ({commas:,} commas) are more than "
                     f"cqlsh's parser reads ({bounds.PARSED_TOKENS:,}; its time and memory grow with "
                     f"their square): {ADVICE}")


def whole_statement(tokens: Any, srcstr: str, statement: Lexed | None) -> Lexed:
    """The statement to send whole (ExtShell.send_whole): as the claims read it when they
    did (lexed once, when at all: it is read again for the table of its result), else its text
    from cqlsh's tokens."""
    if statement is not None:
        return statement
    from cqlsh_ext.cql.lexer import Lexed
    from cqlsh_ext.upstream.seams import statement_text

    return Lexed(statement_text(tokens, srcstr))


def reads_traces(tokens: Any, statement: Lexed, keyspace: str | None) -> bool:
    """A SELECT of system_traces (named, or the keyspace in use): sent without tracing it, as cqlsh's
    do_select does."""
    from cqlsh_ext.query.recognize import table_of

    if str(tokens[0][1]).lower() != "select":
        return False
    named = table_of(statement)
    named_keyspace = named[0] if named is not None else None
    return named_keyspace == "system_traces" or (named_keyspace is None and keyspace == "system_traces")


def table_of_whole(sent: Lexed | None, query_string: str, written: bool) -> tuple[bool, Any]:
    """(True, the ([keyspace], table) a statement sent whole reads, or `written` writes, or None),
    found by the shell's lexer as cqlsh's parse_for_select_meta (parse_for_update_meta) finds it by
    its grammar; (False, None) for any other statement (cqlsh's own way then). `sent`: the
    statement being sent whole, if any."""
    if sent is None or query_string != sent.text:
        return False, None
    from cqlsh_ext.query.recognize import table_of

    return True, _written_table(sent) if written else table_of(sent)


def _written_table(statement: Lexed) -> tuple[str | None, str] | None:
    """([keyspace], table) the first INSERT INTO, UPDATE or DELETE ... FROM of a statement (a batch's
    first) writes, or None."""
    tokens = statement.tokens
    for i, tok in enumerate(tokens[:-1]):
        word = tok.value.lower() if tok.kind == "word" else ""
        if word in ("into", "update", "from") and tokens[i + 1].kind in ("word", "qname"):
            names = [t.value.lower() if t.kind == "word" else t.value for t in tokens[i + 1:i + 4:2]]
            if tokens[i + 2].kind == "punct" and tokens[i + 2].value == "." and len(names) == 2:
                return names[0], names[1]
            return None, names[0]
    return None
