"""Where a cut SELECT goes on from, as a token a later run hands back (`--resume TOKEN`): the
Position of the first row not printed (the paging state its page was asked with, and how many rows
of that page were printed), the rows printed before it in all (a payload query's LIMIT counts
them), and a digest of the statement's tokens, so that a token is never applied to another
statement (the server would read its paging state as the other's, or refuse it).

The token is URL-safe base64 of a small JSON object: no secret (a paging state is the server's
opaque position in the answer), readable by whoever holds it, valid while the table and the
protocol version are the same.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from cqlsh_ext.cql.lexer import Lexed
    from cqlsh_ext.output.row_limit import Position

#: The token's own version: a token of another is refused.
VERSION = 1


class ResumeError(Exception):
    """A token that cannot be read; str() is the one line."""


def digest(statement: Lexed) -> str:
    """The statement's tokens (not its spacing, comments or closing `;`), digested."""
    kept = [tok for tok in statement.tokens if tok.kind != "end" and (tok.kind, tok.value) != ("punct", ";")]
    words = [f"{tok.kind}:{tok.value.lower() if tok.kind == 'word' else tok.value}" for tok in kept]
    return hashlib.sha256("\x00".join(words).encode("utf-8", "surrogatepass")).hexdigest()[:16]


def token(statement: Lexed, position: Position, before: int) -> str:
    """The token that goes on with `statement` from `position`, `before` rows printed before it."""
    state, index = position
    data = {"v": VERSION, "s": digest(statement), "p": None if state is None else state.hex(), "i": index,
            "b": before}
    return base64.urlsafe_b64encode(json.dumps(data, separators=(",", ":")).encode()).decode().rstrip("=")


@dataclass(frozen=True)
class ResumeToken:
    """A token read: the statement's digest, the Position and the rows printed before."""

    statement: str
    position: Position
    before: int

    def applies(self, statement: Lexed) -> str | None:
        """Why this token does not go on with `statement` (None: it does)."""
        if digest(statement) != self.statement:
            return ("--resume: the token is of another statement: give the same SELECT it was cut "
                    "from (its words and values; spacing and case of keywords aside)")
        return None


def read(text: str) -> ResumeToken:
    """The token `text`; raises ResumeError."""
    try:
        padded = text.strip() + "=" * (-len(text.strip()) % 4)
        data = json.loads(base64.urlsafe_b64decode(padded.encode("ascii")))
        if not isinstance(data, dict) or data.get("v") != VERSION:
            raise ValueError("version")
        state = data["p"]
        index, before, statement = data["i"], data["b"], data["s"]
        if not (isinstance(index, int) and isinstance(before, int) and isinstance(statement, str)
                and index >= 0 and before >= 0 and (state is None or isinstance(state, str))):
            raise ValueError("fields")
        position = (None if state is None else bytes.fromhex(state), index)
    except (ValueError, KeyError, UnicodeError, binascii.Error, TypeError, RecursionError):  # (nesting)
        raise ResumeError("--resume: not a token of this version's (--stats and --max-rows give one "
                          "with the answer they cut)") from None
    return ResumeToken(statement, position, before)
