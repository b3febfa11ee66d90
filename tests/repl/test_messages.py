"""Messages the shell writes, read on the rendered screen at 80 and 140 columns: a message longer
than the screen wraps at words (never `undecoda` / `ble`), and a pipe gets it as the one line a
script reads. The same statements run with -e give the one-line text each screen must show."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from orders import rows, write_table
from shell_runner import CQLSH_EXT, run

from .terminal import Term, lines_read
from .test_payload_queries import SIZES

#: 80 columns, but tall enough for the whole preview: at 24 rows its caveat scrolls the header
#: note off the screen, and the test reads what the screen shows.
TALL_SIZES = [(80, 40), (140, 45)]

COUNT = 300


@pytest.fixture(scope="module")
def messages_ks(cassandra) -> str:
    ks = cassandra.create_keyspace("wrapped_messages")
    session = cassandra.session(ks)
    write_table(session, rows(COUNT))  # some values random bytes: the closing line counts them
    session.shutdown()
    return ks


def _one_line(cassandra, home: Path, statement: str, stream: str) -> str:
    """What a script gets: the message's one line (stdout or stderr of -e)."""
    out = run(CQLSH_EXT, [cassandra.host, str(cassandra.port), "-e", statement], home)
    text = out.stdout if stream == "stdout" else out.stderr
    lines = [line for line in text.splitlines() if line.strip()]
    return lines[-1].removeprefix("<stdin>:1:")  # cqlsh's place of an error in -e's statements


def _on_screen(screen: list[str], start: str) -> list[str]:
    """The rows of the message that begins with `start`, up to the next prompt or blank row."""
    first = max(i for i, row in enumerate(screen) if row.startswith(start))
    shown = [screen[first]]
    for row in screen[first + 1:]:
        if not row.strip() or re.match(r"\S*cqlsh(:\w+)?>", row):
            break
        shown.append(row)
    return shown


def _read_back(shown: list[str]) -> str:
    """The rows joined as a person reads them: a word broken across two rows would read as two."""
    return " ".join(" ".join(row.split()) for row in shown)


@pytest.mark.parametrize(("cols", "lines"), SIZES)
def test_long_messages_wrap_at_words(term, cassandra, messages_ks, home, cols, lines):
    # In the home directory: the name as written stays shorter than the screen (a word wider than
    # the screen, a long path, is kept whole and left to the terminal).
    target = f"~/a_file_with_a_rather_long_name_for_the_closing_line_{cols}.parquet"
    export = (f"COPY (SELECT pk, ck, data.status FROM {messages_ks}.orders WHERE data.status IS NOT NULL "
              f"ALLOW FILTERING) TO '{target}' WITH OVERWRITE = true")
    bad_value = (f"INSERT INTO {messages_ks}.orders (pk, ck, data) VALUES ('p0', 1, "
                 "encode('zstd>msgpack', '{\"status\": \"PAID\", \"total\": tru'))")
    said = {"COPY (SELECT ...): ": _one_line(cassandra, home, export, "stdout"),
            "encode(": _one_line(cassandra, home, bad_value, "stderr")}
    assert "undecodable" in said["COPY (SELECT ...): "] and "(char " in said["encode("]
    t = term(env={"PAGER": ""}, rows=lines, cols=cols)
    t.prompt()
    t.run(export + ";", until=r"rows\s+written[^\n]*\n(    [^\n]*\n)*")
    t.prompt()
    t.run(bad_value + ";", until=r"nothing\s+was\s+sent")
    t.prompt()
    screen = t.display()
    for start, line in said.items():
        shown = _on_screen(screen, start)
        assert len(shown) > 1, shown  # longer than the screen: wrapped
        assert all(len(row) <= cols for row in shown)
        assert _read_back(shown) == " ".join(line.split()), shown  # at words: every word whole
    t.exit()


def _assert_wrapped(screen: list[str], start: str, line: str, cols: int) -> list[str]:
    """The message `line` (a script's one line) on the screen: wrapped at words, no row wider."""
    shown = _on_screen(screen, start)
    assert all(len(row) <= cols for row in shown), shown
    assert _read_back(shown) == " ".join(line.split()), shown  # every word whole
    return shown


@pytest.mark.parametrize(("cols", "lines"), SIZES)
def test_a_codec_mistyped_with_d_names_the_nearest_in_words_that_fit(home, cols, lines):
    piped = run(CQLSH_EXT, ["-d", "zstdd"], home)
    assert piped.returncode == 2
    [line] = piped.stderr.splitlines()  # a pipe: the one line a script reads
    assert line.startswith("cqlsh-ext: error: --decompress: unknown decompression mode 'zstdd' "
                           "(did you mean zstd?); valid: auto, none, "), line
    t = Term(["-d", "zstdd"], home, rows=lines, cols=cols)
    try:
        assert t.finish() == 2
        shown = _assert_wrapped(t.display(), "cqlsh-ext: error:", line, cols)
        assert len(shown) > 1  # 144 characters: wrapped at 80 and at 140
    finally:
        t.close()


def _message_rows(screen: list[str], start: str) -> list[str]:
    """The rows of the message that begins with `start`: its first row, then its continuations
    (indented four columns or more past it)."""
    first = max(i for i, row in enumerate(screen) if row.startswith(start))
    indent = len(screen[first]) - len(screen[first].lstrip())
    shown = [screen[first]]
    for row in screen[first + 1:]:
        if not row.strip() or len(row) - len(row.lstrip()) < indent + 4:
            break
        shown.append(row)
    return shown


@pytest.mark.parametrize(("cols", "lines"), TALL_SIZES)
def test_an_edit_s_preview_and_journal_lines_wrap_at_words_and_paths_stay_whole(term, cassandra, home,
                                                                                tmp_path, cols, lines):
    import zstandard

    ks = cassandra.create_keyspace("edit_wrapped")
    session = cassandra.session(ks)
    session.execute("CREATE TABLE docs (id int PRIMARY KEY, data blob)")
    # Written without the content size: the edit writes it as the reference producer does, and
    # its preview says so in a header note longer than 80 columns.
    value = zstandard.ZstdCompressor(write_content_size=False).compress(b'{"status": "NEW", "total": 12}')
    for key in (1, 2):
        session.execute("INSERT INTO docs (id, data) VALUES (%s, %s)", (key, value))
    session.shutdown()
    # Deeper than 140 columns: the journal's path cannot fit any row of the screen. It stands on a line
    # of its own from the first column, whole: the terminal shows it on two rows and it copies as one
    # (a break and an indent inside it cut the file's name in two: '...-31637765.js' / 'onl').
    journals = tmp_path.joinpath(*["a_directory_whose_name_is_long_enough"] * 3, "journals_of_edits")
    args = ["-k", ks, "--journal-dir", str(journals)]
    piped = run(CQLSH_EXT, [cassandra.host, str(cassandra.port), *args, "-e",
                            "UPDATE docs SET data.status = 'PAID' WHERE id = 2"], home)
    [note] = [line for line in piped.stdout.splitlines() if line.startswith("  header of ")]
    assert len(note) > 80 and "->" in note, piped.stdout
    t = term(*args, env={"PAGER": ""}, rows=lines, cols=cols)
    t.prompt()
    t.run("UPDATE docs SET data.status = 'PAID' WHERE id = 1 CONFIRM;", until=r"Undo: UNDO (.|\n)*CONFIRM\n")
    t.prompt()
    [journal] = [path for path in journals.iterdir() if path.suffix == ".jsonl"]
    assert len(str(journal)) > cols
    ident = journal.stem.rsplit("-", 1)[1]
    screen = t.display()
    said = {"  header of ": note, "1 row written.": "1 row written.",
            "Undo: ": f"Undo: UNDO '{ident}' CONFIRM"}
    for start, line in said.items():
        shown = _message_rows(screen, start)
        assert all(len(row) <= cols for row in shown), shown
        assert _read_back(shown) == " ".join(line.split()), shown
    read = lines_read(screen, cols)
    at = read.index("Journal:")
    assert read[at + 1] == f"    {journal}", read  # the path whole, on its own line: copied as one
    # The Undo line copied from the screen (one row, whatever the path: the journal's id) and run
    # without CONFIRM: UNDO finds the journal by its id and previews the row.
    [undo] = _message_rows(screen, "Undo: ")
    t.run(re.sub(r"\s+CONFIRM$", "", undo.split("Undo: ", 1)[1]) + ";",
          until=r"1 still as the edit wrote them(.|\n)*Write 1 row back\? \[y/N\]")
    t.type("n")
    t.enter()
    t.prompt()
    assert "cannot read" not in t.tail(2000)
    t.exit()


def test_a_mistyped_name_gets_the_one_meant_from_the_schema_the_shell_holds(term, cassandra, demo_ks, home):
    # A table, a keyspace, a word of the statement mistyped: the server's words alone, no suggestion;
    # writetime() in a payload query refused with no way offered (issue 96, 7). Read on the screen at 80
    # columns, each message a line the screen wraps at words.
    t = term("-k", demo_ks, env={"PAGER": ""}, rows=50, cols=80)
    t.prompt()
    said = {}
    for name, statement in (
            ("table", "SELECT data.status FROM table_with_compresed_json LIMIT 1;"),
            ("plain table", f"SELECT * FROM {demo_ks}.blob_formts;"),
            ("keyspace", f"USE {demo_ks[:-1]};"),
            ("word", "UPDATE table_with_compressed_json SET data.status = 'X' "
                     "WHERE id = b4cc8000-a838-11ee-8000-0de30de30de3 CONFRIM;"),
            ("function", "SELECT writetime(data), data.status FROM table_with_compressed_json LIMIT 1;")):
        t.ctrl("l")  # a clear screen: the statement's rows, what it printed, the next prompt
        t.prompt()
        t.type(statement)
        t.enter()
        # Its message (wrapped at words: any space a line end), or, before, its answer.
        t.expect(r"did\s+you\s+mean|is\s+the\s+server's|rows\)|Error", timeout=120)
        t.prompt()
        screen = t.display()
        prompts = [k for k, row in enumerate(screen) if re.match(r"\S*cqlsh:\w+>( |$)", row)]
        typed_rows = -(-(len(screen[prompts[0]].split("> ")[0]) + 2 + len(statement)) // 80)
        shown = [row for row in screen[prompts[0] + typed_rows:prompts[-1]] if row.strip()]
        assert shown and all(len(row) < 80 for row in shown), screen  # none went on past the edge
        said[name] = " ".join(" ".join(shown).split())
    assert "(did you mean table_with_compressed_json?)" in said["table"], said["table"]
    assert "(did you mean blob_formats?)" in said["plain table"], said["plain table"]
    assert f"(did you mean {demo_ks}?)" in said["keyspace"], said["keyspace"]
    assert "'CONFRIM' (did you mean CONFIRM?)" in said["word"], said["word"]
    assert "writetime() is the server's" in said["function"], said["function"]
    assert "SELECT id, writetime(data) FROM ... WHERE ..." in said["function"], said["function"]
    # The way offered runs: the server answers writetime beside the key.
    assert "writetime(data)" in t.run("SELECT id, writetime(data) FROM table_with_compressed_json LIMIT 1;")
    t.exit()


def test_a_mistyped_keyspace_or_output_format_on_the_command_line_names_the_one_meant(cassandra, demo_ks,
                                                                                      home):
    wrong_keyspace = run(CQLSH_EXT, [cassandra.host, str(cassandra.port), "-k", demo_ks[:-1], "-e",
                                     "SELECT 1 FROM system.local"], home)
    assert wrong_keyspace.returncode == 1
    assert f"could not use keyspace '{demo_ks[:-1]}' (did you mean {demo_ks}?)" in wrong_keyspace.stderr
    wrong_format = run(CQLSH_EXT, [cassandra.host, str(cassandra.port), "--output-format", "jsn", "-e",
                                   "SELECT 1 FROM system.local"], home)
    assert wrong_format.returncode == 2
    assert "unknown output format 'jsn' (did you mean json?); valid: table, vertical, json, csv" in \
        wrong_format.stderr
