"""Where a cut SELECT goes on from, as a token a later run hands back (`--resume TOKEN`): the
Position of the first row not printed (the paging state its page was asked with, and how many rows
of that page were printed), the rows printed before it in all (a payload query's LIMIT counts
them), the table it read (`keyspace.table`, resolved against the keyspace in use as the server
resolves it) and a digest of the statement's tokens, so that a token is never applied to another
statement, nor to the same words in another keyspace (the server would read its paging state as
the other's, or refuse it).

The token is URL-safe base64 of a small JSON object whose every field is sealed: `m`, an HMAC-SHA256
under the user's resume key (`~/.cassandra/cqlsh-ext-resume.key`, 32 random bytes, 0600, made by
the first token cut: common.private_key), over the other fields. So an edited field (a huge row
count, another table's paging state, another statement's digest) or a token made up is refused in
one line, and a token is good only for the user it was cut for. Its fields are readable by whoever
holds it (a paging state is the server's opaque position in the answer): it carries no secret.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
import os
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from cqlsh_ext.common.private_key import KeyRefused, read_key, user_key

if TYPE_CHECKING:
    from cqlsh_ext.cql.lexer import Lexed
    from cqlsh_ext.output.row_limit import Position

#: The token's own version: a token of another is refused.
VERSION = 2
#: The key that seals the tokens, in cqlsh's directory of the user's.
KEY_PATH = os.path.join("~", ".cassandra", "cqlsh-ext-resume.key")
_KEY_NAMED = "the resume key"
#: What the seal is taken over, before the fields: the format and its version.
_DOMAIN = b"cqlsh-ext resume token 2\x00"
_NOT_A_TOKEN = ("--resume: not a token of this version's (--stats and --max-rows give one with the answer "
                "they cut)")


class ResumeError(Exception):
    """A token that cannot be read; str() is the one line."""


def digest(statement: Lexed) -> str:
    """The statement's tokens (not its spacing, comments or closing `;`), digested."""
    kept = [tok for tok in statement.tokens if tok.kind != "end" and (tok.kind, tok.value) != ("punct", ";")]
    words = [f"{tok.kind}:{tok.value.lower() if tok.kind == 'word' else tok.value}" for tok in kept]
    return hashlib.sha256("\x00".join(words).encode("utf-8", "surrogatepass")).hexdigest()[:16]


def table_read(statement: Lexed, keyspace: str | None) -> str | None:
    """`keyspace.table` the SELECT reads, an unqualified name in `keyspace` (the one in use); None
    when it names none the shell can tell."""
    from cqlsh_ext.query.recognize import table_of

    found = table_of(statement)
    if found is None:
        return None
    named, table = found
    within = named or keyspace
    return f"{within}.{table}" if within else table


def key_path() -> str:
    return os.path.expanduser(KEY_PATH)


def token(statement: Lexed, keyspace: str | None, position: Position, before: int) -> str:
    """The token that goes on with `statement` (`keyspace` in use) from `position`, `before` rows
    printed before it; raises KeyRefused when the user's resume key cannot be had."""
    state, index = position
    data: dict[str, Any] = {"v": VERSION, "t": table_read(statement, keyspace), "s": digest(statement),
                            "p": None if state is None else state.hex(), "i": index, "b": before}
    data["m"] = _seal(user_key(key_path(), _KEY_NAMED), data)
    return base64.urlsafe_b64encode(json.dumps(data, separators=(",", ":")).encode()).decode().rstrip("=")


def _seal(key: bytes, fields: dict[str, Any]) -> str:
    body = json.dumps(fields, sort_keys=True, separators=(",", ":"), ensure_ascii=True).encode("ascii")
    return hmac.new(key, _DOMAIN + body, hashlib.sha256).hexdigest()


@dataclass(frozen=True)
class ResumeToken:
    """A token read: the table it was cut from, the statement's digest, the Position and the rows
    printed before."""

    table: str | None
    statement: str
    position: Position
    before: int

    def applies(self, statement: Lexed, keyspace: str | None) -> str | None:
        """Why this token does not go on with `statement` in `keyspace` (None: it does)."""
        if digest(statement) != self.statement:
            return ("--resume: the token is of another statement: give the same SELECT it was cut "
                    "from (its words and values; spacing and case of keywords aside)")
        table = table_read(statement, keyspace)
        if table != self.table:
            return (f"--resume: the token was cut from a reading of {self.table}, and this statement reads "
                    f"{table}: give it in the keyspace it was cut in (USE, -k)")
        return None


def read(text: str) -> ResumeToken:
    """The token `text`, its seal checked under the user's resume key; raises ResumeError."""
    try:
        padded = text.strip() + "=" * (-len(text.strip()) % 4)
        data = json.loads(base64.urlsafe_b64decode(padded.encode("ascii")))
        if not isinstance(data, dict) or data.get("v") != VERSION:
            raise ValueError("version")
        seal = data.pop("m")
        state, table = data["p"], data["t"]
        index, before, statement = data["i"], data["b"], data["s"]
        if not (isinstance(index, int) and isinstance(before, int) and isinstance(statement, str)
                and isinstance(seal, str) and index >= 0 and before >= 0
                and (state is None or isinstance(state, str)) and (table is None or isinstance(table, str))
                and set(data) == {"v", "t", "s", "p", "i", "b"}):
            raise ValueError("fields")
        position = (None if state is None else bytes.fromhex(state), index)
    except (ValueError, KeyError, UnicodeError, binascii.Error, TypeError, RecursionError):  # (nesting)
        raise ResumeError(_NOT_A_TOKEN) from None
    try:
        key = read_key(key_path(), _KEY_NAMED)
    except FileNotFoundError:
        raise ResumeError(f"--resume: there is no resume key at {key_path()}, which sealed the token: it "
                          "was not cut for this user (run the SELECT again)") from None
    except KeyRefused as err:
        raise ResumeError(f"--resume: {err}") from None
    if not hmac.compare_digest(seal, _seal(key, data)):
        raise ResumeError("--resume: the token was altered, or not cut for this user (its seal does not "
                          "match): run the SELECT again")
    return ResumeToken(table, statement, position, before)
