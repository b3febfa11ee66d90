"""`cqlsh-ext journal new-key`: a journal key made on purpose (docs/edit.md, "The journal's seal").

The key is made by the first journal ever written. Once journals were sealed with it, a key gone
missing is never replaced by a write (writing.journal.writing_key refuses, saying where it was):
this command makes the new one where there is none, and says what that does to the journals the
old key sealed (they no longer verify: UNDO and RESUME refuse them until the old key is back).
"""

from __future__ import annotations

import argparse
import os
import sys

from cqlsh_ext.common.text import plural


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="cqlsh-ext journal",
                                     description="The journals of edits, rewrites and UNDOs "
                                                 "(cqlsh-ext docs edit).")
    sub = parser.add_subparsers(dest="action", required=True)
    new = sub.add_parser("new-key", help="make a new journal key where there is none",
                         description="Make a new journal key (~/.cassandra/cqlsh-ext-journal.key, 32 "
                                     "random bytes, 0600) where there is none. Journals sealed with a key "
                                     "that is gone no longer verify: UNDO and RESUME refuse them until it "
                                     "is put back.")
    new.add_argument("--journal-dir", metavar="DIR",
                     help="where your journals are, to count those the old key sealed (default: journal "
                          "beside the shell's history)")
    return parser


def main(argv: list[str]) -> int:
    from cqlsh_ext.writing.journal import journal_dir
    from cqlsh_ext.writing.journal_names import sealed_journals
    from cqlsh_ext.writing.refused import WriteRefused
    from cqlsh_ext.writing.seal import key_path, make_key

    args = _parser().parse_args(argv)
    path = key_path()
    if os.path.lexists(path):
        print(f"cqlsh-ext journal: there is a journal key at {path} already: new-key makes one only where "
              "there is none (move the old one away first: the journals it sealed then no longer verify)",
              file=sys.stderr)
        return 1
    if args.journal_dir:
        directory = os.path.expanduser(args.journal_dir)
    else:
        from cqlsh_ext.upstream import seams

        directory = journal_dir(seams.import_cqlshmain(None).HISTORY)
    try:
        made = make_key()
    except WriteRefused as err:
        print(f"cqlsh-ext journal: {err}", file=sys.stderr)
        return 1
    if not made:
        print(f"cqlsh-ext journal: another process made a journal key at {path} a moment ago: that one is "
              "the key", file=sys.stderr)
        return 1
    print(f"made a new journal key: {path} (readable by you only; never print or copy it but to your own "
          "accounts)")
    sealed = sealed_journals(directory)
    if sealed:
        were = "was" if sealed == 1 else "were"
        print(f"{plural(sealed, 'journal')} in {directory} {were} sealed with the old key: they no longer "
              "verify (UNDO and RESUME refuse them; put the old key back to read them)")
    return 0
