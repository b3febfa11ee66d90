"""Journals by name: the short id every journal's file name ends with, and a journal named as a
user types it after the hint a run prints (`UNDO '3fa9c2d1' CONFIRM`, `UNDO LAST`,
`COMPRESSION REWRITE RESUME LAST`) found in the user's journal directory.

A journal's file is `KIND-KS.TABLE-STAMP-ID.jsonl` (a Spark run's directory of parts
`rewrite-KS.TABLE-STAMP-ID`), ID the first 8 hex digits of its run's random id: a hint naming it
fits on one line of an 80-column terminal and pastes as one statement. KS.TABLE is cut to
TABLE_CHARS, so that the path in the default directory fits such a line whole (the journal's
first line names the table in full); journals written before, named with it whole, are found
alike. A name is found as given
when it is a path (it holds a '/', or a file of that name is here); otherwise in the journal
directory, by its id or its file name; LAST is the journal of that kind this session (this
process: the interactive shell, a script, a program) wrote last, else the user's changed last in
the directory, which other sessions of the user may share: `whose` says which it is. Whatever is
found is read as any journal is (sealed, the user's).
"""

from __future__ import annotations

import os
import re
import stat
import time
from collections.abc import Callable

from cqlsh_ext.writing.refused import WriteRefused

#: What a journal's first line says it is, and the version of its lines (writing.journal writes them,
#: writing.journal_read refuses a journal that says otherwise).
FORMAT = "cqlsh-ext write journal"
VERSION = 3
#: Hex digits of the run's id a journal's name ends with.
ID_DIGITS = 8
#: The word that names the newest journal (UNDO LAST, COMPRESSION REWRITE RESUME LAST).
LAST = "LAST"
#: Journals of a directory looked at at most (names only: nothing is read but a directory's entries).
MAX_NAMES = 100_000
#: The UTC stamp in a journal's name: when its run started.
STAMP = "%Y%m%dT%H%M%S"
#: The most characters of KS.TABLE a journal's name holds: with the longest kind (`rewrite-`), the
#: stamp and the id, its path in the default directory, `~/.cassandra/journal/NAME`, is 80 at most.
TABLE_CHARS = 80 - len("~/.cassandra/journal/rewrite-") - len("-YYYYmmddTHHMMSS-") - ID_DIGITS - len(".jsonl")
_ID = re.compile(rf"-([0-9a-f]{{{ID_DIGITS}}})(?:\.jsonl)?$")


def short_id(run: str) -> str:
    """The id a journal of run `run` (its random id, in hex) is named with."""
    return run[:ID_DIGITS]


def table_part(keyspace: str, table: str) -> str:
    """How a journal's name spells its table: KS.TABLE, cut to TABLE_CHARS."""
    return f"{keyspace}.{table}"[:TABLE_CHARS].rstrip(".")


def name_base(kind: str, keyspace: str, table: str) -> str:
    """A new journal's name (a Spark run's directory's) before its id: KIND-KS.TABLE-STAMP, now."""
    return f"{kind}-{table_part(keyspace, table)}-{time.strftime(STAMP, time.gmtime())}"


def name_prefixes(kind: str, named: str) -> tuple[str, ...]:
    """How the names of a table's journals of `kind` begin: `named` (KS.TABLE, whole or as a name
    holds it) cut as names are now, and whole as journals written before were named."""
    cut = named[:TABLE_CHARS].rstrip(".")
    return (f"{kind}-{cut}-",) if cut == named else (f"{kind}-{cut}-", f"{kind}-{named}-")


def id_of(path: str) -> str | None:
    """The short id a journal's (or a Spark run directory's) name ends with; None for a name
    without one (a journal written before ids, a Spark part)."""
    found = _ID.search(os.path.basename(os.path.normpath(path)))
    return found.group(1) if found else None


def hint_name(path: str, directory: str) -> str:
    """How a hint names the journal at `path`: its short id when its name has one and it is in the
    journal `directory` (where an id is looked for), else its path."""
    ident = id_of(path)
    here = os.path.realpath(os.path.dirname(os.path.abspath(os.path.normpath(path))))
    return ident if ident is not None and here == os.path.realpath(directory) else path


def journal_path(path: str) -> str:
    """A journal's path as given (RESUME, UNDO), `~` expanded; one copied from a message that broke
    it after a '/' has the row's break and indent taken out (no journal this shell names holds a
    newline)."""
    path = os.path.expanduser(path)
    if "\n" in path and not os.path.exists(path):
        path = re.sub(r"\n[ \t]*", "", path)
    return path


def find_journal(given: str, directory: str, kinds: tuple[str, ...]) -> tuple[str, bool]:
    """The journal `given` names (see the module doc): its path, and whether it was found in the
    journal directory by an id or LAST (then the caller says which file it is). WriteRefused when
    none is found, or an id names several."""
    text = given.strip()
    if text.upper() == LAST:
        return newest(directory, kinds), True
    path = journal_path(text)
    if "/" in path or os.path.lexists(path) or not path:
        return path, False
    names = _names(directory)
    if path in names or f"{path}.jsonl" in names:
        return os.path.join(directory, path if path in names else f"{path}.jsonl"), True
    lowered = path.lower()
    found = [name for name in names if id_of(name) == lowered]
    if len(found) == 1:
        return os.path.join(directory, found[0]), True
    if found:
        raise WriteRefused(f"{len(found)} journals in {directory} end in {path}: name one by its path "
                           f"({', '.join(sorted(found)[:3])})")
    raise WriteRefused(f"no journal {path!r} in {directory}: name a journal by its path, the id its name "
                       f"ends with, or {LAST}")


#: The journals this session has written, oldest first (writing.journal.Journal adds each).
WRITTEN_HERE: list[str] = []


def written_here(path: str) -> None:
    """Note that this session wrote the journal at `path` (LAST takes its own first)."""
    WRITTEN_HERE.append(os.path.realpath(path))


def whose(path: str) -> str:
    """How a journal LAST found is said: this session's, or another's with the time it was
    written (UTC, from its name)."""
    if os.path.realpath(path) in WRITTEN_HERE:
        return "this session's newest"
    stamp = re.search(r"-(\d{4})(\d\d)(\d\d)T(\d\d)(\d\d)(\d\d)-", os.path.basename(path))
    when = f", written {'-'.join(stamp.groups()[:3])} {':'.join(stamp.groups()[3:])} UTC" if stamp else ""
    return f"not this session's: this session wrote none; your newest in the directory{when}"


def _own_newest(directory: str, kinds: tuple[str, ...]) -> str | None:
    here = os.path.realpath(directory)
    for path in reversed(WRITTEN_HERE):
        name = os.path.basename(path)
        if os.path.dirname(path) == here and name.startswith(tuple(f"{kind}-" for kind in kinds)) \
                and os.path.isfile(path):
            return path
    return None


def newest(directory: str, kinds: tuple[str, ...]) -> str:
    """The journal of one of `kinds` this session wrote last in `directory`; else (a session that
    wrote none) the one (file or Spark run directory) changed last there, the user's own;
    WriteRefused when there is none."""
    own = _own_newest(directory, kinds)
    if own is not None:
        return own
    best: tuple[float, str] | None = None
    for name in _names(directory):
        if not name.startswith(tuple(f"{kind}-" for kind in kinds)) or name.startswith("."):
            continue
        try:
            st = os.lstat(os.path.join(directory, name))
        except OSError:
            continue
        whole = stat.S_ISREG(st.st_mode) and name.endswith(".jsonl") or stat.S_ISDIR(st.st_mode)
        if not whole or st.st_uid != os.geteuid():
            continue
        if best is None or (st.st_mtime, name) > best:
            best = (st.st_mtime, name)
    if best is None:
        what = " or ".join(kinds)
        raise WriteRefused(f"{LAST}: no journal of an {what} in {directory}" if what[0] in "aeiou" else
                           f"{LAST}: no journal of a {what} in {directory}")
    return os.path.join(directory, best[1])


def own_journals(directory: str, kind: str, table: str, most: int, named: Callable[[str], object],
                 skip: frozenset[str] = frozenset()) -> list[str]:
    """The paths of `table`'s (KS.TABLE) journals of `kind` in `directory` whose names `named` takes,
    the user's own regular files, newest first, `most` at most; `skip`: real paths left out."""
    prefixes = name_prefixes(kind, table)
    found: list[tuple[float, str]] = []
    try:
        with os.scandir(directory) as entries:
            for entry in entries:
                if not (entry.name.startswith(prefixes) and named(entry.name)):
                    continue
                try:
                    st = entry.stat(follow_symlinks=False)
                except OSError:
                    continue
                path = os.path.join(directory, entry.name)
                if entry.is_file(follow_symlinks=False) and st.st_uid == os.geteuid() and \
                        os.path.realpath(path) not in skip:
                    found.append((st.st_mtime, path))
    except OSError:
        return []
    return [path for _, path in sorted(found, reverse=True)[:most]]


def _names(directory: str) -> list[str]:
    try:
        with os.scandir(directory) as entries:
            names = []
            for entry in entries:
                names.append(entry.name)
                if len(names) >= MAX_NAMES:
                    break
            return names
    except OSError:
        return []


def sealed_journals(directory: str) -> int:
    """How many journals in `directory` were sealed with a key (their first line carries a MAC):
    a key gone missing would leave them unverifiable. Only their first bytes are read."""
    count = 0
    for name in _names(directory):
        path = os.path.join(directory, name)
        if os.path.isdir(path) and not os.path.islink(path):
            parts = sorted(n for n in _names(path) if n.endswith(".jsonl"))[:1]
            count += any(_sealed(os.path.join(path, part)) for part in parts)
        elif name.endswith(".jsonl"):
            count += _sealed(path)
    return count


def _sealed(path: str) -> bool:
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return False
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return False
        head = os.read(fd, 1 << 16).split(b"\n", 1)[0]
    except OSError:
        return False
    finally:
        os.close(fd)
    return head.startswith(b'{"journal": "cqlsh-ext write journal"') and b', "mac": "' in head
