"""The read-only gate: which statements `cqlsh-ext mcp` runs at all. The read-only rule decides
(features/read_rule.py, the one every read-only door asks: the shell's --read-only too), in its
words; of what it lets run, MCP serves these, everything else refused in one line:

    SELECT ...                        (payload paths, conditions, GROUP BY and aggregates included)
    DESCRIBE ... / DESC ...           (DESCRIBE PAYLOAD included)
    COMPRESSION STATS | SETTINGS | ADVISE ...
    INSPECT [JSON] SELECT ...

Decided on tokens, never on a pattern over the text: the shell's lexer's (cql.lexer.Lexed: strings,
$$strings$$, quoted names and comments are tokens or space, so no quoting, comment, case or spacing
hides a word). Every statement a tool takes is run by cqlsh-ext's own reading, never by cqlsh
(`read`): decided on those tokens alone, lexed once (the guard's lexing taken as it is), and the
server is sent the text of exactly its tokens (`ReadStatement.text`).

Before a lexer sees it, the statement's size is within bounds.py's, and its tokens after (counted
too as cqlsh's lexer counts them, within the bound of cqlsh's grammar). A statement whose first
word starts no statement at all (`SELEC`) is a syntax error, said as one with the word, its
position and the nearest word allowed; a statement of CQL or of the shell that is no read is
refused as one.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass

from cqlsh_ext.cql.errors import QueryError
from cqlsh_ext.cql.lexer import Lexed, Token
from cqlsh_ext.features import read_rule
from cqlsh_ext.mcp_server import bounds

SELECT, DESCRIBE, DESCRIBE_PAYLOAD, INSPECT = "SELECT", "DESCRIBE", "DESCRIBE PAYLOAD", "INSPECT"
#: The insight reports that only read (COMPRESSION TRIAL writes scratch tables: refused).
COMPRESSION_READS = ("STATS", "SETTINGS", "ADVISE")
#: The first words of the reads (a syntax error's nearest word is one of them).
READ_WORDS = ("SELECT", "DESCRIBE", "DESC", "COMPRESSION", "INSPECT")
#: Who keeps to the read-only rule here, as its refusals name it.
READER = "cqlsh-ext mcp"
#: What the gate lets through, as its refusals name it.
ALLOWED = ("SELECT, DESCRIBE (DESCRIBE PAYLOAD too), COMPRESSION STATS, SETTINGS or ADVISE, "
           "and INSPECT")


class Refused(Exception):
    """A statement the gate does not let through; str() is the one line the caller is told."""


@dataclass(frozen=True)
class ReadStatement:
    """A read the gate let through on the shell's lexer's tokens alone, for a statement the reading
    runs itself (cqlsh's lexer and grammar never see it): its `kind` and the statement (`lexed`:
    its tokens up to its first `;`, lexed once, in the text given)."""

    kind: str
    lexed: Lexed

    @property
    def text(self) -> str:
        """The statement as the server is sent it: the text from its first token to its last (what
        follows, a `;` or a comment, left out), so the server reads the tokens the gate read."""
        return self.lexed.spanned()


def read(text: str, kinds: Collection[str] | None = None, lexed: Lexed | None = None) -> ReadStatement:
    """The one read `text` holds (and one of `kinds`, when given), decided on the shell's lexer's
    tokens alone (`lexed`: `text` lexed already, its tokens taken as they are): for a statement
    that cqlsh never runs; its tokens are counted as cqlsh's lexer counts them (a UUID, a blob
    literal one), within cqlsh's bound. Refused otherwise."""
    kind, statement = _ours(text, kinds, lexed)
    lexed = lexed if lexed is not None else Lexed(text)
    end = len(statement)
    return ReadStatement(kind, lexed.part(0, end) if end < len(lexed.tokens) - 1 else lexed)


def _ours(text: str, kinds: Collection[str] | None, lexed: Lexed | None) -> tuple[str, list[Token]]:
    """The kind of the one statement `text` holds and its tokens (the shell's lexer's, up to its
    first `;`); Refused otherwise."""
    if not text.strip():
        raise Refused("no statement given")
    try:
        bounds.check_text(text, "a statement")
        tokens = (lexed if lexed is not None else Lexed(text)).tokens[:-1]  # without the end token
        bounds.check_tokens(tokens)
        bounds.check_counted_tokens(text, tokens)
    except QueryError as err:
        raise Refused(f"syntax error: {_lexing_error(text, str(err))}") from None
    except bounds.TooLarge as err:
        raise Refused(str(err)) from None
    ends = [i for i, tok in enumerate(tokens) if _punct(tok, ";")]
    statement = tokens[:ends[0]] if ends else tokens
    if not statement:
        raise Refused("no statement given")
    if ends and any(not _punct(tok, ";") for tok in tokens[ends[0]:]):
        raise Refused(_one_at_a_time())
    read = lexed if lexed is not None else Lexed(text)
    why = read_rule.statement_refusal(READER, read, None, session=False)
    kind = kind_of(statement) if why is None else None
    if kind is None:
        unknown = _unknown_word(statement[0])
        if unknown is not None:
            raise Refused(unknown)
        raise Refused(why or read_rule.refusal_words(READER, read_rule.what_of(statement),
                                                     f"is none of what it serves: {ALLOWED}"))
    if kinds is not None and kind not in kinds:
        raise Refused(f"refused: this tool takes one {' or '.join(sorted(kinds))}, not {kind}")
    return kind, statement


def kind_of(tokens: list[Token]) -> str | None:
    """The read `tokens` are, or None."""
    words = [tok.value.upper() if tok.kind == "word" else "" for tok in tokens[:3]]
    first = words[0]
    if first == "SELECT":
        return SELECT
    if first in ("DESCRIBE", "DESC"):
        from cqlsh_ext.describe.parse import recognizes

        return DESCRIBE_PAYLOAD if recognizes([*tokens, Token("end", "", 0, 0)]) else DESCRIBE
    if first == "COMPRESSION" and len(words) > 1 and words[1] in COMPRESSION_READS:
        return f"COMPRESSION {words[1]}"  # (SAVE DICTIONARY refused by the rule: it writes a file)
    if first == "INSPECT":
        after = words[2] if words[1:2] == ["JSON"] and len(words) > 2 else words[1] if len(words) > 1 else ""
        return INSPECT if after == "SELECT" else None
    return None


def _unknown_word(first: Token) -> str | None:
    """The syntax error of a statement whose first token starts no statement of CQL, cqlsh or
    cqlsh-ext (a typo: SELEC), or None when it does."""
    import difflib

    word = first.value.upper() if first.kind == "word" else ""
    if word and word in _statement_words():
        return None
    near = difflib.get_close_matches(word, READ_WORDS, n=1, cutoff=0.6) if word else []
    said = f"did you mean {near[0]}? " if near else ""
    return (f"syntax error at position {first.start}: {first.value!r} starts no statement ({said}this "
            f"server runs {ALLOWED})")


def _statement_words() -> frozenset[str]:
    """Every first word of a statement: CQL's (cql.first_words), and the shell's commands (cqlsh's
    do_<word> methods, cqlsh-ext's declared commands and statements' claims)."""
    from cqlsh_ext.cql.first_words import FIRST_WORDS
    from cqlsh_ext.features import commands
    from cqlsh_ext.upstream import seams

    shell = seams.import_cqlshmain(None).Shell
    words = {name[3:].upper() for name in dir(shell) if name.startswith("do_")}
    words |= {command.word.upper() for command in commands.commands()}
    words |= {word.upper() for word in commands.statement_commands()}
    words |= {word.upper() for claim in commands.claims() for word in claim.words}
    return frozenset(words | {word.upper() for word in FIRST_WORDS})


_UNCLOSED = {"'": "a string ('...') that does not end", '"': 'a quoted name ("...") that does not end',
             "$": "a $$string$$ that does not end", "/*": "a comment (/* ...) that does not end"}


def _lexing_error(text: str, error: str) -> str:
    """The lexer's 'unexpected character 'x' at 12' said as what it is, at 'position' 12."""
    import re

    found = re.fullmatch(r"unexpected character (.+) at (\d+)", error)
    if found is None:
        return error
    at = int(found.group(2))
    unclosed = _UNCLOSED.get("/*" if text.startswith("/*", at) else text[at])
    if unclosed is not None:
        return f"{unclosed}, at position {at}"
    return f"unexpected character {found.group(1)} at position {at}"


def _one_at_a_time() -> str:
    return "refused: one statement at a time (this text holds more than one)"


def _punct(tok: Token, value: str) -> bool:
    return tok.kind == "punct" and tok.value == value
