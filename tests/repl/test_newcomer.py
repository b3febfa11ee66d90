"""What a new user tripped on (issue 86), read on the screen of the real shell at 80 columns: HELP's
lines whole, a topic of two words meant by one, a missing credentials file said as such, the
dictionary ADVISE saved named on its first page with the REWRITE that uses it, an UNDO of an edit
already undone said so, and a result's closing line after a pager quit early."""

from __future__ import annotations

import re

import pytest
from own_process import in_own_process
from shell_runner import CQLSH_EXT, run

from cqlsh_ext.edit.help import DELETE_SEE_ALSO, UPDATE_SEE_ALSO

from .terminal import Term, lines_read

COLS = 80


def _words(lines: list[str]) -> str:
    return " ".join(" ".join(lines).split())


def _message(screen: list[str], start: str) -> list[str]:
    """The lines of the message that begins with `start` (its continuations indented)."""
    lines = lines_read(screen, COLS)
    first = max(i for i, line in enumerate(lines) if line.startswith(start))
    shown = [lines[first]]
    for line in lines[first + 1:]:
        if not line.startswith("    "):
            break
        shown.append(line)
    return shown


def test_help_s_lines_are_whole_words_and_its_web_address_one_line(term):
    # After HELP DELETE the hint read 'HEL' / 'P EDIT', after HELP UPDATE 'condi' / 'tioned', and
    # cqlsh's help URL broke after 'https://'.
    t = term(env={"PAGER": ""}, rows=40, cols=COLS)
    t.prompt()
    for topic, line in (("DELETE", DELETE_SEE_ALSO), ("UPDATE", UPDATE_SEE_ALSO)):
        t.run(f"HELP {topic}", until=re.escape(line.split()[-1]) + r"\n")
        t.prompt()
        screen = t.display()
        shown = _message(screen, line.split()[0])
        assert all(len(row) <= COLS for row in screen)
        assert _words(shown) == " ".join(line.split()), shown  # every word whole
        lines = lines_read(screen, COLS)
        [url] = [line.strip() for line in lines if f"#{topic.lower()}Stmt" in line]
        assert re.fullmatch(rf"https://cassandra\.apache\.org/\S+#{topic.lower()}Stmt", url), lines
    t.exit()


def test_help_of_one_word_of_a_two_word_topic_names_the_topic(term):
    t = term(env={"PAGER": ""}, rows=40, cols=COLS)
    t.prompt()
    for typed, meant in (("STATS", "COMPRESSION STATS"), ("ADVISE", "COMPRESSION ADVISE"),
                         ("ADVSIE", "COMPRESSION ADVISE")):
        t.run(f"HELP {typed}", until=re.escape(f"*** No help on {typed} (did you mean {meant}?)"))
        t.prompt()
    t.exit()


def test_a_credentials_file_that_is_not_there_is_said_so(cassandra, home, tmp_path):
    # A wrong --credentials path read as 'the server needs a user name and password' (cqlsh reads
    # no file and logs in without it): the file is named, before any connection.
    missing = tmp_path / "no-such-dir" / "credentials"
    line = f"cqlsh-ext: error: --credentials: credentials file {missing}: no such file"
    piped = run(CQLSH_EXT, [cassandra.host, str(cassandra.port), "--credentials", str(missing)], home)
    assert piped.returncode == 2 and piped.stderr.splitlines() == [line], piped.stderr
    t = Term([cassandra.host, str(cassandra.port), "--credentials", str(missing)], home, rows=24, cols=COLS)
    try:
        assert t.finish() == 2
        shown = _message(t.display(), "cqlsh-ext: error:")
        assert _words([row.strip() for row in shown]) == line, shown
        assert not any("needs a user name" in row for row in t.display())
    finally:
        t.close()


@pytest.fixture(scope="module")
def orders(cassandra) -> str:
    """A table of 300 snappy JSON orders to ADVISE on, one of 2,000 to page through, and a zstd
    value to edit and undo."""
    import json

    import snappy
    import zstandard

    ks = cassandra.create_keyspace("newcomer")
    session = cassandra.session(ks)
    session.execute("CREATE TABLE orders (id int PRIMARY KEY, data blob)")
    insert = session.prepare("INSERT INTO orders (id, data) VALUES (?, ?)")
    for i in range(300):
        doc = {"orderId": f"ORD-{i:07d}", "status": ("PAID", "NEW", "SHIPPED")[i % 3],
               "items": [{"sku": f"SKU-{(i * 7 + k) % 97:05d}", "qty": k + 1} for k in range(i % 5 + 1)]}
        session.execute(insert, (i, snappy.compress(json.dumps(doc).encode())))
    from cassandra.concurrent import execute_concurrent_with_args

    session.execute("CREATE TABLE many (id int PRIMARY KEY, data blob)")  # 2,000 rows, as the issue's
    execute_concurrent_with_args(session, session.prepare("INSERT INTO many (id, data) VALUES (?, ?)"),
                                 [(i, snappy.compress(json.dumps({"n": i, "status": "PAID"}).encode()))
                                  for i in range(2000)], concurrency=50)
    session.execute("CREATE TABLE docs (id int PRIMARY KEY, data blob)")
    session.execute("INSERT INTO docs (id, data) VALUES (1, %s)",
                    (zstandard.ZstdCompressor().compress(b'{"status": "NEW", "total": 12}'),))
    session.shutdown()
    return ks


def test_advise_names_the_dictionary_it_saved_on_its_first_page(term, orders, tmp_path):
    # The saved dictionary's ID was on the pager's last page only, and the REWRITE it leads to needs
    # it: it is on the first screen now, with that REWRITE, as the pager shows it.
    saved = tmp_path / "orders.dict"
    t = term("-k", orders, rows=24, cols=COLS)  # the default pager, less
    t.prompt()
    t.run(f"COMPRESSION ADVISE SELECT data FROM orders SAVE DICTIONARY '{saved}';",
          until=r"Dictionary saved")
    t.expect(r"(?s)\n:|\(END\)")  # the pager's first page, drawn
    data = saved.read_bytes()
    dict_id = int.from_bytes(data[4:8], "little")
    screen = t.display()
    said = _words(lines_read(screen, COLS))
    assert f"zstd dictionary ID {dict_id}" in said, screen
    assert f"COMPRESSION REWRITE {orders}.orders.data AS 'zstd:dict={dict_id}'" in said, screen
    t.type("q")
    t.prompt()
    t.exit()


def test_undo_of_an_edit_already_undone_says_so_and_what_undoes_that(term, orders, cassandra):
    # UNDO LAST on an edit already undone said '1 row ... to write back', then '0 still as the edit
    # wrote them', then 'add CONFIRM to write them back', never that it was undone.
    t = term("-k", orders, rows=40, cols=COLS)
    t.prompt()
    t.run("UPDATE docs SET data.status = 'PAID' WHERE id = 1 CONFIRM;",
          until=r"Undo: UNDO '[0-9a-f]{8}' CONFIRM")
    t.prompt()
    said = t.run("UNDO LAST CONFIRM;", until=r"Undo the undo: UNDO '[0-9a-f]{8}' CONFIRM")
    [undo_id] = re.findall(r"Undo the undo: UNDO '([0-9a-f]{8})' CONFIRM", said)
    t.prompt()
    t.run("UNDO LAST;", until=r"Nothing (?:written|to write back)[^\n]*\n")
    t.prompt()
    lines = lines_read(t.display(), COLS)
    at = max(i for i, line in enumerate(lines) if line.startswith("undo: already undone:"))
    first = _words([lines[at], *(line for line in lines[at + 1:at + 3] if line.startswith("    "))])
    assert first.startswith(f"undo: already undone: UNDO '{undo_id}' wrote 1 row of the edit back at "), first
    assert f"Undo the undo: UNDO '{undo_id}' CONFIRM" in lines, lines  # whole, on its own row
    assert "Nothing to write back: no row holds what the edit wrote." in lines, lines
    assert not any("add CONFIRM to write them back" in line for line in lines[at:]), lines
    # The undo undone: the edit's values are back, and UNDO LAST writes them back again.
    t.run(f"UNDO '{undo_id}' CONFIRM;", until=r"1 row written back\.")
    t.prompt()
    again = t.run("UNDO LAST;", until=r"Write 1 row back\? \[y/N\]")
    assert "already undone" not in again, again
    t.type("n")
    t.enter()
    t.prompt()
    t.exit()


@pytest.mark.parametrize("statement", [
    "SELECT id, data FROM many",
    "SELECT id, data.n FROM many WHERE data.status = 'PAID' ALLOW FILTERING"])
def test_a_result_whose_pager_is_quit_early_still_ends_with_a_closing_line(term, orders, statement):
    # Quitting the pager of a 2,000-row result on its first page left no closing line at all, where
    # the docs promise one after the pager however early it is quit.
    t = term("-k", orders, rows=24, cols=COLS)  # the default pager, less
    t.prompt()
    t.type(statement + ";")
    t.enter()
    t.expect(r"\n:")  # the pager's first page
    t.type("q")
    found = t.expect(r"\(([\d,]+) rows read when the pager was quit: the rest were not fetched\)")
    assert 0 < int(found.group(1).replace(",", "")) < 2000
    t.prompt()
    screen = lines_read(t.display(), COLS)
    at = max(i for i, line in enumerate(screen) if "rows read when the pager was quit" in line)
    assert re.match(r"\S*cqlsh:\w+>", screen[at + 1] if "payload query" not in screen[at + 1]
                    else screen[at + 2]), screen  # under the pager, just above the prompt
    t.exit()


def test_rewrite_s_preview_says_its_time_is_the_least_at_80_columns(term, orders):
    # The preview said 14 s, and the progress line at 26 % '~32 s left': the time at the PACE is
    # the least the run takes, and the preview says so; "storing them 703.0 KiB less each month"
    # says the space the rows take.
    t = term("-k", orders, env={"PAGER": ""}, rows=40, cols=COLS)
    t.prompt()
    t.run(f"COMPRESSION REWRITE {orders}.orders.data AS 'zstd' PACE 100;",
          until=r"Rewrite 300 rows\? \[y/N\]")
    t.type("n")
    t.enter()
    t.expect(r"Nothing written")
    t.prompt()
    screen = t.display()
    assert all(len(row) <= COLS for row in screen)
    said = _words(screen)
    assert re.search(r"at PACE 100: \d+ s at the least \([\d,]+ write units at 100 a second; reading the "
                     r"rows and a slower cluster add to it\)", said), screen
    assert re.search(r"stored, they take [\d.]+ [KM]?i?B (?:less|more) space", said), screen
    assert "each month" not in said
    t.exit()


@in_own_process
def test_a_ctrl_c_before_the_prompt_starts_is_never_the_next_statement_s():
    # Pressed as a statement's last lines are written (a COMPRESSION STATS finishing), before the
    # next prompt has started, a Ctrl-C was taken as pressed after the next statement's Enter: that
    # statement, typed afterwards, was cancelled unasked. The prompt's own handler, on a real signal.
    import signal

    from cqlsh_ext.repl.app import _PromptSigint

    before = signal.getsignal(signal.SIGINT)
    sigint = _PromptSigint()  # installed as the loop installs it, before prompt() starts
    try:
        signal.raise_signal(signal.SIGINT)
    finally:
        pressed = sigint.restore()
    assert not pressed  # the statement typed at that prompt runs
    sigint = _PromptSigint()
    sigint.prompt_started()  # the prompt ran, and took Enter: a press now is the statement's
    try:
        signal.raise_signal(signal.SIGINT)
    finally:
        pressed = sigint.restore()
    assert pressed  # cancelled before it starts, as ever
    assert signal.getsignal(signal.SIGINT) is before
