"""DESCRIBE PAYLOAD in the interactive shell, as a person uses it: Enter runs it (a DESCRIBE ends at
its line), the report is read on the rendered screen of an 80- and a 140-column terminal and fits
it, Tab completes the statement, key completion then offers what the report found, and DESC
PAYLOAD alone stays cqlsh's."""

from __future__ import annotations

import json
import re

import pytest

SIZES = [(80, 24), (140, 45)]
#: One partition of ROWS documents in clustering order; only the last has `rareKey`, so key
#: completion's sample (the first 100 rows) never sees it.
ROWS = 150


def document(i: int) -> dict:
    doc = {"status": ["NEW", "PAID", "SHIPPED"][i % 3], "amount": i,
           "customer": {"tier": "gold", "instructions": "Gift wrap, no invoice in the box please."}}
    if i == ROWS - 1:
        doc["rareKey"] = "only here"
    return doc


@pytest.fixture(scope="module")
def describe_ks(cassandra) -> str:
    import snappy

    ks = cassandra.create_keyspace("describerepl")
    session = cassandra.session(ks)
    session.execute("CREATE TABLE t (pk int, ck int, data blob, note text, PRIMARY KEY (pk, ck))")
    insert = session.prepare("INSERT INTO t (pk, ck, data, note) VALUES (0, ?, ?, 'n')")
    for i in range(ROWS):
        session.execute(insert, (i, snappy.compress(json.dumps(document(i)).encode())))
    session.shutdown()
    return ks


def screen(t) -> str:
    return "\n".join(t.display())


@pytest.mark.parametrize(("cols", "lines"), SIZES)
def test_the_report_on_the_screen(term, describe_ks, cols, lines):
    t = term("-k", describe_ks, env={"PAGER": ""}, rows=lines, cols=cols)
    t.prompt()
    # No ';': a DESCRIBE ends at the end of its line, Enter runs it.
    out = t.run(f"DESCRIBE PAYLOAD {describe_ks}.t.data", until=r"rareKey[^\n]*\n")
    t.prompt()
    # The report, from its first line (the progress line before it is drawn over on the screen).
    heading = list(re.finditer(rf"DESCRIBE PAYLOAD {describe_ks}\.t\.data: every row", t.text))[-1]
    out = t.text[heading.start():]
    out = out[:out.index("cqlsh:")]
    wide = [line for line in out.splitlines() if len(line) > cols]
    assert not wide and len(out.splitlines()) > 10, wide
    how_sure = "(confident|likely|guessed)"
    assert re.search(rf"^\s+snappy>json\s+text\s+{how_sure}\s+150\s+100\.0 %$", out, re.MULTILINE), out
    assert re.search(r"^\s+status\s+100\.0 %\s+string, values \"NEW\": 50,", out, re.MULTILINE), out
    assert re.search(r"^\s+rareKey\s+0\.7 %\s+string, values \"only here\": 1", out, re.MULTILINE), out
    assert re.search(r"^\s+amount\s+100\.0 %\s+integer,", out, re.MULTILINE), out
    # A long string value is cut inside its quotes: one mark, the closing quote kept.
    cut = r"^\s+instructions\s+100\.0 %\s+string,\s+values \"Gift wrap, no invoice in the…\": 150,"
    assert re.search(cut, out, re.MULTILINE), out
    # What the screen shows is the same text: no row of the report was broken by the terminal.
    shown = screen(t)
    assert re.search(r"^\s+tier\s+100\.0 %\s+string, values \"gold\": 150, length 4\s*$", shown,
                     re.MULTILINE), shown


def test_tab_completes_it_and_key_completion_reads_the_report(term, describe_ks):
    t = term("-k", describe_ks, env={"PAGER": ""}, rows=40, cols=140)
    t.prompt()
    t.type(f"DESC PAYLOAD {describe_ks}.t.")
    t.type("\t")  # the table's payload columns: the blob and the text, not the keys
    t.expect(r"note")
    menu = screen(t)
    assert re.search(r"(^|\s)data\s", menu) and not re.search(r"(^|\s)ck\s", menu), menu
    t.ctrl("u")
    # Before: the keys of the first 100 rows only (key completion's sample).
    t.type("SELECT data. FROM t WHERE pk = 0;")
    t.ctrl("a")
    t.type("\x06" * len("SELECT data."))
    t.type("\t")
    t.expect(r"customer")
    assert "rareKey" not in screen(t)
    t.type("\x1b")  # close the menu
    t.ctrl("e")
    t.ctrl("u")
    t.run(f"DESCRIBE PAYLOAD {describe_ks}.t.data", until=r"rareKey[^\n]*\n")
    t.prompt()
    # After: the keys the report found, the last row's included.
    t.type("SELECT data. FROM t WHERE pk = 0;")
    t.ctrl("a")
    t.type("\x06" * len("SELECT data."))
    t.type("\t")
    t.expect(r"rareKey")


def test_desc_payload_alone_is_cqlsh_s(term, describe_ks):
    t = term("-k", describe_ks, env={"PAGER": ""}, rows=24, cols=100)
    t.prompt()
    out = t.run("DESC PAYLOAD", until=r"'payload' not found[^\n]*")  # cqlsh's answer: an object named payload
    assert "DESCRIBE PAYLOAD" not in out
