"""Completion from cqlsh's own grammar and the live schema, for prompt_toolkit.

cqlsh completes through readline: readline cuts the word under the cursor at its delimiters and
cqlsh's `cql_complete` matches the grammar (start symbol `cqlshCommand`, so shell commands and
ours are included) against the text before that word. The schema comes from the driver's
metadata through the Shell's `get_*_names` methods, so new tables show up as soon as the driver
hears of them. We do the same cut and call the same parser, without readline.

Runs in prompt_toolkit's event loop, not in a thread: cqlsh's lexer keeps state in its scanner
object, so it must not run while the Enter key handler splits statements with it. A completion
takes a few milliseconds (bench/completion.py).

After a payload path's `.` (`data.`, `data.customer.`, `m['k'].`, `u.payload.`), the keys seen in a
sample of the column are offered instead (cqlsh_ext.payload_select.keys): the first Tab on a column
reads its sample (at most a couple of seconds, once per session); typing only uses what is cached,
so a keystroke never waits for the server.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from cqlshlib import pylexotron
from prompt_toolkit.completion import CompleteEvent, Completer, Completion
from prompt_toolkit.document import Document

from cqlsh_ext.cql import grammar_bounds as bounds
from cqlsh_ext.cql.spelling import unquoted
from cqlsh_ext.encode import help as encode_help
from cqlsh_ext.payload_select.keys import PayloadKeys
from cqlsh_ext.upstream.seams import newline_commands, split_statements

if TYPE_CHECKING:
    from cqlsh_ext.reading.context import ReadContext
    from cqlsh_ext.settings.shell import Shell

#: readline's default delimiters plus '.', which cqlsh adds (see Shell.init_history).
WORD_DELIMITERS = frozenset(" \t\n`~!@#$%^&*()-=+[{]}\\|;:'\",<>/?.")


#: The menu's label of an entry that says what is expected rather than completing.
EXPECTED = "expected"
#: Columns prompt_toolkit's completion menu adds to an entry: a space each side of its text and
#: of its label, and the scrollbar.
MENU_MARGINS = 5


def _menu_room(label: str) -> int:
    """The characters an entry's text can take beside `label` in a menu as wide as the terminal:
    prompt_toolkit cuts a longer one, label first ('expe...')."""
    import shutil

    return max(0, shutil.get_terminal_size().columns - len(label) - MENU_MARGINS)


def _feature_words(head: str, partial: str, found: list[str]) -> list[str]:
    """The words of the packages' read features' statements that complete `partial` after `head`
    (features.statements), those cqlsh's grammar offered aside; none when a package's failed."""
    from cqlsh_ext.features import PluginError
    from cqlsh_ext.features.statements import next_words

    try:
        words = next_words(head, partial)
    except PluginError:
        return []
    offered = {word.strip().upper() for word in found}
    return [f"{word} " for word in words if word not in offered]


def completes(text: str) -> bool:
    """Whether cqlsh's grammar may complete the statement being typed at the end of `text` (the
    text before the cursor): at most PARSED_TOKENS of cqlsh's tokens in it. Measured first, in
    linear time: a text of fewer tokens as the shell's lexer splits them (as many as cqlsh's, or
    more) may; one past LEXED_BEFORE_ITS_END that has more is not lexed by cqlsh (a pasted statement
    of 1 MiB was lexed at every keystroke)."""
    if len(text) <= bounds.PARSED_TOKENS:  # a token is a character at least
        return True
    if bounds.measured(text, newline_commands()).tokens <= bounds.PARSED_TOKENS:
        return True
    if len(text) > bounds.LEXED_BEFORE_ITS_END:
        return False
    try:
        statements = split_statements(text)
    except ValueError:
        return True  # cqlsh's completion offers nothing where its lexer fails
    return not statements or bounds.cqlsh_count(statements[-1])[0] <= bounds.PARSED_TOKENS


def split_word(text_before_cursor: str) -> tuple[str, str]:
    """(text before the word, the partial word) as readline would cut them."""
    i = len(text_before_cursor)
    while i > 0 and text_before_cursor[i - 1] not in WORD_DELIMITERS:
        i -= 1
    return text_before_cursor[:i], text_before_cursor[i:]


_QUALIFIER = re.compile(r'("(?:[^"]|"")+"|\w+)\.$')


def _menu_order(candidate: str, partial: str) -> tuple[bool, bool, bool, str]:
    """Names, KEYWORDS, punctuation; first those spelt as typed: cqlsh offers `oxbp` and `OxbProbe`
    for `"Ox`, where the quoted name's case counts (Tab takes the first)."""
    word = candidate.strip()
    return (not word.startswith(partial), not word[:1].isalnum() and word[:1] != '"', word.isupper(),
            word.lower())


class CqlCompleter(Completer):
    def __init__(self, shell: Shell, ruleset: Any) -> None:
        self.shell = shell
        self.ruleset = ruleset
        self.payload_keys = PayloadKeys(self.context)

    def context(self) -> ReadContext:
        """The shell's reading context as it is now (its session, keyspace and settings change)."""
        from cqlsh_ext.reading.context import shell_context

        return shell_context(self.shell)

    def kinds(self, head: str) -> dict[str, str]:
        """Menu labels for schema names: keyspace, table, type (from the driver's metadata)."""
        shell = self.shell
        labels: dict[str, str] = {}
        qualifier = _QUALIFIER.search(head)
        keyspace = unquoted(qualifier.group(1)) if qualifier else shell.current_keyspace
        try:
            for ks in shell.get_keyspace_names():
                labels[ks] = "keyspace"
            if keyspace and labels.get(keyspace) == "keyspace":
                for table in shell.get_columnfamily_names(keyspace):
                    labels[table] = "table"
                for view in shell.get_materialized_view_names(keyspace):
                    labels[view] = "view"
                for udt in shell.get_usertype_names(keyspace):
                    labels[udt] = "type"
        except Exception:  # labels are a nicety; metadata may be mid-refresh
            pass
        return labels

    def candidates(self, head: str, partial: str) -> tuple[list[str], list[str]]:
        """cqlsh's completions for `partial` after `head`, and the hints (e.g. '<value for id (int)>');
        none for a statement past what cqlsh's grammar reads (`completes`: a pasted IN list of
        20,000 keys took it gigabytes at the next keystroke)."""
        if not completes(head + partial):
            return [], []
        found, hints = self.ruleset.cql_complete_single(
            head, partial, {"cassandra_conn": self.shell}, startsymbol="cqlshCommand")
        # cqlsh collects them in sets; a menu reads better sorted: names, KEYWORDS, punctuation.
        found = sorted(found, key=lambda candidate: _menu_order(candidate, partial))
        return found, sorted(h.text for h in hints if pylexotron.is_hint(h))

    def get_completions(self, document: Document, complete_event: CompleteEvent) -> Iterable[Completion]:
        chain = encode_help.chain_completions(document.text_before_cursor)
        if chain is not None:  # inside encode('...': the chain's steps, not cqlsh's grammar
            step, steps = chain
            for name in steps:
                yield Completion(name, start_position=-len(step), display_meta="encode")
            return
        typing = complete_event.text_inserted
        try:
            keys = self.payload_keys.candidates(document.text, document.cursor_position, read=not typing)
        except Exception:  # a completion problem must never break typing
            if getattr(self.shell, "debug", False):
                raise
            keys = None
        if keys is not None:  # after a payload path's '.': the keys seen in its sample, if any
            replaced, found_keys = keys
            for key in found_keys:
                yield Completion(key, start_position=-replaced, display=key, display_meta="key")
            return
        if not typing:  # a path before its SELECT's FROM, in no one table: say why no keys
            try:
                needed = self.payload_keys.from_needed(document.text, document.cursor_position,
                                                       _menu_room(EXPECTED))
            except Exception:  # a completion problem must never break typing
                needed = None
            if needed is not None:
                yield Completion("", start_position=0, display=needed, display_meta=EXPECTED)
                return
        head, partial = split_word(document.text_before_cursor)
        # While typing, offer words only once one is started (or after 'ks.'): a menu after every
        # space would be noise. Tab asks for everything, hints included.
        if typing and not partial and not head.endswith("."):
            return
        try:
            found, hints = self.candidates(head, partial)
        except Exception:  # a completion problem must never break typing
            if getattr(self.shell, "debug", False):
                raise
            return
        if not typing and ";" not in head and completes(head + partial):
            # Tab: a package's read feature's words (the packages loaded at the first Tab)
            found = [*found, *_feature_words(head, partial, found)]
        labels = self.kinds(head) if found else {}
        for candidate in found:
            word = candidate.strip()
            label = labels.get(unquoted(word.rstrip(".")), "")
            yield Completion(candidate, start_position=-len(partial), display=word or candidate,
                             display_meta=label)
        if not typing:
            # Hints say what is expected (a value, a new name); selecting one inserts nothing.
            for hint in hints:
                yield Completion("", start_position=0, display=hint, display_meta=EXPECTED)
