"""The prompt_toolkit shell in a pseudo-terminal, used as a person uses it, against the real Cassandra."""

from __future__ import annotations

import json
import os
import re
import stat
from pathlib import Path

import pytest

from .proxy import SlowProxy
from .terminal import TIMEOUT, write_script


def test_partial_words_are_completed(term, repl_ks):
    t = term()
    t.prompt()
    # Tab right after typing: completion happens in key order, whatever the as-you-type menu does.
    t.type("sel\t* fr\t")
    t.type(repl_ks[:-3] + "\t")  # the keyspace, completed with its dot
    t.type("ord\t")  # the table
    t.type("WHERE id = 7;")
    t.enter()
    t.expect(r"customer-07")
    t.expect(r"\(1 rows\)")
    # What was run is what the completions made of the partial words.
    assert f"SELECT * FROM {repl_ks}.orders WHERE id = 7;" in t.text


def test_completion_menu_offers_columns_and_hints(term, repl_ks):
    t = term()
    t.prompt()
    t.type(f"SELECT * FROM {repl_ks}.orders WHERE ")
    t.type("\t")  # the menu: the partition key, and TOKEN(
    t.expect(r"\bid\b")
    t.ctrl("c")
    t.prompt()
    t.type(f"SELECT * FROM {repl_ks}.orders WHERE id = ")
    t.type("\t")  # only hints are possible here: shown, nothing inserted
    t.expect(r"<wholenumber>.*expected")


def test_tab_in_a_quoted_name_takes_the_name_spelt_as_typed(term, cassandra):
    # cqlsh offers names whatever their case; in a quoted name case counts, and Tab takes the menu's
    # first: `USE "Tab123` became `USE "tab123_...` (sorted first), another keyspace.
    typed = f"Tab{os.getpid()}"  # no other keyspace starts so, whatever the case
    cassandra.create_keyspace(typed.lower())  # tab123_123_1: sorted before Tab123Z_123 by its letters
    mixed = f"{typed}Z_{os.getpid()}"
    session = cassandra.session()
    session.execute(f'CREATE KEYSPACE "{mixed}" WITH replication = '
                    "{'class': 'SimpleStrategy', 'replication_factor': 1}")
    session.shutdown()
    t = term()
    t.prompt()
    t.type(f'USE "{typed}\t\t')  # the menu, then its first entry
    t.type('";')
    t.enter()
    assert t.expect(r"cqlsh:(\w+)>").group(1) == mixed  # (before: tab123_123_1)
    t.exit()


def test_multi_line_statement_runs_when_complete(term, repl_ks, home):
    t = term()
    t.prompt()
    t.type("SELECT id, customer")
    t.expect(r"end the statement with ;")  # the toolbar says what is missing
    t.enter()  # not complete: a new line, not a run
    t.expect(r"\.\.\.")
    t.type(f"FROM {repl_ks}.orders")
    t.enter()
    t.expect(r"\.\.\.")
    t.type("WHERE id IN (3, 4);")
    t.enter()
    t.expect(r"customer-03")
    t.expect(r"\(2 rows\)")
    assert t.exit() == 0
    history = (home / ".cassandra" / "cqlsh_ext_history").read_text()
    # One entry of three lines, as typed.
    assert f"+SELECT id, customer\n+FROM {repl_ks}.orders\n+WHERE id IN (3, 4);\n" in history


def test_quoted_semicolons_and_batches_wait_for_the_real_end(term, repl_ks):
    t = term()
    t.prompt()
    t.type(f"BEGIN BATCH INSERT INTO {repl_ks}.notes (id, body) VALUES (1, 'a;b');")
    t.enter()  # inside a batch: not finished
    t.expect(r"\.\.\.")
    t.type("APPLY BATCH;")
    t.enter()
    t.prompt()
    t.run(f"SELECT body FROM {repl_ks}.notes WHERE id = 1;")
    assert "a;b" in t.text


def test_a_pasted_statement_of_1_mib_is_refused_in_one_line_and_the_shell_goes_on(term, repl_ks):
    # An IN list of the key 1 (a token a byte), pasted as a terminal pastes (bracketed): measured,
    # not lexed by cqlsh at each keystroke and again at Enter (toolbar, completion, highlighting),
    # then refused in one line. The text is written as the terminal takes it, the screen read between.
    from cqlsh_ext.cql import grammar_bounds

    head = f"SELECT * FROM {repl_ks}.orders WHERE id IN ("
    pasted = head + ",".join(["1"] * ((grammar_bounds.STATEMENT_BYTES - len(head)) // 2 - 8)) + ");"
    assert grammar_bounds.STATEMENT_BYTES - 100 < len(pasted) < grammar_bounds.STATEMENT_BYTES
    t = term()
    t.prompt()
    t.paste(pasted)
    t.enter()
    refused = t.expect(r"Statement refused: ([\d,]+) tokens \(([\d,]+) commas\), more than the shell reads")
    assert int(refused.group(2).replace(",", "")) == pasted.count(",")
    t.prompt()
    t.run(f"SELECT id FROM {repl_ks}.orders WHERE id = 7;")  # the shell goes on
    assert t.exit() == 0


def test_ctrl_c_clears_the_input_and_ctrl_d_exits(term):
    t = term()
    t.prompt()
    t.type("SELECT this is not valid")
    t.ctrl("c")
    t.prompt()
    t.run("SELECT release_version FROM system.local;")
    assert "SyntaxException" not in t.text
    assert t.exit() == 0


def test_ctrl_c_cancels_a_slow_query_and_the_shell_goes_on(term, cassandra):
    with SlowProxy(cassandra.host, cassandra.port) as proxy:
        t = term(port=proxy.port)
        t.prompt()
        proxy.hold()  # from now on the server "takes" as long as the test wants
        t.type("SELECT * FROM system.local;")
        t.enter()
        assert proxy.has_held(TIMEOUT), "the statement never reached the server"
        t.ctrl("c")
        t.expect(r"Cancelled\.")
        t.prompt()
        proxy.release()
        t.run("SELECT cluster_name FROM system.local;", until=r"\(1 rows\)")
        assert t.exit() == 0


def test_request_timeout_is_one_line_and_the_shell_goes_on(term, cassandra):
    with SlowProxy(cassandra.host, cassandra.port) as proxy:
        t = term("--request-timeout", "2", port=proxy.port)
        t.prompt()
        proxy.hold()
        out = t.run("SELECT * FROM system.local;", until=r"OperationTimedOut[^\n]*\n")
        assert out.strip().splitlines()[-1].startswith("OperationTimedOut")
        proxy.release()
        t.run("SELECT cluster_name FROM system.local;", until=r"\(1 rows\)")


def test_history_is_recalled_searched_and_never_holds_passwords(term, cassandra, home):
    role = f"hist_{os.getpid()}"
    secret = "Sekr3t-" + role
    t = term()
    t.prompt()
    t.run("SELECT release_version FROM system.local;")
    t.run(f"CREATE ROLE IF NOT EXISTS {role} WITH PASSWORD = '{secret}' AND LOGIN = true;",
          until=r"cqlsh>")
    t.run(f"ALTER ROLE {role} WITH PASSWORD = '{secret}2';", until=r"cqlsh>")
    t.run(f"LOGIN {role} '{secret}2'", until=rf"{role}@cqlsh>")
    t.run("SELECT cluster_name FROM system.local;")
    assert t.exit() == 0
    try:
        path = home / ".cassandra" / "cqlsh_ext_history"
        saved = path.read_text()
        assert "SELECT release_version FROM system.local;" in saved
        assert "SELECT cluster_name FROM system.local;" in saved
        assert secret not in saved and "PASSWORD" not in saved and "LOGIN" not in saved
        assert stat.S_IMODE(path.stat().st_mode) == 0o600
        # cqlsh's own readline history is not written by the new shell.
        assert not (home / ".cassandra" / "cqlsh_history").exists()

        t = term()
        t.prompt()
        t.type("\x1b[A\x1b[A")  # Up, Up: the release_version query, two entries back
        t.expect(r"release_version")
        t.enter()
        t.expect(r"\(1 rows\)")
        t.prompt()
        t.ctrl("r")  # reverse search
        t.type("cluster_n")
        t.expect(r"cluster_n")
        t.enter()  # take the match
        t.enter()  # run it
        t.expect(r"cluster_name\s*\n-+")
        t.prompt()
        out = t.run("HISTORY", until=r"SELECT release_version FROM system\.local;\n[\s\S]*cqlsh>")
        assert "SELECT release_version FROM system.local;" in out
        assert secret not in out
    finally:
        s = cassandra.session()
        s.execute(f"DROP ROLE IF EXISTS {role}")
        s.shutdown()


def test_pager_gets_results_taller_than_the_screen(term, repl_ks, tmp_path):
    seen = tmp_path / "pager-input.txt"
    pager = write_script(tmp_path / "pager.sh",
                         f'cat > "{seen}"\necho "pager read $(wc -l < "{seen}") lines"\n')
    t = term(env={"PAGER": str(pager)}, rows=24, cols=120)
    t.prompt()
    t.run(f"SELECT id, customer FROM {repl_ks}.orders;", until=r"pager read \d+ lines")
    text = re.sub(r"\x1b\[[0-9;]*m", "", seen.read_text())
    assert "customer-01" in text and "customer-60" in text  # every page, no ---MORE---
    assert "---MORE---" not in text
    # The closing line follows the pager, on the terminal (a pager quit early would hide it).
    assert "(60 rows)" not in text
    t.expect(r"\(60 rows\)")
    # A result that fits on the screen is printed directly.
    seen.unlink()
    t.prompt()
    t.run(f"SELECT id, customer FROM {repl_ks}.orders WHERE id = 1;")
    assert not seen.exists()


def test_without_a_pager_installed_long_results_pause_as_in_cqlsh(term, repl_ks):
    # A slim container has no less: a long result must not scroll by unread, and an explicit
    # "no pager" must not pause.
    t = term(env={"PAGER": "no-such-pager-anywhere"}, rows=24, cols=120)
    t.prompt()
    t.run("PAGING 25", until=r"Page size: 25")
    t.prompt()
    t.type(f"SELECT id, customer FROM {repl_ks}.orders;")
    t.enter()
    # 60 rows in pages of 25: a pause after the first and the second page, each until Enter.
    for _ in range(2):
        t.expect(r"---MORE---")
        assert "(60 rows)" not in t.since()
        t.enter()
    t.expect(r"\(60 rows\)")
    assert t.text.count("---MORE---") == 2
    t.exit()
    t = term(env={"PAGER": ""}, rows=24, cols=120)
    t.prompt()
    t.run("PAGING 25", until=r"Page size: 25")
    t.prompt()
    out = t.run(f"SELECT id, customer FROM {repl_ks}.orders;", until=r"\(60 rows\)")
    assert "---MORE---" not in out


def _result(out: str) -> list[str]:
    """The result's lines in `out` (from its header or first row to its row count); the echoed
    statement and the prompt's redraws before it are left out."""
    lines = out.splitlines()
    return lines[next(i for i, line in enumerate(lines) if " | " in line or line.startswith("@ Row")):]


def _widest_line(out: str) -> int:
    return max(len(line) for line in _result(out))


def test_wide_results_are_cut_to_fit_then_vertical(term, repl_ks, home):
    t = term(env={"PAGER": ""}, rows=60, cols=80)
    t.prompt()
    # Six columns fit 80 columns once the widest cells are cut: a table, every line within the screen.
    out = t.run(f"SELECT * FROM {repl_ks}.orders WHERE id IN (1, 2);")
    assert " id | customer" in out and "…" in out and "@ Row 1" not in out
    assert _widest_line(out) <= 80
    out = t.run(f"SELECT id, customer FROM {repl_ks}.orders WHERE id = 1;")  # narrow: whole cells
    assert " id | customer" in out and "…" not in out
    t.exit()
    # 40 columns cannot hold six columns even cut: vertical, values cut to the screen.
    t = term(env={"PAGER": ""}, rows=60, cols=40)
    t.prompt()
    out = t.run(f"SELECT * FROM {repl_ks}.orders WHERE id IN (1, 2);")
    assert "@ Row 1" in out and "@ Row 2" in out
    assert _widest_line(out) <= 40, [line for line in _result(out) if len(line) > 40]
    t.exit()
    (home / ".cassandra" / "cqlshrc").write_text("[cqlsh_ext]\nauto_vertical = false\n")
    t = term(env={"PAGER": ""}, rows=60, cols=40)
    t.prompt()
    out = t.run(f"SELECT * FROM {repl_ks}.orders WHERE id IN (1, 2);")
    assert "@ Row 1" not in out


def test_wrapped_cells_keep_every_character(term, repl_ks):
    t = term("--cells", "wrap", env={"PAGER": ""}, rows=60, cols=80)
    t.prompt()
    out = t.run(f"SELECT id, customer, payload FROM {repl_ks}.orders WHERE id = 3;")
    assert "…" not in "\n".join(_result(out)) and _widest_line(out) <= 80
    joined = "".join(line.split("|")[-1].strip() for line in _result(out) if "|" in line)
    assert '"order":1003' in joined.replace(" ", "") or '"order": 1003' in joined


def test_toolbar_follows_the_shell_state(term, repl_ks):
    t = term()
    t.prompt()
    t.expect(r"host \S+:\d+\s+keyspace -\s+consistency ONE\s+decompress auto\s+paging 100\s+output table")
    commands = (f"USE {repl_ks};", "CONSISTENCY QUORUM", "DECOMPRESS gzip", "PAGING OFF",
                "OUTPUT FORMAT json")
    for command in commands:
        t.type(command)
        t.enter()
        t.prompt()
    t.expect(rf"keyspace {repl_ks}\s+consistency QUORUM\s+decompress gzip\s+paging off\s+output json")


def test_output_format_command_prints_json_lines(term, repl_ks):
    t = term()
    t.prompt()
    t.run("OUTPUT FORMAT json", until=r"Output format set to JSON\.")
    t.prompt()
    line = t.run(f"SELECT id, customer, payload FROM {repl_ks}.orders WHERE id = 5;", until=r"\{\"id\".*\}\n")
    row = json.loads(line[line.index('{"id"'):])
    assert row["id"] == 5 and row["customer"] == "customer-05"
    assert row["payload"]["label"] == "gzip>json" and row["payload"]["payload"]["order"] == 1005


def test_help_lists_key_bindings(term):
    t = term(env={"PAGER": ""})
    t.prompt()
    out = t.run("HELP", until=r"Key bindings \(HELP KEYS\):[\s\S]*Ctrl-D[^\n]*\n")
    assert "Documented shell commands" in out and "OUTPUT" in out
    t.prompt()
    out = t.run("HELP KEYS", until=r"Ctrl-R[^\n]*\n")
    assert "Tab" in out


@pytest.mark.parametrize("cols", [60, 80])
def test_help_of_a_form_and_of_a_mistyped_topic_on_the_screen(term, cols):
    # HELP COMPRESSION STATS: that form's text alone, fitted to the screen; HELP INSPCT: the topic meant.
    t = term(env={"PAGER": ""}, rows=60, cols=cols)
    t.prompt()
    out = t.run("HELP COMPRESSION STATS", until=r"said so\.\n")
    assert "COMPRESSION STATS [cqlsh-ext]" in out and "COMPRESSION ADVISE" not in out
    text = out[out.index("COMPRESSION STATS [cqlsh-ext]"):].splitlines()
    assert all(len(row) <= cols for row in text), "\n".join(text)  # fitted: the terminal wrapped none
    t.prompt()
    t.run("HELP INSPCT", until=r"\*\*\* No help on INSPCT \(did you mean INSPECT\?\)")
    t.prompt()
    t.exit()


def test_help_keys_on_a_narrow_screen_puts_each_description_under_its_key(term):
    # At 40 columns the descriptions beside the 24-column keys had a word or two a row, continued at
    # other indents ('Emacs line' at column 28, 'editing' at 20). Now each is under its key.
    from cqlsh_ext.repl.keybindings import KEY_HELP

    t = term(env={"PAGER": ""}, rows=24, cols=40)
    t.prompt()
    out = t.run("HELP KEYS", until=r"fetching stops\n")
    written = out[out.index("Key bindings (HELP KEYS):"):].splitlines()[1:]
    assert all(len(row) <= 40 for row in written)
    said: dict[str, list[str]] = {}
    key = ""
    for row in written:
        indent = len(row) - len(row.lstrip())
        if indent == 2:
            key = row.strip()
            said[key] = []
        elif key.endswith(",") and not said[key]:  # a key too long for a row goes on, 4 in
            assert indent == 6, row
            del said[key]
            key = f"{key} {row.strip()}"
            said[key] = []
        else:  # its description: from 4 columns in, continued 4 further
            assert indent == (8 if said[key] else 4), row
            said[key].append(row.strip())
    assert [(k, " ".join(words)) for k, words in said.items()] == list(KEY_HELP)


@pytest.mark.parametrize(("cols", "rows"), [(80, 24), (140, 45)])
def test_help_keys_leaves_the_descriptions_room_and_wraps_them_at_words(term, cols, rows):
    from cqlsh_ext.repl.keybindings import KEY_HELP

    t = term(env={"PAGER": ""}, rows=rows, cols=cols)
    t.prompt()
    out = t.run("HELP KEYS", until=r"fetching stops\n")
    written = out[out.index("Key bindings (HELP KEYS):"):].splitlines()[1:]
    shown = [row for row in t.display() if row.startswith("  ")]  # the screen: the last of them
    assert shown and written[-len(shown):] == shown  # no line was wrapped by the terminal
    assert all(len(row) <= cols for row in written)
    # The descriptions start in one column; a key wider than it stands on a row of its own.
    column = written[0].index("run the input")
    keys: list[str] = []
    said: list[str] = []
    for row in written:
        if row[2] != " ":  # a key's row: the key, then (unless it is wider) its description
            key, gap, what = re.fullmatch(r"  (\S+(?: \S+)*)( {2,}(.*))?", row).group(1, 2, 3)
            assert gap is None or len(key) + len(gap) - len(what) + 2 == column, row
            keys.append(key)
            said.append(what or "")
        else:  # a description continued (or begun, under a key of its own row) in its column
            assert not row[:column].strip(), row
            said[-1] = f"{said[-1]} {row[column:]}".strip()
    assert keys == [key for key, _ in KEY_HELP]
    assert said == [what for _, what in KEY_HELP], said  # word for word: no word broken
    if cols >= 140:
        assert len(written) == len(KEY_HELP)  # the screen is wide enough for one row each
    else:
        assert cols - column >= 50, column  # not 35 columns beside a 43-column key column
    t.exit()


def test_classic_flag_keeps_cqlsh_readline_loop(term, home):
    t = term("--classic", cols=80)
    t.expect(r"ATTENTION: All commands will be saved")  # cqlsh's own banner, from its own loop
    t.expect(r"cqlsh> ")  # a real trailing space: printed by input(), not drawn
    # Its lines fitted to the 80 columns at words, the history file's path after a '/'.
    screen = t.display()
    banner = [row for row in screen[:screen.index(next(r for r in screen if r.startswith("Connected to")))]
              if row.strip()]
    said = " ".join(" ".join(row.split()) for row in banner)
    assert "or set 'disabled = true' in the [history] section of cqlshrc." in said, banner
    assert "for more information." in said and all(len(row) <= 80 for row in banner), banner
    t.run("SELECT release_version FROM system.local;")
    assert "\x1b[?2004h" not in t.raw  # prompt_toolkit's bracketed paste never switched on
    t.type("EXIT\r")
    t.child.expect(__import__("pexpect").EOF, timeout=TIMEOUT)
    assert (home / ".cassandra" / "cqlsh_history").exists()
    # The same from cqlshrc.
    (home / ".cassandra" / "cqlshrc").write_text("[cqlsh_ext]\nclassic = true\n")
    t = term()
    t.expect(r"cqlsh> ")
    assert "\x1b[?2004h" not in t.raw


@pytest.mark.parametrize("classic", [True, False], ids=["classic", "default"])
def test_ctrl_c_at_the_prompt_cancels_the_line_and_the_shell_goes_on(term, repl_ks, classic):
    # As at cqlsh's own prompt: part of a statement typed, Ctrl-C, a new prompt; what was typed is
    # dropped (the next statement runs alone), and the shell answers it. --classic used to exit
    # with 130 here, as a script's Ctrl-C does.
    t = term(*(["--classic"] if classic else []), cols=80)
    prompt = r"cqlsh> " if classic else r"cqlsh>"
    t.expect(prompt)
    t.type("SELECT * FROM sys")
    t.expect(r"SELECT \* FROM sys")
    t.ctrl("c")
    t.expect(prompt)
    assert t.child.isalive()
    out = t.run(f"SELECT count(*) FROM {repl_ks}.orders;", until=r"\(1 rows\)")
    assert re.search(r"\b60\b", out) and "SyntaxException" not in out, out
    # Again inside a statement of several lines (cqlsh's continuation prompt).
    t.type(f"SELECT id FROM {repl_ks}.orders\r")
    t.expect(r"\.\.\. " if classic else r"\.\.\.")
    t.ctrl("c")
    t.expect(prompt)
    out = t.run(f"SELECT customer FROM {repl_ks}.orders WHERE id = 7;", until=r"\(1 rows\)")
    assert "customer-07" in out, out
    assert t.exit() == 0


def test_classic_loop_history_never_holds_passwords(term, cassandra, home):
    # cqlsh's readline loop adds every line typed (and a multi-line statement again as one line),
    # reads cqlsh_history at start and writes it back whole at exit: no entry of it carries a
    # password, typed now or left in the file by an older version.
    role = f"classic_{os.getpid()}"
    secret = "Sekr3t-" + role
    history = home / ".cassandra" / "cqlsh_history"
    history.write_text(f"SELECT now() FROM system.local;\nLOGIN old_user 'old-{secret}'\n")
    t = term("--classic")
    t.expect(r"cqlsh> ")
    t.run("SELECT release_version FROM system.local;")
    t.run(f"LOGIN {cassandra.username} '{cassandra.password}'", until=r"cqlsh> ")
    # The password on a line of its own, which says nothing of a password.
    for line in (f"CREATE ROLE IF NOT EXISTS {role} WITH", "PASSWORD ="):
        t.type(line + "\r")
        t.expect(r"\.\.\. ")  # cqlsh's continuation prompt: the statement goes on
    t.type(f"'{secret}' AND LOGIN = true;\r")
    t.expect(r"cqlsh> ")
    t.type("HISTORY\r")
    last = r"SELECT release_version FROM system\.local;"  # the last entry HISTORY lists
    listed = t.expect(rf"HISTORY\s*\n(.*\n)*?{last}\s*\n.*cqlsh> ").group(0)
    assert "SELECT release_version FROM system.local;" in listed and "SELECT now()" in listed
    assert secret not in listed and "LOGIN" not in listed and "PASSWORD" not in listed, listed
    t.type("\x1b[A\x1b[A")  # Up, Up: past HISTORY, the SELECT; never the CREATE ROLE's lines
    t.expect(r"SELECT release_version FROM system.local;")
    t.ctrl("c")
    t.type("EXIT\r")
    t.child.expect(__import__("pexpect").EOF, timeout=TIMEOUT)
    saved = history.read_text()
    assert "SELECT release_version FROM system.local;" in saved and "SELECT now()" in saved
    for word in (secret, cassandra.password, "LOGIN", "PASSWORD"):
        assert word not in saved, (word, saved)


def test_classic_loop_completes_with_readline_as_cqlsh_does(term, repl_ks):
    # What tools driving cqlsh in a terminal rely on (cqlsh's own completion tests among them):
    # readline's Tab inserts cqlsh's completions; our commands are in cqlsh's grammar.
    t = term("--classic")
    t.expect(r"cqlsh> ")
    t.type("DESCRIBE KEYSP\t")  # KEYSPACE or KEYSPACES: readline inserts the common part
    t.expect(r"DESCRIBE KEYSPACE")
    t.type(" " + repl_ks[:-3] + "\t")
    t.expect(repl_ks)
    t.type(";\r")
    t.expect(rf"CREATE KEYSPACE {repl_ks}")
    t.expect(r"cqlsh> ")
    t.type("DECOMP\t")
    t.expect(r"DECOMPRESS ")
    t.type(";\r")
    t.expect(r"(?i)decompress\w*[^\n]*auto")
    t.type("EXIT\r")
    t.child.expect(__import__("pexpect").EOF, timeout=TIMEOUT)


def test_disable_history_reads_but_never_writes(term, home):
    path: Path = home / ".cassandra" / "cqlsh_ext_history"
    t = term("--disable-history")
    t.prompt()
    t.run("SELECT release_version FROM system.local;")
    t.exit()
    assert not path.exists()


def test_bidirectional_and_control_characters_of_decoded_values_are_shown_escaped(term, repl_ks, cassandra):
    # A stored document whose text holds U+202E (RIGHT-TO-LEFT OVERRIDE: a terminal shows what follows
    # it reversed), an isolate and a C1 control: each cell shows them as cqlsh shows a control
    # character, `\u202e`, and the terminal never receives them.
    import gzip

    s = cassandra.session()
    s.execute(f"CREATE TABLE IF NOT EXISTS {repl_ks}.bidi (id int PRIMARY KEY, data blob)")
    doc = '{"file": "invoice\u202efdp.exe", "who": "\u2066admin\u2069", "c1": "a\u0085b"}'
    text = "plain words \u202eesrever"
    for key, stored in ((1, doc), (2, text)):
        s.execute(f"INSERT INTO {repl_ks}.bidi (id, data) VALUES (%s, %s)",
                  (key, gzip.compress(stored.encode(), mtime=0)))
    s.shutdown()
    t = term()
    t.prompt()
    t.run(f"SELECT id, data FROM {repl_ks}.bidi;", until=r"\(2 rows\)")
    t.run("EXPAND ON;", until=r"EXPAND set to ON")
    t.run(f"SELECT id, data FROM {repl_ks}.bidi;", until=r"\(2 rows\)")
    t.run(f"SELECT data.file, data.who FROM {repl_ks}.bidi WHERE id = 1;", until=r"\(1 rows\)")
    screen = t.text
    assert screen.count("invoice\\u202efdp.exe") == 3, t.tail()  # the table, EXPAND's JSON, the path
    assert screen.count("\\u2066admin\\u2069") == 3 and "a\\x85b" in screen
    assert screen.count("plain words \\u202eesrever") == 2
    reached = {"\u202e", "\u2066", "\u2069", "\u0085"} & set(t.raw)
    assert not reached, f"{reached} reached the terminal"
    assert t.exit() == 0
