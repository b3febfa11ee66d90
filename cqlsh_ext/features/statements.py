"""The declared statements as the shell's door, its HELP and Tab read them, beside cqlsh's grammar:
which of cqlsh-ext's own features (features.feature.Statement: COMPRESSION STATS, TRIAL, INSPECT,
DESCRIBE PAYLOAD, ...) or of a package's read features (features.ENTRY_POINT_GROUP) a lexed statement
is (`own_feature_of`, `feature_of`), the words Tab offers of a package's statement (`next_words`), and
what HELP says of them (`help_of`, `help_section`). A package's feature is the words of its name and
its arguments; a statement whose first word is the shell's (`select_sample` -> SELECT ...) is none of a
package's: Tab never offers it, and HELP says so beside it (MCP and the Python API serve it as ever).
The shell runs what these find (shell.dispatcher); the read-only rule and Spark's mode read the same.

Imported when the shell starts: it imports nothing heavy at module level (the packages' features
are loaded at the first statement, HELP or Tab that may be one of theirs)"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from cqlsh_ext.cql.lexer import Lexed
    from cqlsh_ext.features.feature import Feature

__all__ = ["feature_of", "help_of", "help_section", "next_words", "own_feature_of", "own_first_words"]


def _taken() -> frozenset[str]:
    """The words the shell's own statements start with: cqlsh's grammar, its commands and
    the statements' claims (features.commands). Not a declared statement's own first word: cqlsh's grammar
    learns those to complete them (shell.completion), but the shell reads them from
    their declarations (TOY REPORT, a built-in report with a first word of its own)."""
    from cqlsh_ext.features import declared
    from cqlsh_ext.features.commands import claims, commands, statement_commands
    from cqlsh_ext.features.forms import statement_words
    from cqlsh_ext.upstream.seams import first_words

    shells = {c.word.upper() for c in commands()} | {w.upper() for claim in claims() for w in claim.words} \
        | {word.upper() for word in statement_commands()}
    # A statement whose first word starts cqlsh's statements too (its Statement `recognizes` its
    # own: DESCRIBE PAYLOAD) leaves that word cqlsh's.
    shells |= {words[0].upper() for feature in declared(plugins=False).values()
               if feature.statement is not None and feature.statement.recognizes is not None
               for words in (statement_words(feature), *feature.statement.aliases)}
    stated = {words[0].upper() for feature in declared(plugins=False).values()
              if feature.statement is not None and feature.statement.read_from_declaration
              for words in (statement_words(feature), *feature.statement.aliases)}
    return first_words() - (stated - shells)


def _unlisted() -> list[Feature]:
    """The features whose statement HELP lists and Tab completes from the declaration alone: a
    package's read features, and those of cqlsh-ext's own features whose statement's first word
    starts none of the shell's statements (a first word the shell has, COMPRESSION, INSPECT,
    DESCRIBE, is completed by its grammar and has its HELP topics: its package's declared.py)."""
    from cqlsh_ext.features import declared
    from cqlsh_ext.features.calling import plugins
    from cqlsh_ext.features.forms import statement_words

    taken = _taken()
    own = [feature for feature in declared(plugins=False).values()
           if feature.statement is not None and statement_words(feature)[0] not in taken]
    return [*own, *plugins().values()]


def _all_words() -> list[tuple[tuple[str, ...], Feature]]:
    """The features of `_unlisted()` by their statement's words, the longest first (TOY ROWS before
    TOY)."""
    from cqlsh_ext.features.forms import statement_words

    found = [(statement_words(feature), feature) for feature in _unlisted()]
    return sorted(found, key=lambda pair: -len(pair[0]))


def _words_first() -> list[tuple[tuple[str, ...], Feature]]:
    """Those of _all_words() that are statements of the shell: their first word none of its own."""
    taken = _taken()
    return [(words, feature) for words, feature in _all_words() if words[0] not in taken]


def _shadowed(words: tuple[str, ...]) -> str:
    """Why a feature's statement is none of the shell's ('' when it is one)."""
    if words[0] not in _taken():
        return ""
    return (f"not a statement of the shell: {words[0]} starts the shell's own statements "
            "(MCP and the Python API serve it)")


def _own_words() -> list[tuple[tuple[str, ...], Feature]]:
    """cqlsh-ext's own features that declare their statement (Feature.statement), by each of its
    words (its own, then its aliases)."""
    from cqlsh_ext.features import declared

    # A statement that claims its own among CQL's (Statement.claims) is tried with the claims; one
    # cqlsh's grammar parses (Statement.parsed) is a command of the shell's.
    return [(words, feature) for feature in declared(plugins=False).values()
            if feature.statement is not None and feature.statement.read_from_declaration
            for words in (feature.statement.words, *feature.statement.aliases)]


def own_first_words() -> frozenset[str]:
    """The first words (lower case) of cqlsh-ext's own declared statements: a statement that starts
    with one is handed to own_feature_of before the claims and cqlsh's grammar."""
    return frozenset(words[0].lower() for words, _feature in _own_words())


def own_feature_of(statement: Lexed) -> tuple[Feature, int] | None:
    """cqlsh-ext's own feature whose declared statement (Feature.statement) `statement` is, and how
    many of its tokens the statement's words are; None when it is none of theirs (cqlsh's grammar
    reads the shell's other statements; a statement its Statement's `recognizes` does not take is
    cqlsh's). The packages' features are not loaded."""
    own = _own_words()
    found = _matching(statement, own)
    if found is not None or _lexes(statement):
        return found
    # One the lexer refuses is read by its text's words, so that the refusal is said as its own.
    typed = tuple(word.rstrip(";").upper() for word in statement.text.split())
    return next(((feature, len(words)) for words, feature in own if typed[:len(words)] == words
                 and _recognized(feature, None)), None)


def _recognized(feature: Feature, tokens: list[Any] | None) -> bool:
    """Whether the statement (its tokens; None: not lexed) is the feature's, as its Statement's
    `recognizes` says (one that does not lex is none of a statement that may be cqlsh's)."""
    recognizes = feature.statement.recognizes if feature.statement is not None else None
    if recognizes is None:
        return True
    return tokens is not None and recognizes(tokens)


def _lexes(statement: Lexed) -> bool:
    from cqlsh_ext.cql.errors import QueryError

    try:
        return bool(statement.tokens)
    except QueryError:
        return False


def feature_of(statement: Lexed) -> tuple[Feature, int] | None:
    """The package's feature whose statement `statement` is, and how many of its tokens the feature's
    words are; None when it is none of theirs (or does not lex: cqlsh says so as ever)."""
    return _matching(statement, _words_first())


def _matching(statement: Lexed,
              candidates: list[tuple[tuple[str, ...], Feature]]) -> tuple[Feature, int] | None:
    from cqlsh_ext.cql.errors import QueryError

    try:
        tokens = statement.tokens
    except QueryError:
        return None
    for words, feature in candidates:
        typed = tokens[:len(words)]
        if len(typed) == len(words) and all(tok.kind == "word" and tok.value.upper() == word
                                             for tok, word in zip(typed, words, strict=True)) \
                and _recognized(feature, tokens):
            return feature, len(words)
    return None


def next_words(head: str, partial: str) -> list[str]:
    """What completes `partial` after `head` (the statement typed so far, before the word under the
    cursor) in a package's feature's statement: the next word of its name (TOY after `T`, ROWS after
    `TOY R`), then, once its words are typed, each argument not named yet as `name =` (`limit =`
    after `TOY ROWS ks.t l`); nothing where a value is expected (after `=`)."""
    from cqlsh_ext.cql.errors import QueryError
    from cqlsh_ext.cql.lexer import Lexed

    try:
        tokens = [tok for tok in Lexed(head).tokens if tok.kind != "end"]
    except QueryError:  # an open string: a value is being typed
        return []
    typed = [tok.value.upper() if tok.kind == "word" else "" for tok in tokens]
    found: set[str] = set()
    for words, feature in _words_first():
        if len(typed) < len(words):
            if list(words[:len(typed)]) == typed and words[len(typed)].startswith(partial.upper()):
                found.add(words[len(typed)])
        elif tuple(typed[:len(words)]) == words and not (tokens and tokens[-1].value == "="):
            named = {tok.value.lower() for tok, after in zip(tokens, tokens[1:], strict=False)
                     if tok.kind == "word" and after.value == "="}
            found.update(f"{argument.name} =" for argument in feature.arguments
                         if argument.name not in named and argument.name.startswith(partial.lower()))
    return sorted(found)


def help_of(asked: list[str]) -> str | None:
    """HELP <words> (lower case) of a package's feature, or one of cqlsh-ext's own whose statement's
    first word is none of the shell's: its document (the words of its statement, or its name), else
    None."""
    from cqlsh_ext.features.calling import document

    typed = " ".join(asked)
    for words, feature in _all_words():
        if typed in (" ".join(words).lower(), feature.name.lower()):
            shadowed = _shadowed(words)
            return document(feature) + (f"\n\n{feature.name} is {shadowed}." if shadowed else "")
    return None


def help_section() -> str:
    """What HELP lists after cqlsh's topics of the statements `_unlisted()` declares ('' when there
    is none): cqlsh-ext's own, then the packages' read features, each one's statement, title and
    description, and its arguments' one-line docs."""
    from cqlsh_ext.features.calling import plugins
    from cqlsh_ext.features.forms import statement_words, usage

    packages = plugins()
    lines: list[str] = []
    for feature in _unlisted():
        heading = "Read features of installed packages (HELP <words> for one):" if feature.name in packages \
            else "More statements of cqlsh-ext's (HELP <words> for one):"
        if heading not in lines:
            lines.append(heading)
        words = statement_words(feature)
        lines.append(f"  {' '.join(words)} {usage(feature)}".rstrip()
                     + f"  -- {feature.title}: {feature.description}")
        shadowed = _shadowed(words)
        if shadowed:
            lines.append(f"      ({shadowed})")
        lines += [f"      {argument.name}: {argument.doc}" for argument in feature.arguments]
    return "\n".join(lines) + "\n" if lines else ""
