"""The shell's bounds on a statement before cqlsh's parser, driving the real binary against the real
Cassandra: a 20,000-key IN list (109 KB, which grew the shell to 7 GiB before it was killed) is
answered under 1 GiB, from -e, from -f on one line and one key a line; a long statement is printed
as stock cqlsh prints it (`-d none` byte for byte, where stock cqlsh copes); past the bounds a
statement is refused in one line and the shell goes on; binary junk from -f is one line.

Peak memory is the child's own (ru_maxrss of the process the RSS wrapper waited for): a memory bound,
asserted; times are not."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from shell_runner import CQLSH_EXT, STOCK_CQLSH, run, said_lines, without_patch_warning

from cqlsh_ext.cql import grammar_bounds as bounds

#: The issue's list: 20,000 keys, 108,890 bytes of them.
KEYS = ",".join(str(i) for i in range(20_000))
#: More of cqlsh's tokens than its grammar is given (6,000), few enough for stock cqlsh to cope.
FEW_KEYS = ",".join(str(i) for i in range(3_000))
GIB_KIB = 1 << 20


@pytest.fixture(scope="module")
def ks(cassandra) -> str:
    name = cassandra.create_keyspace("bounds")
    s = cassandra.session(name)
    s.execute("CREATE TABLE c (pk int, ck int, v text, data blob, PRIMARY KEY (pk, ck))")
    s.execute("INSERT INTO c (pk, ck, v, data) VALUES (0, 1, 'one', 0x0102)")
    s.execute("INSERT INTO c (pk, ck, v) VALUES (0, 7, 'seven')")
    s.execute("INSERT INTO c (pk, ck, v) VALUES (0, 19999, 'last')")
    s.shutdown()
    return name


def _said(stderr: str) -> list[str]:
    """stderr's lines after cqlsh's warning about -p on the command line."""
    return said_lines(stderr)


def test_a_20000_key_in_list_is_answered_under_1_gib(cassandra, ks: str, tmp_path: Path,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    statement = f"SELECT pk, ck, v FROM {ks}.c WHERE pk = 0 AND ck IN ({KEYS});"
    assert len(KEYS) == 108_889 and statement.count(",") > bounds.PARSED_TOKENS
    one_line, by_line = tmp_path / "one-line.cql", tmp_path / "a-key-a-line.cql"
    one_line.write_text(statement + "\n")
    by_line.write_text(statement.replace(",", ",\n") + "\n")  # 20,000 lines: onecmd is handed each
    figures = []
    for how, args in (("-e", ["-e", statement]), ("-f, one line", ["-f", str(one_line)]),
                      ("-f, a key a line", ["-f", str(by_line)])):
        result = run(CQLSH_EXT, [*cassandra.cqlsh_args, *args], tmp_path, timeout=600, measure_rss=True)
        assert result.returncode == 0 and not _said(result.stderr), (how, result.stderr[-2000:])
        assert [line.split("|")[1].strip() for line in result.stdout.splitlines() if " | " in line][1:] == \
            ["1", "7", "19999"], (how, result.stdout)
        assert "(3 rows)" in result.stdout
        assert result.max_rss_kib is not None and result.max_rss_kib < GIB_KIB, (how, result.max_rss_kib)
        figures.append(f"{how}: peak {result.max_rss_kib / 1024:.0f} MiB")
    with capsys.disabled():
        print(f"\n[a 20,000-key IN list] {'; '.join(figures)}")


def test_a_long_statement_prints_as_stock_cqlsh_prints_it(cassandra, ks: str, tmp_path: Path) -> None:
    # Past cqlsh's grammar's bound the statement goes to the server whole, and the table its result is
    # formatted with is found by the shell's lexer: stock cqlsh (which copes with 3,000 keys, at a few
    # hundred MB) prints the same bytes, -d none and decoding alike; so for a conditional write's row.
    select = f"SELECT * FROM {ks}.c WHERE pk = 0 AND ck IN ({FEW_KEYS})"
    update = (f"UPDATE {ks}.c SET v = 'new' WHERE pk = 0 AND ck = 1 IF v IN ("
              + ",".join(f"'{i}'" for i in range(3000)) + ")")  # not applied: its row printed
    for statement in (select, update):
        stock = run(STOCK_CQLSH, [*cassandra.cqlsh_args, "-e", statement], tmp_path, timeout=600)
        assert stock.returncode == 0, stock.stderr
        expected = without_patch_warning(stock.stdout)
        assert " 0x0102 " in expected or "[applied]" in expected, expected
        for flags in (["-d", "none"], []):
            ours = run(CQLSH_EXT, [*cassandra.cqlsh_args, *flags, "-e", statement], tmp_path, timeout=600)
            assert ours.returncode == 0 and ours.stdout == expected, (flags, ours.stdout, ours.stderr)


def test_past_its_bounds_a_statement_is_refused_in_one_line_and_the_shell_goes_on(
        cassandra, ks: str, tmp_path: Path) -> None:
    too_big = f"SELECT * FROM {ks}.c WHERE pk = 0 AND v IN (" + ",".join(["'" + "x" * 50 + "'"] * 25_000) \
        + ");"
    nested = f"SELECT * FROM {ks}.c WHERE pk = " + "(" * 10_000 + "0" + ")" * 10_000 + ";"
    # A command cqlsh's grammar reads (UNDO's; TRIAL is read from its declaration now, as INSPECT is):
    # past its parser's bound, refused before it parses.
    trial = "UNDO " + ", ".join(["'x'"] * 3_000) + ";"
    script = tmp_path / "script.cql"
    script.write_text("\n".join([too_big, nested, trial, too_big.replace(",", ",\n"),
                                 f"SELECT count(*) FROM {ks}.c WHERE pk = 0;", ""]))
    result = run(CQLSH_EXT, [*cassandra.cqlsh_args, "-f", str(script)], tmp_path, timeout=600)
    said = _said(result.stderr)
    size = bounds.amount(len(too_big) + 1)
    limit = bounds.amount(bounds.STATEMENT_BYTES)
    said = [line.replace(f"{script}:", "", 1).partition(":")[2] for line in said]  # without the place
    assert said == [
        f"Statement refused: {size}, more than the shell reads as one statement ({limit}): split it into "
        "several statements (a long IN list into several of a few thousand keys each)",
        f"Statement refused: brackets nested more than 64 deep (at char {nested.index('(') + 64:,}): the "
        "shell sends no statement nested so deep (Cassandra's parser fails on it)",
        said[2],
        said[3],
    ], said
    assert said[2].startswith("UNDO refused: its ") and said[2].endswith(
        " tokens (2,999 commas) are more than cqlsh's parser reads (4,096; its time and memory grow with "
        "their square): split it into several statements (a long IN list into several of a few thousand "
        "keys each)"), said[2]
    assert said[3].startswith("Statement refused: over 1.0 MiB, more than the shell reads as one statement")
    assert result.stdout.split() == ["count", "-------", "3", "(1", "rows)"], result.stdout
    assert result.returncode == 2  # errors said, as for any failed statement of a script
    # INSPECT is read by our lexer from its declaration, never by cqlsh's grammar: the same IN list
    # that cqlsh's parser could not take is answered.
    inspect = f"INSPECT SELECT data FROM {ks}.c WHERE pk = 0 AND ck IN ({FEW_KEYS});"
    inspected = run(CQLSH_EXT, [*cassandra.cqlsh_args, "-e", inspect], tmp_path, timeout=600)
    assert inspected.returncode == 0 and not _said(inspected.stderr), inspected.stderr
    assert inspected.stdout.rstrip().endswith("(1 blob value in 2 rows, 1 null)"), inspected.stdout


def test_an_8_mib_line_from_f_is_refused_as_from_stdin_and_the_script_goes_on(cassandra, ks: str,
                                                                              tmp_path: Path) -> None:
    # Read as stdin is read (linear: bench/script_reading.py measures it), the same refusal at the
    # same line; the CRLF line ends of the script's other lines kept as they were.
    line = f"SELECT * FROM {ks}.c WHERE pk = 0 AND ck IN (" + "1," * (4 << 20) + "1);"
    text = f"{line}\r\nSELECT count(*) FROM {ks}.c\r\n WHERE pk = 0;\r\n"
    script = tmp_path / "long.cql"
    script.write_bytes(text.encode())
    from_file = run(CQLSH_EXT, [*cassandra.cqlsh_args, "-f", str(script)], tmp_path, timeout=600)
    piped = run(CQLSH_EXT, cassandra.cqlsh_args, tmp_path, stdin=text, timeout=600)
    assert _without_place(_said(from_file.stderr), script) == [
        "Statement refused: 8.0 MiB, more than the shell reads as one statement (1 MiB): split it into "
        "several statements (a long IN list into several of a few thousand keys each)"], from_file.stderr
    assert [re.sub(r"^<stdin>:\d+:", "", said) for said in _said(piped.stderr)] == \
        _without_place(_said(from_file.stderr), script)
    assert from_file.stdout.split() == piped.stdout.split() == ["count", "-------", "3", "(1", "rows)"]


def test_binary_junk_from_f_is_one_line(cassandra, tmp_path: Path) -> None:
    import random

    junk = tmp_path / "junk.bin"
    junk.write_bytes(random.Random(7).randbytes(3000))
    result = run(CQLSH_EXT, [*cassandra.cqlsh_args, "-f", str(junk)], tmp_path)
    said = _said(result.stderr)
    assert len(said) == 1 and said[0].startswith(f"{junk}:1:not utf-8 text (byte 0x"), said
    assert said[0].endswith(" after 0 lines read: nothing from there on is run")
    assert "Traceback" not in result.stderr
    assert result.stdout == "" and result.returncode == 2


#: Lines of the script shapes that took minutes before each line was measured as it came (an unclosed
#: comment of 100,000 lines 123 s; a million lines of `;` still running at 120 s).
MILLION = 1_000_000
_REFUSED_TOKENS = re.compile(
    r"Statement refused: (over )?[\d,]+ tokens \([\d,]+ commas\), more than the shell reads as one statement "
    rf"\({bounds.STATEMENT_TOKENS:,}: a number, a word, a mark or a string is one, a UUID "
    r"several\): split it into several statements \(a long IN list into several of a few thousand keys "
    r"each\)")


def _without_place(said: list[str], script: Path) -> list[str]:
    """The lines said, each without `script:LINE:` before it."""
    return [re.sub(rf"^{re.escape(str(script))}:\d+:", "", line) for line in said]


def test_a_million_lines_and_1_mib_statements_are_each_refused_in_one_line_or_answered(
        cassandra, ks: str, tmp_path: Path) -> None:
    # Each shape, then a statement after it: answered as ever. Outcomes, not times (the bench,
    # bench/statement_shapes.py, prints the CPU each takes: linear in its size).
    count = f"SELECT count(*) FROM {ks}.c WHERE pk = 0;"
    a_key_a_line = f"SELECT * FROM {ks}.c WHERE pk = 0 AND ck IN (\n" + "1,\n" * MILLION + "1);"
    semicolons = ";\n" * MILLION
    head = f"SELECT * FROM {ks}.c WHERE pk = 0 AND ck IN ("
    a_token_a_byte = head + ",".join(["1"] * ((bounds.STATEMENT_BYTES - len(head)) // 2 - 8)) + ");"
    condition = "data.k = 1"
    chain = f"SELECT * FROM {ks}.c WHERE pk = 0 AND " + " AND ".join(
        [condition] * ((bounds.STATEMENT_BYTES - 100) // (len(condition) + 5))) + ";"
    literal = (f"SELECT pk, ck FROM {ks}.c WHERE pk = 0 AND v = '"
               + "x" * (bounds.STATEMENT_BYTES - 200) + "' ALLOW FILTERING;")
    comment = "/*" + "x" * (bounds.STATEMENT_BYTES - 300) + "*/ " + count
    assert all(len(s) < bounds.STATEMENT_BYTES for s in (a_token_a_byte, chain, literal, comment))
    assert len(a_token_a_byte) > bounds.STATEMENT_BYTES - 100
    script = tmp_path / "shapes.cql"
    script.write_text("\n".join([a_key_a_line, count, semicolons + count, a_token_a_byte, count, chain,
                                 literal, comment, ""]))
    result = run(CQLSH_EXT, [*cassandra.cqlsh_args, "-f", str(script)], tmp_path, timeout=1200)
    said = _without_place(_said(result.stderr), script)
    assert len(said) == 3 and all(_REFUSED_TOKENS.fullmatch(line) for line in said), said
    # Refused before its end (the rest dropped to its `;`): a key a line; whole: the others.
    assert [line.startswith("Statement refused: over ") for line in said] == [True, False, False], said
    rows = [line.strip() for line in result.stdout.splitlines() if line.strip()]
    assert [row for row in rows if row.startswith("(")] == ["(1 rows)"] * 3 + ["(0 rows)", "(1 rows)"], rows
    assert [row for row in rows if row.isdigit()] == ["3"] * 4, rows
    assert result.returncode == 2  # errors said, as for any failed statement of a script
    # -e (at most 128 KiB an argument): 60,000 statements of nothing, then one: answered, nothing said.
    result = run(CQLSH_EXT, [*cassandra.cqlsh_args, "-e", ";" * 60_000 + count], tmp_path, timeout=600)
    assert result.returncode == 0 and not _said(result.stderr), result.stderr[-2000:]
    assert [line.strip() for line in result.stdout.splitlines() if line.strip().isdigit()] == ["3"]


@pytest.mark.parametrize(("opened", "how"), [("/*", "-f"),
                                            ("SELECT * FROM system.local WHERE key = '", "stdin")],
                         ids=["comment from -f", "string from stdin"])
def test_a_million_lines_left_inside_a_comment_or_a_string_are_refused_in_one_line(
        cassandra, tmp_path: Path, opened: str, how: str) -> None:
    # Every line holds a `;` cqlsh's lexer reads as part of the comment or string: it lexed all of
    # it again at each. The line passing the bound is refused, the rest dropped, nothing of it run.
    text = opened + "\n" + "x;\n" * MILLION
    script = tmp_path / "opened.cql"
    script.write_text(text)
    args, given = (["-f", str(script)], None) if how == "-f" else ([], text)
    result = run(CQLSH_EXT, [*cassandra.cqlsh_args, *args], tmp_path, stdin=given, timeout=1200)
    said = _said(result.stderr)
    # cqlsh names the line after the one read (its own errors' places count so).
    place = f"{script if how == '-f' else '<stdin>'}:{bounds.STATEMENT_LINES + 2}:"
    lines = bounds.STATEMENT_LINES
    assert said == [f"{place}Statement refused: over {lines + 1:,} lines, more than the shell reads as one "
                    f"statement ({lines:,}): split it into several statements (a long IN list into several "
                    "of a few thousand keys each)"], said[:5]
    assert result.stdout.strip() == "" and result.returncode == 2, result.stdout[-500:]
