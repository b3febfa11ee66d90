"""Payload queries in the interactive shell, as a person uses them: Tab after `data.` offers the
keys of the documents in the table, the query typed with them runs, and its answer is read on the
rendered screen at a small and a large terminal; HELP QUERIES in every loop."""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import pytest
from orders import MISSING, rows, take, write_table
from shell_runner import CQLSH_EXT, STOCK_CQLSH, run, without_e_place

from .terminal import write_script
from .test_screen import assert_fits

#: Order documents in snappy/gzip JSON, zstd MessagePack, LZ4 CBOR, and random bytes (tools/orders.py).
COUNT = 90
SIZES = [(80, 24), (140, 45)]


@pytest.fixture(scope="module")
def orders_ks(cassandra) -> str:
    ks = cassandra.create_keyspace("pqrepl")
    session = cassandra.session(ks)
    write_table(session, rows(COUNT))
    session.shutdown()
    return ks


def menu(t) -> str:
    """The rendered screen as one text (the completion menu is drawn under the input)."""
    return "\n".join(t.display())


@pytest.mark.parametrize(("cols", "lines"), SIZES)
def test_tab_offers_payload_keys_and_the_query_runs(term, orders_ks, cols, lines):
    docs = [doc for _row, doc in rows(COUNT) if doc is not None]
    t = term("-k", orders_ks, env={"PAGER": ""}, rows=lines, cols=cols)
    t.prompt()
    # The columns filled in last, as people do: the FROM is already there, after the cursor.
    t.type("SELECT ck, data. FROM orders WHERE pk = 'p1' AND data.status = 'PAID';")
    t.ctrl("a")
    t.type("\x06" * len("SELECT ck, data."))  # Ctrl-F: the cursor after 'data.'
    t.type("\t")  # the first Tab on the column reads its sample
    t.expect(r'"order-id"')
    screen = menu(t)
    for key in ("customer", "items", '"order-id"', "status", "tags"):
        assert re.search(rf"(^|\s){re.escape(key)}\s", screen), f"{key} not offered:\n{screen}"
    # A key begun and Tab: the one key that fits is written out.
    t.type("cu")
    t.type("\t")
    t.expect(r"customer")
    t.type(".")  # typing: the nested keys come from the sample already read
    t.expect(r"tier")
    screen = menu(t)
    assert re.search(r"(^|\s)name\s", screen) and re.search(r"(^|\s)tier\s", screen), screen
    t.type("na")
    t.type("\t")
    t.ctrl("e")
    t.enter()
    out = t.expect(r"\(\d+ rows\)")
    expected = sorted((row["ck"], take(doc, ("customer", "name"))) for row, doc in rows(COUNT)
                      if doc is not None and row["pk"] == "p1" and doc.get("status") == "PAID")
    assert expected and out.group() == f"({len(expected)} rows)"
    screen = t.display()
    # The column is named as written: what the completions made of the keys begun.
    header = next(i for i, row in enumerate(screen) if re.match(r"^\s*ck\s+\|\s+data\.customer\.name", row))
    shown = sorted((int(row.split("|")[0]), row.split("|")[1].strip())
                   for row in screen[header + 2:header + 2 + len(expected)])
    assert shown == [(ck, "null" if name is MISSING else name) for ck, name in expected]
    assert all(len(row) <= cols for row in screen)
    t.prompt()
    # An aggregate over the whole table: counted here, read on the screen.
    out = t.run("SELECT data.status, count(*) FROM orders GROUP BY data.status ALLOW FILTERING;")
    assert_fits(out, cols)
    counts = Counter(doc["status"] for doc in docs if isinstance(doc.get("status"), str))
    screen = menu(t)
    for status, count in counts.items():
        assert re.search(rf"^\s*{status}\s*\|\s*{count}\s*$", screen, re.MULTILINE), (status, count, screen)
    t.exit()


@pytest.mark.parametrize(("cols", "lines"), [*SIZES, (60, 24)])
def test_help_queries_is_wrapped_to_the_screen_not_chopped(term, cols, lines):
    # Through the pager, as a person meets it: at 80x24 the text is taller than the screen and
    # opens in less -S, which cuts (and marks with '>') every line wider than the screen. The
    # text fits 80 columns; on a narrower screen it is wrapped to it.
    t = term(env={"PAGER": "less -SRXF"}, rows=lines, cols=cols)
    t.prompt()
    t.type("HELP QUERIES")
    t.enter()
    if lines < 30:
        t.expect(r"\n:|\(END\)")  # less's prompt on the bottom row
    else:
        t.expect(r"HELP EXPORT\.")  # its last line
    screen = t.display()
    assert not [row for row in screen if len(row) == cols and row.endswith(">")], "\n".join(screen)
    assert all(len(row) <= min(cols, 79) for row in screen[:-1]), "\n".join(screen)
    text = " ".join(" ".join(screen).split())
    assert "QUERIES [cqlsh-ext]" in text
    assert "ALLOW FILTERING CONFIRM goes ahead" in text or cols < 80  # narrower: on the next screen
    assert ("Paths: data.status, data.customer.name, data.items[0].sku, data.\"order-id\" (keys are case "
            "sensitive; quote one that is not a plain name);") in text
    if lines < 30:
        t.type("q")
    t.prompt()
    t.exit()


def test_help_queries_with_e_and_in_the_help_list(cassandra, tmp_path: Path):
    out = run(CQLSH_EXT, [*cassandra.cqlsh_args, "-e", "HELP QUERIES"], tmp_path)
    assert out.returncode == 0, out.stderr
    text = out.stdout
    assert "QUERIES [cqlsh-ext]" in text
    for topic in ("data.status", "GROUP BY", "ALLOW FILTERING", "CONFIRM", "the server", "here"):
        assert topic in text, topic
    assert len(text.strip().splitlines()) <= 30
    listed = run(CQLSH_EXT, [*cassandra.cqlsh_args, "-e", "HELP"], tmp_path).stdout
    assert re.search(r"\bQUERIES\b", listed.split("CQL help topics")[0])
    # The classic loop (--classic, here fed by a pipe) has the topic as well.
    piped = run(CQLSH_EXT, [*cassandra.cqlsh_args, "--classic"], tmp_path, stdin="HELP QUERIES\n")
    assert "QUERIES [cqlsh-ext]" in piped.stdout


def test_help_select_points_to_help_queries(cassandra, term, tmp_path: Path):
    # cqlsh's own answer (a web address, or a browser opened) stays; the pointer follows it.
    out = run(CQLSH_EXT, [*cassandra.cqlsh_args, "-e", "HELP SELECT"], tmp_path, stdin="")
    stock = run(STOCK_CQLSH, [*cassandra.cqlsh_args, "-e", "HELP SELECT"], tmp_path, stdin="")
    assert out.returncode == stock.returncode and out.stderr == without_e_place(stock.stderr)  # cqlsh's own
    assert "cql_singlefile.html#selectStmt" in out.stderr
    assert re.search(r"blob values .*: HELP QUERIES\.$", out.stdout.strip()), out.stdout
    t = term(env={"PAGER": ""})
    t.prompt()
    t.type("HELP SELECT")
    t.enter()
    t.expect(r"HELP QUERIES\.")
    t.prompt()
    t.run("HELP QUERIES", until=r"QUERIES \[cqlsh-ext\]")  # and it is there
    t.prompt()
    t.exit()


@pytest.mark.parametrize(("cols", "lines"), SIZES)
def test_a_mistyped_path_is_named_on_the_closing_line(term, orders_ks, cols, lines):
    t = term("-k", orders_ks, env={"PAGER": ""}, rows=lines, cols=cols)
    t.prompt()
    for statement in ("SELECT data.stauts, count(*) FROM orders GROUP BY data.stauts ALLOW FILTERING;",
                      "SELECT ck FROM orders WHERE data.stauts = 'PAID' ALLOW FILTERING;",
                      "SELECT ck, data.stauts FROM orders WHERE pk = 'p1';"):
        t.ctrl("l")
        t.run(statement, until=r"payload query: [^\n]*(\n {4}[^\n]*)*\n")
        t.prompt()
        screen = t.display()
        start = next(i for i, row in enumerate(screen) if row.startswith("payload query: "))
        closing = [screen[start]] + [row for row in screen[start + 1:] if row.startswith("    ")]
        assert all(len(row) <= cols for row in closing), closing  # fitted: no word cut by the terminal
        said = " ".join(" ".join(closing).split())
        assert said.endswith("; no value read has data.stauts (nearest keys seen there: status)"), said
    t.exit()


def test_a_payload_query_pauses_per_page_without_a_pager_and_goes_whole_through_one(term, orders_ks,
                                                                                   tmp_path: Path):
    # The answer's pages reach the screen as a stock result's do (output.pipeline.print_answer):
    # each page decoded, cqlsh's ---MORE--- between pages where no pager is installed; the whole
    # answer through the pager where one is, its row count and closing line after it.
    expected = sorted(row["ck"] for row, _doc in rows(COUNT) if row["pk"] == "p1")[:9]
    statement = "SELECT ck, data, data.status FROM orders WHERE pk = 'p1' LIMIT 9;"
    t = term("-k", orders_ks, env={"PAGER": "no-such-pager-anywhere"}, rows=24, cols=80)
    t.prompt()
    t.run("PAGING 4", until=r"Page size: 4")
    t.prompt()
    start = len(t.text)
    t.type(statement)
    t.enter()
    t.expect(r"---MORE---")
    first = t.text[start:t.pos]
    assert "(9 rows)" not in t.since() and "[snappy]" in first  # a page shown, decoded, then a pause
    pauses, ended = 1, False
    while not ended:
        t.enter()
        ended = t.expect(r"---MORE---|\(9 rows\)").group() == "(9 rows)"
        pauses += not ended
    # 9 rows in pages of 4: each page but the last waits for Enter (as cqlsh asks only while
    # has_more_pages); the row count follows the last page with no prompt before it.
    out = t.text[start:]
    assert pauses == 2 and out.count("---MORE---") == 2, out
    assert [int(ck) for ck in re.findall(r"^\s*(\d+) \|", out, re.MULTILINE)] == expected
    t.expect(r"payload query: 9 rows read, 9 matched")
    t.exit()

    seen = tmp_path / "pager-input.txt"
    pager = write_script(tmp_path / "pager.sh",
                         f'cat > "{seen}"\necho "pager read $(wc -l < "{seen}") lines"\n')
    t = term("-k", orders_ks, env={"PAGER": str(pager)}, rows=10, cols=80)
    t.prompt()
    t.run("PAGING 4", until=r"Page size: 4")
    t.prompt()
    t.run(statement, until=r"pager read \d+ lines")
    paged = clean_text(seen.read_text())
    assert [int(ck) for ck in re.findall(r"^\s*(\d+) \|", paged, re.MULTILINE)] == expected
    assert "---MORE---" not in paged and "(9 rows)" not in paged and "payload query" not in paged
    t.expect(r"\(9 rows\)")
    t.expect(r"payload query: 9 rows read, 9 matched")
    t.exit()


def clean_text(text: str) -> str:
    return re.sub(r"\x1b\[[0-9;]*m", "", text)


def test_a_filtered_payload_query_is_one_table_on_the_terminal(term, demo_ks, cassandra):
    # A scan's rows come in batches of a few rows each, one per stream and step: each batch was
    # printed as a table of its own, a header and widths every few rows (7 headers for 8 rows), where
    # -e printed one. Now the answer is laid out in cqlsh's pages: one table up to the page size.
    import json

    import snappy

    session = cassandra.session(demo_ks)
    try:
        stored = list(session.execute("SELECT id, data FROM table_with_compressed_json"))
    finally:
        session.shutdown()
    paid = {str(row.id) for row in stored if json.loads(snappy.uncompress(row.data))["status"] == "PAID"}
    assert 10 <= len(paid) <= 100, len(paid)  # several batches, one cqlsh page
    t = term("-k", demo_ks, env={"PAGER": ""}, rows=60, cols=80)
    t.prompt()
    shown = t.run("SELECT id, data.status FROM table_with_compressed_json WHERE data.status = 'PAID' "
                  "ALLOW FILTERING;", timeout=120)
    lines = shown.splitlines()
    headers = [line for line in lines if re.match(r"^\s*id\s+\|\s+data\.status\s*$", line)]
    assert len(headers) == 1, shown
    rows_shown = [line.split("|") for line in lines if re.match(r"^\s*[0-9a-f]{8}-", line)]
    assert {cells[0].strip() for cells in rows_shown} == paid
    assert {cells[1].strip() for cells in rows_shown} == {"PAID"}
    assert len({line.index("|") for line in lines if "|" in line}) == 1  # one width for the column
    assert f"({len(paid)} rows)" in shown
    t.exit()
