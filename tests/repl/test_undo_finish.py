"""An UNDO stopped by Ctrl-C, and the same UNDO run again to finish it, in the interactive shell on an
80-column terminal (pyte): the load Ctrl-C'd part-way counts the rows it wrote, and its UNDO counts
as many; the stopped UNDO prints the statement that finishes it; finishing says first how many
its journal says were written back, and at its end what it found already restored, one counted line,
then what it wrote back (the counts add up), not a line a row; the table is then as it was before
the load. The server answers the table's reads and writes late while the UNDO runs (its fault
handler: a faults_* keyspace), so that Ctrl-C lands part-way; each press waits for the journal's
count, never for a time."""

from __future__ import annotations

import json
import re
from pathlib import Path

import zstandard
from waiting import wait_until

#: How late each read and write of the table is (ms) while the first UNDO runs: its second window
#: of cells (the first one's outcomes are what the test waits for) lasts long enough to be pressed in.
DELAY_MS = 100


def applied(home: Path, kind: str) -> int:
    """Writes applied so far, by the newest journal of `kind` (load, undo) in HOME's journal directory."""
    found = sorted((home / ".cassandra" / "journal").glob(f"{kind}-*.jsonl"), key=lambda p: p.stat().st_mtime)
    return found[-1].read_text().count('"applied": true') if found else 0


def screen_text(t) -> str:  # type: ignore[no-untyped-def]
    """What the statements printed, lines joined as the 80-column screen wrapped them."""
    return " ".join(t.text.split())


def test_an_interrupted_undo_names_its_finish_and_finishing_it_is_a_summary(term, cassandra, home, tmp_path):
    ks = cassandra.create_keyspace("faults_undo_finish")  # faults_*: the fault handler applies
    session = cassandra.session(ks)
    session.execute("CREATE TABLE orders_slow (id int PRIMARY KEY, data blob, note text)")
    insert = session.prepare("INSERT INTO orders_slow (id, data, note) VALUES (?, ?, ?)")
    for i in range(0, 3000, 7):  # a row in seven there before: overwritten, then written back
        session.execute(insert, (i, zstandard.ZstdCompressor().compress(b'{"old": true}'), f"old {i}"))
    before = {r.id: (r.data, r.note) for r in session.execute("SELECT id, data, note FROM orders_slow")}
    path = tmp_path / "orders.jsonl"
    path.write_text("".join(json.dumps({"id": i, "data": {"i": i}, "note": f"n{i}"}) + "\n"
                            for i in range(3000)))
    t = term("-k", ks, env={"PAGER": ""}, rows=24, cols=80)
    t.prompt()
    t.type(f"COPY orders_slow (id, data, note) FROM '{path}' WITH ENCODE data = 'zstd>json' PACE 300 "
           "CONFIRM;")
    t.enter()
    wait_until(lambda: t.display() and applied(home, "load") >= 600,
               "600 cells of the load written; the screen:\n" + "\n".join(t.display()))
    t.ctrl("c")
    loaded = t.expect(r"([\d,]+)\s+rows?\s+written\s+\(([\d,]+)\s+new,\s+([\d,]+)\s+overwritten\)")
    written, new, overwritten = (int(g.replace(",", "")) for g in loaded.groups())
    assert 0 < written < 3000 and new + overwritten == written, loaded.group(0)
    undo = t.expect(r"Undo: (UNDO '\w+' CONFIRM)").group(1)
    t.prompt()
    cassandra.faults.set("delay", -1, DELAY_MS, table=".*_slow")
    try:
        start = len(t.text)
        t.type(undo + ";")
        t.enter()
        wait_until(lambda: t.display() and applied(home, "undo") >= 100, "100 cells written back")
        t.ctrl("c")
        t.expect(r"Finish it: UNDO '\w+' CONFIRM")
        t.prompt()
    finally:
        cassandra.faults.clear()
    stopped = t.text[start:]
    counted = re.search(r"undo:\s+([\d,]+)\s+cells\s+of", stopped)
    assert counted and int(counted.group(1).replace(",", "")) == 2 * written, stopped[-3000:]
    assert f"Finish it: {undo}" in stopped, stopped[-3000:]
    back_before = applied(home, "undo")
    start = len(t.text)
    t.type(undo + ";")
    t.enter()
    t.expect(r"cells\s+written\s+back")
    t.prompt()
    finished = t.text[start:]
    # It says first what it will do, never that the journal was undone already (a refusal's words).
    said = " ".join(finished.split()).rsplit(f"{undo};", 1)[1].strip()  # (after the statement, as drawn)
    first = (rf"finishing {re.escape(undo.removesuffix(' CONFIRM'))}: it wrote back {back_before:,} of the "
             rf"{2 * written:,} cells of \S+ \([^)]*\) before it stopped; the others to write back ")
    assert re.match(first, said), said[:400]
    assert "already undone" not in finished and "Undo the undo" not in finished.split("written back")[0], \
        finished[-3000:]
    # the summary says it once, not a line a row
    assert " ".join(finished.split()).count("already restored") == 1, finished[-3000:]
    # what was written back before, one counted line; then what this run wrote back
    summary = re.search(r"([\d,]+) cells already restored \(they hold the value from before the "
                        r"load\): nothing written to them\. ([\d,]+) cells written back\.",
                        " ".join(finished.split()))
    assert summary, finished[-3000:]
    restored, back = (int(x.replace(",", "")) for x in summary.groups())
    assert 0 < back and 0 < restored and back + restored == 2 * written and restored == back_before, \
        finished[-3000:]
    after = {r.id: (r.data, r.note) for r in session.execute("SELECT id, data, note FROM orders_slow")}
    assert after == before
    assert max(len(row) for row in t.display()) <= 80
    session.shutdown()
    assert t.exit() == 0
