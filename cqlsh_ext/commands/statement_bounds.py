"""The shell's bounds on a statement before cqlsh's parser: no input makes the shell use more than
1 GiB of memory or 30 s of its own work before a statement is sent, with `-d none` too.

cqlsh reads a statement with its lexer (linear), then hands every statement whose first word has a
`do_<word>` method (SELECT among them) to its grammar, whose time and memory grow with the square of
the tokens (cql/grammar_bounds.py: a 20,000-key IN list took 7 GiB and was killed), and it parses a
SELECT's text once more after it ran, for the table whose metadata formats the result
(Shell.parse_for_select_meta). In the order the shell meets a statement:

1. Its text (ExtShell.onecmd, before cqlsh's lexer): at most STATEMENT_BYTES, else refused in one
   line; the statement (to its `;`) is dropped and the shell goes on. A statement typed or read
   over many lines is lexed by cqlsh again at every line (onecmd is handed all of it so far): once
   it is longer than LEXED_EVERY_LINE, a line of a statement of CQL that cannot end it is not lexed
   (`Scan`): a line without `;`, and in a batch a line before its APPLY. So a 20,000-line IN list
   costs the lexing of it once, not 20,000 times. (Where a line of CQL is followed on the same line
   by a shell command that ends at its line inside a quote that a later line closes, that command
   then waits for the next `;`.)
2. Its brackets (handle_statement, on cqlsh's tokens): at most cql.grammar_bounds.DEPTH inside one another,
   else refused before anything reads or sends it (cqlsh's grammar and our parsers recurse on them;
   Cassandra's parser answers StackOverflowError).
3. Its tokens: past cql.grammar_bounds.PARSED_TOKENS of cqlsh's, cqlsh's grammar never reads it. The
   intercepts (payload queries, exports, DESCRIBE PAYLOAD, encode(), edits: linear readers) take it
   first; a SELECT they leave, or any statement cqlsh sends as written without a `do_` method
   (INSERT, UPDATE, BATCH, ...), goes to the server whole as cqlsh sends a statement its grammar
   does not read (handle_parse_error), and the table whose metadata formats its result is found by
   the shell's lexer (cql/lexer.py) where cqlsh would parse the text again (`table_of_whole`): the
   same table, so the same output, byte for byte. A shell command (COPY, DESCRIBE, SOURCE, ours)
   needs cqlsh's grammar: refused in one line.
4. Input that is not text (`-f` of a binary file, a pipe): one line, and nothing from there on runs.

Completion in the interactive shell runs cqlsh's grammar on the statement being typed, at every
keystroke: past PARSED_TOKENS it offers nothing (`completes`), as a statement that long is never
parsed to run either.

This module decides and words it (each function answers what becomes of the statement, and the
line to say); the shell (cqlsh_ext.shell.ExtShell: onecmd, handle_statement, get_input_line,
parse_for_select_meta) keeps the scan, says the line and sends or refuses.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from cqlsh_ext.cql import grammar_bounds as bounds

if TYPE_CHECKING:
    from cqlsh_ext.cql.lexer import Lexed

#: One statement's text at most (UTF-8): its lexing by cqlsh's lexer and ours, held together, stays
#: near 400 MB and 15 s of CPU in the worst shape (an IN list of the key 1: a token every byte;
#: bench/shell_bounds.py's worst-1mib, on a loaded machine), and it holds an IN list of 27,000
#: timeuuids.
STATEMENT_BYTES = 1 << 20
#: Past this many characters a statement of several lines is no longer lexed at every line that
#: cannot end it: up to it, at most about 700 KB are lexed in all (lines of 3 bytes: 1,2,...).
LEXED_EVERY_LINE = 2 << 10
#: What onecmd does with the statement read so far (`read_so_far`): cqlsh lexes it, it cannot end
#: yet, or it was refused.
LEX, WAIT = "lex", "wait"
#: What handle_statement does with one statement (`admit`).
PARSE, WHOLE, REFUSED = "parse", "whole", "refused"

#: The first words of statements that end only at a `;` (CQL's): a line without one cannot end them.
#: cqlsh's own commands and ours may end at their line.
_ENDS_AT_SEMICOLON = frozenset({"select", "insert", "update", "delete", "begin", "create", "alter", "drop",
                                "truncate", "grant", "revoke"})
#: Space and comments, then a statement's first word.
_FIRST_WORD = re.compile(r"(?:\s+|--[^\n]*|//[^\n]*|/\*.*?\*/)*([A-Za-z]+)", re.DOTALL)
_ADVICE = "split it into several statements (a long IN list into several of a few thousand keys each)"


@dataclass
class Scan:
    """What onecmd saw of the statement being read, line by line: how many characters, their UTF-8
    size, whether a `;` was among them and the statement's first word; each line is looked at once."""

    scanned: int = 0
    size: int = 0
    semicolon: bool = False
    #: A batch's APPLY may be in it (the word seen; a batch ends at APPLY BATCH;).
    apply: bool = False
    first: str = ""
    #: The rest of a statement refused before its end is being read: dropped up to its `;`.
    dropping: bool = False


def read_so_far(scan: Scan, text: str) -> tuple[str, Scan, str | None]:
    """What becomes of the statement text onecmd is handed (all of the statement read so far), with
    `scan` what was seen of it before: (LEX (cqlsh lexes it), WAIT (it cannot end yet: long, of CQL
    and without a `;`) or REFUSED (over STATEMENT_BYTES), the scan to keep, the line to say or
    None)."""
    if scan.dropping:  # the rest of a refused statement: read to its end, not run, not said again
        return REFUSED, Scan() if ";" in text else scan, None
    if len(text) < scan.scanned:  # another statement (the shell's own reset)
        scan = Scan()
    added = text[scan.scanned:]
    scan.size += bounds.size(added)
    ends = ";" in added
    scan.semicolon = scan.semicolon or ends
    scan.apply = scan.apply or "apply" in added.lower()
    scan.scanned = len(text)
    if not scan.first:
        found = _FIRST_WORD.match(text[:4096])
        scan.first = found.group(1).lower() if found else "?"
    if scan.size > STATEMENT_BYTES:
        said = (f"Statement refused: {'over ' if not scan.semicolon else ''}"
                f"{bounds.amount(scan.size)}, more than the shell reads as one statement "
                f"({bounds.amount(STATEMENT_BYTES)}): {_ADVICE}")
        return REFUSED, Scan(dropping=not scan.semicolon and scan.first in _ENDS_AT_SEMICOLON), said
    if len(text) > LEXED_EVERY_LINE and scan.first in _ENDS_AT_SEMICOLON \
            and (not ends or (scan.first == "begin" and not scan.apply)):
        return WAIT, scan, None
    return LEX, scan, None


def forget(scan: Scan) -> Scan:
    """The scan after the statement being read is done with (run, refused or reset): the rest of a
    refused one is still dropped up to its end."""
    return Scan(dropping=scan.dropping)


def too_deep(tokens: Any) -> str | None:
    """The line refusing one statement (cqlsh's tokens) that nests brackets past
    cql.grammar_bounds.DEPTH, before anything reads it; None when it does not."""
    at = bounds.too_deep(bounds.cqlsh_brackets(tokens))
    if at is None:
        return None
    return (f"Statement refused: brackets nested more than {bounds.DEPTH} deep (at char {at:,}): "
            "the shell sends no statement nested so deep (Cassandra's parser fails on it)")


def admit(tokens: Any, has_command: Callable[[str], bool]) -> tuple[str, str | None]:
    """What becomes of one statement (cqlsh's tokens) that no intercept took: (PARSE (cqlsh's
    grammar may read it), WHOLE (sent as written: ExtShell._send_whole) or REFUSED, the line
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
                     f"their square): {_ADVICE}")


def completes(text: str) -> bool:
    """Whether cqlsh's grammar may complete the statement being typed at the end of `text` (the
    text before the cursor): at most PARSED_TOKENS of cqlsh's tokens in it."""
    if len(text) <= bounds.PARSED_TOKENS:  # a token is a character at least
        return True
    from cqlsh_ext.upstream.seams import split_statements

    try:
        statements = split_statements(text)
    except ValueError:
        return True  # cqlsh's completion offers nothing where its lexer fails
    return not statements or bounds.cqlsh_count(statements[-1])[0] <= bounds.PARSED_TOKENS


def whole_statement(tokens: Any, srcstr: str, statement: Lexed | None) -> Lexed:
    """The statement to send whole (ExtShell._send_whole): as the intercepts read it when they
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


def unreadable_input(err: UnicodeDecodeError, lineno: int) -> str:
    """The line for input that is not text in its encoding (a binary file given to -f), at cqlsh's
    line number `lineno`: the shell drops the statement read so far and reads nothing from there
    on."""
    read = lineno - 1  # cqlsh counts from 1, and a line once it is read
    return (f"not {err.encoding} text (byte 0x{err.object[err.start]:02x}: {err.reason}) after "
            f"{read:,} line{'' if read == 1 else 's'} read: nothing from there on is run")
