"""The statements a write tells its user to run fit on one line of an 80-column terminal and paste
as one statement (issue 77, 1), in the real interactive shell on the real server, read on the
screen a person sees (tests/repl/terminal.py): an edit's `Undo:` hint names its journal by the id
its file name ends with, and pasted (bracketed paste, as a terminal sends a paste) it runs the
UNDO; the old hint, a long path wrapped over three lines as a narrow screen shows it, pasted, runs
as one statement too (never a preview and then `CONFIRM` alone)."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
import zstandard

from cqlsh_ext.common.text import message

#: What a terminal sends around a paste when the program asked for bracketed paste.
PASTE_START, PASTE_END = "\x1b[200~", "\x1b[201~"
TABLE = "orders_kept_with_a_rather_long_table_name"


@pytest.fixture(scope="module")
def ks(cassandra) -> str:
    name = cassandra.create_keyspace("pasted_hints")
    s = cassandra.session(name)
    s.execute(f"CREATE TABLE {TABLE} (id int PRIMARY KEY, data blob)")
    s.execute(f"INSERT INTO {TABLE} (id, data) VALUES (1, %s)",
              (zstandard.ZstdCompressor().compress(json.dumps({"status": "NEW"}).encode()),))
    s.shutdown()
    return name


def stored(cassandra: Any, ks: str) -> bytes:
    s = cassandra.session(ks)
    try:
        return bytes(s.execute(f"SELECT data FROM {TABLE} WHERE id = 1").one().data)
    finally:
        s.shutdown()


def test_the_undo_hint_fits_one_line_at_80_columns_and_pasted_runs_the_undo(cassandra, ks, tmp_path) -> None:
    from repl.terminal import Term

    original = stored(cassandra, ks)
    t = Term([*cassandra.cqlsh_args, "-k", ks, "--no-color"], tmp_path, rows=40, cols=80)
    try:
        t.prompt()
        t.run(f"UPDATE {TABLE} SET data.status = 'DONE' WHERE id = 1 CONFIRM;",
              until=r"Undo: UNDO '[0-9a-f]{8}' CONFIRM\n")
        t.prompt()
        screen = t.display()
        print("\n".join(screen))
        at = max(i for i, row in enumerate(screen) if row.startswith("Undo: "))
        hint = screen[at]
        assert re.fullmatch(r"Undo: UNDO '[0-9a-f]{8}' CONFIRM", hint), screen  # whole, on one row
        assert not screen[at + 1].startswith(" "), screen  # nothing of it on the next row
        assert stored(cassandra, ks) != original
        t.type(PASTE_START + hint.removeprefix("Undo: ") + ";" + PASTE_END)
        t.enter()
        t.expect(r"1 row written back\.")
        t.prompt()
        assert stored(cassandra, ks) == original
        # The old hint's shape: the journal's whole absolute path (its home not yet spelt ~),
        # wrapped at 80 columns over three lines.
        said = t.run(f"UPDATE {TABLE} SET data.status = 'AGAIN' WHERE id = 1 CONFIRM;",
                     until=r"Undo: UNDO '[0-9a-f]{8}' CONFIRM\n")
        t.prompt()
        path = re.search(r"Journal:\s+(.+?\.jsonl)", said, re.DOTALL).group(1)  # type: ignore[union-attr]
        path = re.sub(r"^~", str(tmp_path), re.sub(r"\n[ \t]*", "", path))
        wrapped = message(f"UNDO '{path}' CONFIRM", 80)
        assert wrapped.count("\n") >= 2 and wrapped.splitlines()[-1].strip() == "CONFIRM", wrapped
        t.type(PASTE_START + wrapped + ";" + PASTE_END)
        t.enter()
        t.expect(r"1 row written back\.")
        t.prompt()
        assert "no viable alternative" not in t.text and "Write 1 row back?" not in t.text
        assert stored(cassandra, ks) == original
    finally:
        t.close()
