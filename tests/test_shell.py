"""The real cqlsh-ext binary against the real Cassandra: what a user sees."""

from __future__ import annotations

import contextlib
import csv
import gzip
import json
import re
import socket
import sys
import threading
from pathlib import Path

import cramjam
import pytest
import zstandard
from shell_runner import CQLSH_EXT, STOCK_CQLSH, entry_reporting_at_exit, ext, run, without_patch_warning

from cqlsh_ext.demo.records import documents
from cqlsh_ext.demo.samples import samples
from cqlsh_ext.payload.formats._outside import outside_names

DOC = next(documents(1, seed=7))
SAMPLES = samples(DOC)


@pytest.fixture(scope="module")
def ks(cassandra):
    """A keyspace with one value per container format, nested blobs and a mixed-type table."""
    name = cassandra.create_keyspace("shell")
    s = cassandra.session(name)
    s.execute("CREATE TABLE formats (name text PRIMARY KEY, data blob)")
    insert = s.prepare("INSERT INTO formats (name, data) VALUES (?, ?)")
    for sample in SAMPLES:
        s.execute(insert, (sample.name, sample.data))
    s.execute(
        "CREATE TABLE mixed (id int PRIMARY KEY, t text, n bigint, f double, u uuid, ts timestamp, "
        "b blob, l list<blob>, m map<text, blob>, tp tuple<int, blob>)"
    )
    snappy_doc = bytes(cramjam.snappy.compress_raw(DOC.encode()))
    insert_mixed = s.prepare(
        "INSERT INTO mixed (id, t, n, f, u, ts, b, l, m, tp) "
        "VALUES (1, ?, 9007199254740993, 1.5, 5132b130-ae79-11e4-ab27-0800200c9a66, "
        "'2024-02-03 04:05:06+0000', ?, ?, ?, ?)"
    )
    s.execute(
        insert_mixed,
        (
            "tab\there 'q'",
            snappy_doc,
            [gzip.compress(b'{"k":"in a list"}', mtime=0), b"\x01\x02"],
            {"z": zstandard.ZstdCompressor().compress(b"zstd in a map")},
            (7, gzip.compress(b"tuple!", mtime=0)),
        ),
    )
    s.execute("INSERT INTO mixed (id, t) VALUES (2, 'no blob here')")
    s.execute("CREATE TYPE att (filename text, content blob)")
    s.execute("CREATE TABLE udts (id int PRIMARY KEY, a frozen<att>)")
    s.execute(
        "INSERT INTO udts (id, a) VALUES (1, {filename: 'a.gz', content: %s})"
        % ("0x" + gzip.compress(b"inside a UDT", mtime=0).hex())
    )
    s.shutdown()
    return name


def rows_by_name(output: str) -> dict[str, str]:
    """name -> data cell of `SELECT name, data` output."""
    cells = {}
    for line in output.splitlines():
        if " | " in line and not line.lstrip().startswith("name "):
            name, _, data = line.partition(" | ")
            cells[name.strip()] = data.strip()
    return cells


def test_every_container_is_decoded_and_labelled(cassandra, ks, tmp_path):
    cells = rows_by_name(ext(cassandra, tmp_path, "-e", f"SELECT name, data FROM {ks}.formats")
                         .checked_stdout())
    assert set(cells) == {s.name for s in SAMPLES}
    for sample in SAMPLES:
        cell = cells[sample.name]
        if sample.expect.startswith("raw"):
            # A recognised format that fails says why; a value in no auto-detected format (raw
            # deflate, brotli, a bare LZ4 block: only with -d) is its hex, exactly as cqlsh prints it.
            if sample.expect == "raw":
                assert cell == "0x" + sample.data.hex(), sample.name
            else:
                assert cell.startswith("0x") and re.search(r"\(.+\)$", cell), (sample.name, cell[-80:])
            continue
        assert cell.startswith(f"[{sample.expect}] "), (sample.name, cell[:80])
        assert cell.endswith(DOC), f"{sample.name}: decoded text differs"


def test_reasons_name_what_is_wrong(cassandra, ks, tmp_path):
    cells = rows_by_name(ext(cassandra, tmp_path, "-e", f"SELECT name, data FROM {ks}.formats")
                         .checked_stdout())
    assert "dictionary" in cells["zstd dictionary"]
    assert "dictionary" in cells["zlib preset dictionary"]
    assert cells["plain json"].startswith("[text] {")
    assert cells["truncated gzip"].split("(")[-1].startswith("gzip")


def test_none_is_byte_for_byte_stock_cqlsh(cassandra, ks, tmp_path):
    for statement in (f"SELECT * FROM {ks}.formats", f"SELECT * FROM {ks}.mixed", f"SELECT * FROM {ks}.udts"):
        stock = run(STOCK_CQLSH, [*cassandra.cqlsh_args, "-e", statement], tmp_path)
        ours = run(CQLSH_EXT, [*cassandra.cqlsh_args, "-d", "none", "-e", statement], tmp_path)
        assert ours.returncode == stock.returncode == 0
        assert ours.stdout == without_patch_warning(stock.stdout)
        assert "0x" in stock.stdout
    # The README says so, and names the one line left out.
    from conftest import REPO_ROOT

    readme = " ".join((REPO_ROOT / "README.md").read_text().split())
    assert "`-d none` prints results exactly, byte for byte, as stock cqlsh 6.2 prints them, less one " \
        "line" in readme
    if stock.stdout != without_patch_warning(stock.stdout):  # this server's patch release is not cqlsh's
        left_out = stock.stdout.split("WARNING: ")[1].split(".  All features")[0]
        assert re.sub(r"this server is \S+", "this server is 5.0.6", left_out) in readme


def test_none_is_stock_for_timestamps_stock_reads_through_a_float(cassandra, tmp_path):
    """Past about year 2100 stock cqlsh's float reading shows a timestamp off by microseconds
    (9999-12-31 23:59:59.999 as 23:59:59.998993), and a negative time as a time (-2 ns as
    -1:59:59.999999998): `-d none` and DECOMPRESS NONE print those, byte for byte as stock;
    decompression on prints the exact value, and the negative time's nanoseconds (docs/api.md)."""
    name = cassandra.create_keyspace("stock_times")
    session = cassandra.session(name)
    session.execute("CREATE TABLE t (id int PRIMARY KEY, ts timestamp, tm time)")
    for key, text in enumerate(["2024-02-03 04:05:06.789+0000", "2262-04-11 23:47:16.854+0000",
                                "9999-12-31 23:59:59.999+0000", "0001-01-01 00:00:00.000+0000"]):
        session.execute(f"INSERT INTO t (id, ts, tm) VALUES ({key}, '{text}', "
                        f"blobAsTime(bigintAsBlob({key - 2})))")
    session.shutdown()
    statement = f"SELECT * FROM {name}.t"
    stock = run(STOCK_CQLSH, [*cassandra.cqlsh_args, "-e", statement], tmp_path)
    assert "9999-12-31 23:59:59.998993+0000" in stock.stdout
    ours = run(CQLSH_EXT, [*cassandra.cqlsh_args, "-d", "none", "-e", statement], tmp_path)
    assert ours.returncode == stock.returncode == 0 and ours.stdout == without_patch_warning(stock.stdout)
    script = tmp_path / "none.cql"
    script.write_text(f"{statement};\nDECOMPRESS NONE;\n{statement};\n")
    switched = run(CQLSH_EXT, [*cassandra.cqlsh_args, "-f", str(script)], tmp_path).stdout
    exact, _, after = switched.partition("Decompression mode set to NONE.\n")
    assert "9999-12-31 23:59:59.999000+0000" in exact and re.search(r"\|\s+-2 \|", exact)
    assert "-1:59:59.999999998" in stock.stdout
    assert after.strip() == without_patch_warning(stock.stdout).strip()


def test_expand_none_is_stock_too(cassandra, ks, tmp_path):
    script = tmp_path / "expand.cql"
    script.write_text(f"EXPAND ON;\nSELECT * FROM {ks}.mixed;\n")
    stock = run(STOCK_CQLSH, [*cassandra.cqlsh_args, "-f", str(script)], tmp_path)
    ours = run(CQLSH_EXT, [*cassandra.cqlsh_args, "-d", "NONE", "-f", str(script)], tmp_path)
    assert ours.stdout == without_patch_warning(stock.stdout) and "@ Row 1" in stock.stdout


def test_non_blob_columns_are_untouched(cassandra, ks, tmp_path):
    statement = f"SELECT id, t, n, f, u, ts FROM {ks}.mixed"
    stock = run(STOCK_CQLSH, [*cassandra.cqlsh_args, "-e", statement], tmp_path)
    assert ext(cassandra, tmp_path, "-e", statement).checked_stdout() == without_patch_warning(stock.stdout)


def test_a_name_said_twice_keeps_each_value_and_none_prints_what_stock_cqlsh_prints(cassandra, ks, tmp_path):
    """SELECT id AS v, t AS v: cqlsh's rows map a name to one value, so stock cqlsh prints t's under
    both; cqlsh-ext prints each column's own value (the row the fixture wrote: 2, 'no blob here')
    in every format, and with -d none exactly what stock cqlsh prints."""
    statement = f"SELECT id AS v, t AS v FROM {ks}.mixed WHERE id = 2"
    as_json = ext(cassandra, tmp_path, "--output-format", "json", "-e", statement).checked_stdout()
    assert [json.loads(line, object_pairs_hook=list) for line in as_json.splitlines()] == \
        [[("v", 2), ("v", "no blob here")]]
    as_csv = ext(cassandra, tmp_path, "--output-format", "csv", "-e", statement).checked_stdout()
    assert list(csv.reader(as_csv.splitlines())) == [["v", "v"], ["2", "no blob here"]]
    table = ext(cassandra, tmp_path, "-e", statement).checked_stdout()
    assert re.search(r"^ +2 \| no blob here$", table, re.MULTILINE), table
    stock = run(STOCK_CQLSH, [*cassandra.cqlsh_args, "-e", statement], tmp_path)
    assert stock.returncode == 0 and "no blob here | no blob here" in stock.stdout
    assert ext(cassandra, tmp_path, "-d", "none", "-e", statement).checked_stdout() == \
        without_patch_warning(stock.stdout)


def test_a_page_with_blobs_formats_its_other_cells_as_stock_cqlsh(cassandra, ks, tmp_path):
    """A page with a blob column is formatted by our page formatter (output.pipeline's
    _cell_formatter: cqlshrc's formats read once a page): every other cell as stock cqlsh prints
    it, with cqlshrc's time format and precisions (the blob null: shown alike)."""
    s = cassandra.session(ks)
    s.execute("CREATE TABLE IF NOT EXISTS scalars (id int PRIMARY KEY, d double, f float, dec decimal, "
              "ts timestamp, dt date, tm time, du duration, v varint, bo boolean, ip inet, b blob)")
    s.execute("INSERT INTO scalars (id, d, f, dec, ts, dt, tm, du, v, bo, ip) VALUES (1, 3.14159265358979, "
              "2.718281, 1.50, '2024-02-23 02:16:41.123+0000', '1969-07-20', '13:45:07.25', 1mo2d3h, "
              "123456789012345678901234567890, true, '10.0.0.1')")
    s.execute("INSERT INTO scalars (id) VALUES (2)")
    s.shutdown()
    rc = tmp_path / "cqlshrc"
    rc.write_text("[ui]\ntime_format = %Y/%m/%d %H.%M.%S\nfloat_precision = 3\ndouble_precision = 7\n")
    statement = f"SELECT * FROM {ks}.scalars"
    stock = run(STOCK_CQLSH, [*cassandra.cqlsh_args, "--cqlshrc", str(rc), "-e", statement], tmp_path)
    assert stock.returncode == 0 and "2024/02/23 02.16.41" in stock.stdout and "3.1415927" in stock.stdout
    assert ext(cassandra, tmp_path, "--cqlshrc", str(rc), "-e",
               statement).checked_stdout() == without_patch_warning(stock.stdout)


def test_a_payload_querys_ordinary_columns_print_as_stock_cqlsh_prints_them(cassandra, ks, tmp_path):
    """A payload query's page without blobs is formatted a column at a time (output.pipeline's
    _page_formats: each column's formatter looked up once, plain texts and integers spelt
    there): every cell as stock cqlsh prints the same rows, nulls, escapes, wide characters and
    collections among them, with cqlshrc's formats."""
    s = cassandra.session(ks)
    s.execute("CREATE TABLE IF NOT EXISTS kept (pk int, ck int, t text, n int, d double, f float, "
              "ts timestamp, v varint, bo boolean, l list<text>, m map<text, int>, b blob, "
              "PRIMARY KEY (pk, ck))")
    insert = s.prepare("INSERT INTO kept (pk, ck, t, n, d, f, ts, v, bo, l, m, b) "
                       "VALUES (1, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)")
    texts = ["same", "back\\slash", "tab\there", "\u5bbd\u5b57", "same", None, "", "same"]
    for ck, t in enumerate(texts):
        s.execute(insert, (ck, t, ck % 3 if ck != 5 else None, ck / 3, ck / 7, 1_700_000_000_000 + ck,
                           10**30 + ck % 2, ck % 2 == 0, [t or "x", "y"], {"k": ck % 2},
                           b'{"keep": 1}' if ck != 6 else b'{"keep": 2}'))
    s.shutdown()
    rc = tmp_path / "cqlshrc"
    rc.write_text("[ui]\ntime_format = %Y/%m/%d %H.%M.%S\nfloat_precision = 3\ndouble_precision = 7\n")
    columns = "ck, t, n, d, f, ts, v, bo, l, m"
    kept = f"SELECT {columns} FROM {ks}.kept WHERE pk = 1 AND ck IN (0, 1, 2, 3, 4, 5, 7)"
    stock = run(STOCK_CQLSH, [*cassandra.cqlsh_args, "--cqlshrc", str(rc), "-e", kept], tmp_path)
    assert stock.returncode == 0 and "(7 rows)" in stock.stdout and "back\\\\slash" in stock.stdout
    kept_rows = f"SELECT {columns} FROM {ks}.kept WHERE pk = 1 AND b.keep = 1 ALLOW FILTERING"
    ours = ext(cassandra, tmp_path, "--cqlshrc", str(rc), "-e", kept_rows).checked_stdout()
    assert ours == without_patch_warning(stock.stdout)


def test_nested_blobs_in_collections_tuples_and_udts(cassandra, ks, tmp_path):
    out = ext(cassandra, tmp_path, "-e", f"SELECT l, m, tp FROM {ks}.mixed WHERE id = 1").checked_stdout()
    assert """[gzip] '{"k":"in a list"}'""" in out
    assert "0x0102]" in out  # a short raw blob inside the list keeps its hex, as cqlsh prints it
    assert "{'z': [zstd] 'zstd in a map'}" in out
    assert "(7, [gzip] 'tuple!')" in out
    out = ext(cassandra, tmp_path, "-e", f"SELECT a FROM {ks}.udts").checked_stdout()
    assert "content: [gzip] 'inside a UDT'" in out


def test_blobs_in_a_vector_are_decoded_too(cassandra, ks, tmp_path):
    # A result whose only blobs are inside a vector is shown as any other with blobs; -d none
    # stays stock.
    s = cassandra.session(ks)
    s.execute("CREATE TABLE IF NOT EXISTS vectors (id int PRIMARY KEY, v vector<blob, 2>)")
    value = gzip.compress(b"in a vector", mtime=0)
    s.execute(f"INSERT INTO vectors (id, v) VALUES (1, [0x{value.hex()}, 0x0102])")
    s.shutdown()
    statement = f"SELECT v FROM {ks}.vectors"
    assert "[[gzip] 'in a vector', 0x0102]" in ext(cassandra, tmp_path, "-e", statement).checked_stdout()
    stock = run(STOCK_CQLSH, [*cassandra.cqlsh_args, "-e", statement], tmp_path)
    assert ext(cassandra, tmp_path, "-d", "none", "-e",
               statement).checked_stdout() == without_patch_warning(stock.stdout)


def test_expand_on_indents_json(cassandra, ks, tmp_path):
    script = tmp_path / "expand.cql"
    script.write_text(f"EXPAND ON;\nSELECT b FROM {ks}.mixed WHERE id = 1;\n")
    out = run(CQLSH_EXT, [*cassandra.cqlsh_args, "-f", str(script)], tmp_path).stdout
    lines = out.splitlines()
    start = next(i for i, line in enumerate(lines) if "[snappy] {" in line)
    value_column = lines[start].index("[snappy]")
    block = []
    for line in lines[start + 1 :]:
        if not line.strip():
            break
        assert line[:value_column].strip() == "", "continuation lines align under the value"
        block.append(line[value_column:])
    text = lines[start][value_column + len("[snappy] ") :] + "\n" + "\n".join(block)
    assert json.loads(text) == json.loads(DOC)


def test_named_codec_shows_hex_and_reason_for_other_values(cassandra, ks, tmp_path):
    cells = rows_by_name(ext(cassandra, tmp_path, "-d", "Snappy", "-e",
                             f"SELECT name, data FROM {ks}.formats").checked_stdout())
    assert cells["snappy raw"].startswith("[snappy] ") and cells["snappy raw"].endswith(DOC)
    assert cells["gzip"].startswith("0x1f8b08") and " (snappy: " in cells["gzip"]


def test_raw_deflate_only_when_named(cassandra, ks, tmp_path):
    statement = f"SELECT name, data FROM {ks}.formats WHERE name = 'raw deflate'"
    plain = rows_by_name(ext(cassandra, tmp_path, "-e", statement).checked_stdout())["raw deflate"]
    assert plain.startswith("0x")
    named = rows_by_name(ext(cassandra, tmp_path, "--decompress", "deflate", "-e", statement)
                         .checked_stdout())["raw deflate"]
    assert named.startswith("[deflate] ") and named.endswith(DOC)


def test_unknown_codec_is_a_one_line_error(cassandra, tmp_path):
    result = run(
        CQLSH_EXT, [*cassandra.cqlsh_args, "-d", "lzo", "-e", "SELECT now() FROM system.local"], tmp_path
    )
    assert result.returncode == 2
    assert result.stderr.strip().count("\n") == 0
    assert "lzo" in result.stderr and "snappy" in result.stderr and "auto" in result.stderr


_CODECS = "snappy, lz4, zstd, dcz, gzip, zlib, deflate, bzip2, xz, brotli, dcb"
#: A rewrite's targets: the compressions written here (dcb is read, not written).
_WRITTEN = "snappy, lz4, zstd, dcz, gzip, zlib, deflate, bzip2, xz, brotli"
#: A DECODE or encode() step: a codec, then a payload format (the formats from outside too: the
#: test plugin bin/setup --test installs).
_STEPS = (f"{_CODECS}, msgpack, cbor, bson, pickle, avro, smile, protobuf, thrift, java, text, hex, json, "
          f"{''.join(f'{name}, ' for name in outside_names())}auto")


def test_a_word_mistyped_from_a_list_is_told_the_nearest_and_that_place_s_words_in_one_line(
        cassandra, ks, tmp_path):
    # One statement a run, as a user types it: each says one line, the nearest word, and the
    # words of that place only (a rewrite's targets are compressions, no payload format).
    said = {
        "DECOMPRESS zsdt":
            f"unknown decompression mode 'zsdt' (did you mean zstd?); valid: auto, none, {_CODECS}",
        f"COMPRESSION REWRITE {ks}.formats.data AS 'zsdt';":
            "COMPRESSION REWRITE: AS 'zsdt': unknown compression 'zsdt' (did you mean zstd?); "
            f"valid: {_WRITTEN}, none; nothing was written",
        f"DECODE '{ks}.formats.data' AS 'zsdt>json'":
            f"DECODE: unknown step 'zsdt' in 'zsdt>json' (did you mean zstd?); valid: {_STEPS}",
        f"INSERT INTO {ks}.formats (name, data) VALUES ('t', encode('zsdt', 'x'));":
            f"encode('zsdt') for {ks}.formats.data: unknown step 'zsdt' in 'zsdt' (did you mean zstd?); "
            f"valid: {_STEPS}; nothing was sent",
        f"DESCRIBE PAYLOD {ks}.formats.data;":
            "DESCRIBE unknown word 'PAYLOD' (did you mean PAYLOAD?); valid: KEYSPACES, KEYSPACE, TABLES, "
            "TABLE, TYPES, TYPE, FUNCTIONS, FUNCTION, AGGREGATES, AGGREGATE, INDEX, MATERIALIZED, SCHEMA, "
            "FULL, CLUSTER, ONLY, PAYLOAD, or a name",
        f"COMPRESSION STAST {ks}.formats;":
            "COMPRESSION unknown statement 'STAST' (did you mean STATS?); "
            "valid: STATS, ADVISE, SETTINGS, TRIAL, REWRITE (HELP COMPRESSION)",
    }
    for statement, line in said.items():
        out = run(CQLSH_EXT, [*cassandra.cqlsh_args, "-e", statement], tmp_path)
        assert out.returncode == 2 and not out.stdout.strip(), (statement, out)
        assert _said(out) == [line], statement
    flag = run(CQLSH_EXT, [*cassandra.cqlsh_args, "-d", "zsdt", "-e", "SELECT now() FROM system.local"],
               tmp_path)
    assert flag.returncode == 2
    assert flag.stderr.splitlines() == ["cqlsh-ext: error: --decompress: unknown decompression mode 'zsdt' "
                                        f"(did you mean zstd?); valid: auto, none, {_CODECS}"], flag.stderr
    both = run(CQLSH_EXT, [*cassandra.cqlsh_args, "-e", "DECOMPRESS off"], tmp_path)
    assert both.stdout.strip() == "Decompression mode set to NONE.", both


def test_a_mistyped_command_names_the_nearest_and_sends_nothing(cassandra, ks, tmp_path):
    # cqlsh's words, CQL's and ours: the one meant is named, and the typo never reaches the
    # server (which would answer 'no viable alternative at input'); a word near none is sent.
    statements = {"COMPRESION STATS formats;": "COMPRESSION", "INSPEC SELECT data FROM formats;": "INSPECT",
                  "SELEC * FROM formats;": "SELECT", "DESCRIB TABLES": "DESCRIBE",
                  "CONSISTANCY ONE;": "CONSISTENCY"}
    for statement, meant in statements.items():
        out = run(CQLSH_EXT, [*cassandra.cqlsh_args, "-k", ks, "-e", statement], tmp_path)
        typed = statement.split()[0]
        assert out.returncode == 2 and not out.stdout, (statement, out)
        assert _said(out) == [f"{typed} is not a command or statement: did you mean {meant}? "
                              "(HELP lists the commands)"], out.stderr
    unknown = run(CQLSH_EXT, [*cassandra.cqlsh_args, "-e", "FROBNICATE everything;"], tmp_path)
    assert unknown.returncode == 2 and _said(unknown)[0].startswith("SyntaxException: "), unknown.stderr


def _said(result) -> list[str]:
    """The lines on stderr after cqlsh's warning about -p on the command line."""
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    return [line for line in lines if not line.startswith(("Warning: Using a password", "Recommendation: "))]


def test_e_errors_have_no_script_place_and_f_errors_keep_theirs(cassandra, tmp_path):
    # -e has no file whose lines an error could name: no '<stdin>:1:' before it; -f names its line.
    missing = "SELECT * FROM system.no_such_table;"
    e = run(CQLSH_EXT, [*cassandra.cqlsh_args, "-e", missing], tmp_path)
    assert e.returncode == 2 and _said(e)[0].startswith("InvalidRequest: "), e.stderr
    script = tmp_path / "script.cql"
    script.write_text(f"SELECT now() FROM system.local;\n{missing}\n")
    f = run(CQLSH_EXT, [*cassandra.cqlsh_args, "-f", str(script)], tmp_path)
    place = rf"{re.escape(str(script))}:\d+:InvalidRequest: "
    assert f.returncode == 2 and re.match(place, _said(f)[0]), f.stderr


def test_our_help_texts_have_no_stray_break(cassandra, tmp_path):
    # A paragraph's line ends full or at the end of a sentence or a clause, never after a few words
    # ('values by\n codec and\n container, ...' in HELP COMPRESSION), and fits 80 columns.
    from cqlsh_ext.common.text import HELP_WIDTH
    from cqlsh_ext.features import commands
    from cqlsh_ext.shell.completion import register_grammar

    register_grammar()
    topics = [c.word for c in commands.commands()] + [topic for topic, _ in commands.help_topics()]
    out = run(CQLSH_EXT, [*cassandra.cqlsh_args, "-e", "; ".join(f"HELP {t}" for t in topics)], tmp_path)
    assert out.returncode == 0 and out.stdout.count("[cqlsh-ext]") >= len(topics), out.stderr
    lines = out.stdout.splitlines()
    assert max(len(line) for line in lines) <= HELP_WIDTH
    for line, after in zip(lines, lines[1:], strict=False):
        indent = len(line) - len(line.lstrip())
        if line.strip() and indent == len(after) - len(after.lstrip()) and after.strip():
            short = len(line.strip()) < (HELP_WIDTH - indent) // 2
            assert not (short and line.rstrip()[-1].isalnum() and after.lstrip()[0].islower()), (line, after)


def test_the_readme_s_encode_example_shows_what_it_says(cassandra, tmp_path):
    # README, "Writing goes the other way": what each encode() displays, as the README quotes it.
    from conftest import REPO_ROOT

    readme = " ".join((REPO_ROOT / "README.md").read_text().split())
    plain, record = "encode('zstd', '{\"a\": 1}')", "encode('zstd>msgpack', '{\"a\": 1}')"
    shown = {plain: '[zstd] {"a": 1}', record: "[zstd] 0x81a16101 (4 bytes)"}
    assert f"VALUES (1, {plain})" in readme and "shows `[zstd] {\"a\": 1}`" in readme
    assert "encode('zstd>msgpack', ...)` the value shows as `[zstd] 0x81a16101 (4 bytes)` until " \
           "`DECODE 'ks.t.data' AS 'zstd>msgpack'`" in readme
    ks = cassandra.create_keyspace("readme")
    script = [f"CREATE TABLE {ks}.t (id int PRIMARY KEY, data blob);",
              f"INSERT INTO {ks}.t (id, data) VALUES (1, {plain});",
              f"INSERT INTO {ks}.t (id, data) VALUES (2, {record});"]
    wrote = run(CQLSH_EXT, [*cassandra.cqlsh_args, "-e", " ".join(script)], tmp_path)
    assert wrote.returncode == 0 and f"shown only with a setting: DECODE '{ks}.t.data' AS 'zstd>msgpack'" \
        in wrote.stderr, wrote.stderr
    cells = rows_by_name(ext(cassandra, tmp_path, "-e", f"SELECT id, data FROM {ks}.t").checked_stdout())
    assert (cells["1"], cells["2"]) == (shown[plain], shown[record])
    named = run(CQLSH_EXT, [*cassandra.cqlsh_args, "-e", f"DECODE '{ks}.t.data' AS 'zstd>msgpack'; "
                            f"SELECT id, data FROM {ks}.t WHERE id = 2"], tmp_path)
    assert re.search(r"\|\s+\[zstd>msgpack\] \{\"a\": ?1\}", named.stdout), named.stdout


def test_decompress_command_switches_modes(cassandra, ks, tmp_path):
    script = tmp_path / "modes.cql"
    query = f"SELECT data FROM {ks}.formats WHERE name = 'zstd';"
    script.write_text(
        f"DECOMPRESS;\n{query}\ndecompress off;\n{query}\nDECOMPRESS ZSTD\n{query}\nDECOMPRESS\n"
    )
    out = run(CQLSH_EXT, [*cassandra.cqlsh_args, "-f", str(script)], tmp_path).stdout
    assert "Decompression mode is AUTO." in out
    assert "Decompression mode set to NONE." in out
    assert "Decompression mode is ZSTD." in out
    zstd_cells = [
        line.strip() for line in out.splitlines() if line.strip().startswith(("[zstd]", "0x28b52ffd"))
    ]
    assert [cell[:6] for cell in zstd_cells] == ["[zstd]", "0x28b5", "[zstd]"]


def test_help_answers_every_command_the_shell_adds(cassandra, tmp_path):
    # HELP of each word a statement of ours starts with, each form of COMPRESSION, RESUME, DESCRIBE
    # PAYLOAD inside HELP DESCRIBE, each text cqlsh-ext's own; a mistyped topic gets the one meant.
    from cqlsh_ext.features import commands
    from cqlsh_ext.shell.completion import register_grammar

    register_grammar()
    words = [c.word.upper() for c in commands.commands()]
    asked = [*words, "DESCRIBE PAYLOAD", "COMPRESSION STATS", "COMPRESSION ADVISE", "COMPRESSION SETTINGS",
             "COMPRESSION TRIAL", "COMPRESSION REWRITE", "RESUME", "COMPRESSION REWRITE RESUME", "UNDO",
             "ENCODE", "EDIT", "EXPORT", "QUERIES"]
    for topic in asked:
        out = run(CQLSH_EXT, [*cassandra.cqlsh_args, "-e", f"HELP {topic}"], tmp_path)
        assert out.returncode == 0 and not _said(out), (topic, out.stderr)
        first = out.stdout.strip().splitlines()[0]
        assert "[cqlsh-ext]" in out.stdout, (topic, out.stdout[:300])
        if " " in topic and topic != "COMPRESSION REWRITE RESUME":  # the form's own text, not the command's
            assert first.startswith(topic) and "STATS | ADVISE" not in first, first
    resume = run(CQLSH_EXT, [*cassandra.cqlsh_args, "-e", "HELP RESUME"], tmp_path).stdout
    assert "COMPRESSION REWRITE RESUME 'journal' [CONFIRM]" in resume
    # HELP DESCRIBE is cqlsh's text, then where DESCRIBE PAYLOAD is told; HELP DESCRIBE PAYLOAD is
    # that alone.
    describe = run(CQLSH_EXT, [*cassandra.cqlsh_args, "-e", "HELP DESCRIBE"], tmp_path).stdout
    assert "DESCRIBE [cqlsh only]" in describe
    assert "HELP DESCRIBE PAYLOAD" in describe.split("[cqlsh only]")[1]
    payload = run(CQLSH_EXT, [*cassandra.cqlsh_args, "-e", "HELP DESCRIBE PAYLOAD"], tmp_path).stdout
    assert payload.strip().startswith("DESCRIBE PAYLOAD [cqlsh-ext]\n\n        DESCRIBE PAYLOAD "
                                      "[keyspace.]table.column")
    assert "[cqlsh only]" not in payload
    for typed, meant in (("INSPCT", "INSPECT"), ("COMPRESION", "COMPRESSION"), ("RESUEM", "RESUME")):
        out = run(CQLSH_EXT, [*cassandra.cqlsh_args, "-e", f"HELP {typed}"], tmp_path)
        assert _said(out) == [f"*** No help on {typed} (did you mean {meant}?)"], out.stderr
        assert not out.stdout.strip()
    # A mistyped topic beside a good one: the line for it, and the good one's text.
    out = run(CQLSH_EXT, [*cassandra.cqlsh_args, "-e", "HELP INSPCT UNDO"], tmp_path)
    assert "(did you mean INSPECT?)" in out.stderr and "UNDO 'journal' | LAST" in out.stdout


def test_decompress_is_in_help(cassandra, tmp_path):
    script = tmp_path / "help.cql"
    script.write_text("HELP\nHELP DECOMPRESS\n")
    out = run(CQLSH_EXT, [*cassandra.cqlsh_args, "-f", str(script)], tmp_path).stdout
    assert "DECOMPRESS" in out.split("CQL help topics")[0]
    assert "DECOMPRESS NONE" in out


def test_cqlshrc_section_sets_the_mode(cassandra, ks, tmp_path):
    rc = tmp_path / "rc"
    rc.write_text("[cqlsh_ext]\ndecompress = none\n")
    out = ext(cassandra, tmp_path, "--cqlshrc", str(rc), "-e",
              f"SELECT data FROM {ks}.formats WHERE name = 'gzip'").checked_stdout()
    assert "0x1f8b08" in out and "[gzip]" not in out
    out = ext(cassandra, tmp_path, "--cqlshrc", str(rc), "-d", "auto", "-e",
              f"SELECT data FROM {ks}.formats WHERE name = 'gzip'").checked_stdout()
    assert "[gzip]" in out


def test_field_width_cuts_cells(cassandra, ks, tmp_path):
    out = ext(cassandra, tmp_path, "--max-field-width", "60", "-e",
              f"SELECT data FROM {ks}.formats WHERE name = 'gzip'").checked_stdout()
    cell = next(line.strip() for line in out.splitlines() if "[gzip]" in line)
    assert len(cell) == 60 and cell.endswith("…")


def test_scripts_get_whole_values(cassandra, ks, tmp_path):
    out = ext(cassandra, tmp_path, "-e",
              f"SELECT data FROM {ks}.formats WHERE name = 'zstd'").checked_stdout()
    assert DOC in out


def test_copy_to_exports_raw_bytes_and_round_trips(cassandra, ks, tmp_path):
    exported = tmp_path / "formats.csv"
    result = run(
        CQLSH_EXT, [*cassandra.cqlsh_args, "-e", f"COPY {ks}.formats (name, data) TO '{exported}'"], tmp_path
    )
    assert result.returncode == 0, result.stderr
    with exported.open() as handle:
        rows = {name: data for name, data in csv.reader(handle)}
    assert rows == {s.name: "0x" + s.data.hex() for s in SAMPLES}

    session = cassandra.session(ks)
    session.execute("CREATE TABLE IF NOT EXISTS formats_copy (name text PRIMARY KEY, data blob)")
    result = run(
        CQLSH_EXT,
        [*cassandra.cqlsh_args, "-e", f"COPY {ks}.formats_copy (name, data) FROM '{exported}'"],
        tmp_path,
    )
    assert result.returncode == 0, result.stderr
    copied = {row.name: row.data for row in session.execute("SELECT name, data FROM formats_copy")}
    session.shutdown()
    assert copied == {s.name: s.data for s in SAMPLES}


def test_help_and_version_name_both(tmp_path):
    out = run(CQLSH_EXT, ["--help"], tmp_path).stdout
    assert "--request-timeout" in out and "--decompress" in out and "--max-field-width" in out
    out = run(CQLSH_EXT, ["--version"], tmp_path).stdout
    assert re.match(r"cqlsh-ext \S+ \(cqlsh 6\.2\.\d+, cassandra-driver \S+\)", out)


def test_version_reads_at_80_columns_with_every_word_whole(tmp_path):
    # The engine's line (the formats the core reads, ~290 characters) was cut by the terminal mid-word.
    from repl.terminal import Term

    piped = run(CQLSH_EXT, ["--version"], tmp_path).stdout  # a script's: each line whole
    shown = Term(["--version"], tmp_path, rows=40, cols=80)
    assert shown.finish() == 0, shown.tail()
    rows = [row for row in shown.display() if row]
    # The same words, each whole: a word the terminal cut at its edge reads as two pieces.
    assert " ".join(" ".join(rows).split()) == " ".join(piped.split())
    assert max(len(line) for line in piped.splitlines()) > 80  # (the engine's line is a long one)


def test_cqlsh_flags_still_work(cassandra, ks, tmp_path):
    out = ext(cassandra, tmp_path, "-k", ks, "--request-timeout", "20", "--connect-timeout", "20",
              "--no-color", "-e", "SELECT data FROM formats WHERE name = 'gzip'").checked_stdout()
    assert "[gzip]" in out and "\x1b[" not in out
    colored = ext(cassandra, tmp_path, "-k", ks, "-C", "-e",
                  "SELECT data FROM formats WHERE name = 'gzip'").checked_stdout()
    assert "\x1b[" in colored and "[gzip]" in colored


def _one_line_error(result) -> str:
    """The one line a failed connection prints: exit status 1, no traceback, nothing on stdout."""
    assert result.returncode == 1, result
    assert "Traceback" not in result.stderr and result.stdout == "", result
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, result.stderr
    return lines[0]


@contextlib.contextmanager
def refusing_port():
    """A loopback port bound by this test and not listening: connecting to it is refused, whatever
    else runs on the machine."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        yield sock.getsockname()[1]


def test_a_mistyped_host_is_one_line(tmp_path):
    # .invalid never resolves (RFC 2606): the resolver's own failure, as a typo meets it.
    result = run(CQLSH_EXT, ["nosuchhost.invalid", "-e", "SELECT now() FROM system.local"], tmp_path)
    line = _one_line_error(result)
    assert line.startswith("Connection error: the host name in nosuchhost.invalid:9042 does not resolve (")
    assert "check its spelling" in line
    # The demo loader connects through the same wrapper.
    demo = run(CQLSH_EXT, ["demo", "load", "nosuchhost.invalid", "9043"], tmp_path)
    assert _one_line_error(demo).startswith("cqlsh-ext demo: the host name in nosuchhost.invalid:9043 "
                                            "does not resolve (")


def test_a_port_nothing_listens_on_is_one_line(tmp_path):
    with refusing_port() as port:
        result = run(CQLSH_EXT, ["127.0.0.1", str(port), "-e", "SELECT now() FROM system.local"], tmp_path)
        demo = run(CQLSH_EXT, ["demo", "load", "127.0.0.1", str(port)], tmp_path)
    line = _one_line_error(result)
    assert line.startswith(f"Connection error: nothing listens on 127.0.0.1:{port}: check the host and port")
    assert "9042" in line  # the port a Cassandra listens on by default
    assert _one_line_error(demo).startswith(f"cqlsh-ext demo: nothing listens on 127.0.0.1:{port}")


@contextlib.contextmanager
def http_port():
    """A loopback port where an HTTP server answers whatever it is sent: not CQL."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen()
    stop = threading.Event()

    def answer() -> None:
        server.settimeout(0.2)
        while not stop.is_set():
            try:
                conn, _ = server.accept()
            except OSError:
                continue
            with conn:
                conn.settimeout(5)
                with contextlib.suppress(OSError):
                    conn.recv(4096)
                    conn.sendall(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n")

    thread = threading.Thread(target=answer, daemon=True)
    thread.start()
    try:
        yield server.getsockname()[1]
    finally:
        stop.set()
        thread.join()
        server.close()


def test_a_port_that_answers_something_else_than_cql_is_one_line(tmp_path):
    with http_port() as port:
        result = run(CQLSH_EXT, ["127.0.0.1", str(port), "-e", "SELECT now() FROM system.local"], tmp_path)
    line = _one_line_error(result)
    assert line.startswith(f"Connection error: 127.0.0.1:{port} answers, but not in CQL: another kind of "
                           "server listens on that port; check the port"), line
    assert "ProtocolError" not in result.stderr and "protocol version" not in result.stderr


def _credentials(home: Path, username: str, password: str) -> None:
    """~/.cassandra/credentials, which cqlsh reads by default (-p would add cqlsh's warning lines)."""
    (home / ".cassandra").mkdir(parents=True, exist_ok=True)
    creds = home / ".cassandra" / "credentials"
    creds.write_text(f"[plain_text_auth]\nusername = {username}\npassword = {password}\n")
    creds.chmod(0o600)


def test_a_refused_login_and_a_missing_keyspace_are_one_line(cassandra, tmp_path):
    where = f"{cassandra.host}:{cassandra.port}"
    server = [cassandra.host, str(cassandra.port), "-e", "SELECT now() FROM system.local"]
    # No credentials at all: what is needed, and the ways to give it.
    none = run(CQLSH_EXT, server, tmp_path / "no-credentials")
    assert _one_line_error(none) == (
        f"Connection error: {where} needs a user name and password to log in: give them with -u USER "
        "-p PASSWORD, or in a credentials file (--credentials FILE; ~/.cassandra/credentials is read by "
        "default)")
    _credentials(tmp_path, cassandra.username, "not-the-password")
    wrong = run(CQLSH_EXT, server, tmp_path)
    line = _one_line_error(wrong)
    assert line.startswith(f"Connection error: Bad credentials: {where} refused the login (")
    assert "check -u/-p, or the credentials file" in line and "not-the-password" not in wrong.stderr
    _credentials(tmp_path, cassandra.username, cassandra.password)
    missing = run(CQLSH_EXT, [*server, "-k", "no_such_keyspace"], tmp_path)
    line = _one_line_error(missing)
    assert line.startswith(f"Connection error: {where} could not use keyspace 'no_such_keyspace'")
    assert "check that it exists (-k" in line


def test_zstd_bomb_is_cut_at_the_cap_in_bounded_memory(cassandra, ks, tmp_path):
    compressor = zstandard.ZstdCompressor(level=19).compressobj(size=1 << 30)
    zeros = b"\0" * (1 << 20)
    bomb = b"".join(compressor.compress(zeros) for _ in range(1024)) + compressor.flush()
    session = cassandra.session(ks)
    session.execute("CREATE TABLE IF NOT EXISTS bombs (id int PRIMARY KEY, data blob)")
    session.execute("INSERT INTO bombs (id, data) VALUES (1, %s)", (bomb,))
    session.shutdown()
    result = run(
        CQLSH_EXT, [*cassandra.cqlsh_args, "-e", f"SELECT data FROM {ks}.bombs"], tmp_path, measure_rss=True
    )
    assert result.returncode == 0, result.stderr
    assert "[zstd, first 4.0 MiB of 1.0 GiB]" in result.stdout
    assert result.max_rss_kib is not None and result.max_rss_kib < 200 * 1024, result.max_rss_kib


JAVA_EXPECT = {
    "snappy_raw": "snappy",
    "snappy_xerial": "snappy/xerial",
    "snappy_framed": "snappy/framed",
    "lz4_java_block": "lz4/LZ4Block",
    "lz4_frame": "lz4/frame",
    "zstd": "zstd",
    "gzip": "gzip",
    "zlib": "zlib",
    "java_string": "java",
    "gzip_java_string": "gzip>java",
}


def test_values_written_by_java_producers(cassandra, tmp_path):
    from java_producers import PRODUCERS, java_produce

    # Multi-block for the streams (xerial 32 KiB, LZ4Block 64 KiB) and a long Java string.
    doc = "[" + ",".join(next(documents(1, seed=n)) for n in range(40)) + "]"
    assert len(doc) > 70_000
    blobs = java_produce(doc.encode())
    assert set(blobs) == set(PRODUCERS)
    ks = cassandra.create_keyspace("java")
    session = cassandra.session(ks)
    session.execute("CREATE TABLE produced (name text PRIMARY KEY, data blob)")
    insert = session.prepare("INSERT INTO produced (name, data) VALUES (?, ?)")
    for name, blob in blobs.items():
        session.execute(insert, (name, blob))
    session.shutdown()
    cells = rows_by_name(ext(cassandra, tmp_path, "-e", f"SELECT name, data FROM {ks}.produced")
                         .checked_stdout())
    for name, label in JAVA_EXPECT.items():
        assert cells[name] == f"[{label}] {doc}", f"{name}: {cells[name][:100]}"
    assert cells["gzip_java_object"] == '[gzip>java] ["cqlsh-ext",42]'  # read, never deserialized



@pytest.mark.java
def test_jdk_objects_are_shown_as_written_in_table_and_json(cassandra, tmp_path):
    from java_producers import java_serialized_objects

    blobs = java_serialized_objects()
    names = ["gzip_linked_hash_map", "gzip_order", "gzip_array_list", "hash_map_int_keys", "cyclic_list",
             "shared_bomb"]
    ks = cassandra.create_keyspace("jdk")
    session = cassandra.session(ks)
    session.execute("CREATE TABLE produced (name text PRIMARY KEY, data blob)")
    insert = session.prepare("INSERT INTO produced (name, data) VALUES (?, ?)")
    for name in names:
        session.execute(insert, (name, blobs[name]))
    session.shutdown()
    select = f"SELECT name, data FROM {ks}.produced"
    cells = rows_by_name(ext(cassandra, tmp_path, "-e", select).checked_stdout())
    # What SerializedObjects.java put in, as a reader would write it down.
    assert cells["gzip_linked_hash_map"] == ('[gzip>java] {"id":7,"name":"widget","tags":["x","y"],'
                                             '"price":BigDecimal("19.99")}')
    assert cells["gzip_array_list"] == '[gzip>java] ["a",1,2.5,null,true]'
    assert cells["hash_map_int_keys"] == '[java] {"1":"one","2":"two"}'  # JSON's keys, like msgpack's
    assert cells["cyclic_list"] == '[java] ["self",cycle("back to the enclosing java.util.ArrayList")]'
    order = cells["gzip_order"]
    assert order.startswith('[gzip>java] SerializedObjects$Order({') and '"customer":"customer-07"' in order
    assert 'java.time.DayOfWeek("MONDAY")' in order
    # A shared-reference bomb: named by its class, with why it was not read; the shell lives on.
    assert cells["shared_bomb"].startswith("[java] object java.util.ArrayList (not deserialized) "
                                           "(java serialization: more than 100,000 values")

    out = ext(cassandra, tmp_path, "--output-format", "json", "-e", select).checked_stdout()
    rows = {row["name"]: row["data"] for row in map(json.loads, out.splitlines())}
    assert rows["gzip_linked_hash_map"] == {
        "label": "gzip>java", "kind": "record", "confidence": "confident",
        "payload": {"id": 7, "name": "widget", "tags": ["x", "y"],
                    "price": {"$tag": "BigDecimal", "value": "19.99"}}}
    assert rows["gzip_order"]["payload"]["$tag"] == "SerializedObjects$Order"
    assert rows["gzip_order"]["payload"]["value"]["items"] == ["book", "pen"]


_THREADS_AT_EXIT = entry_reporting_at_exit(
    "'threads-at-exit=' + ','.join(t.name for t in threading.enumerate()"
    " if t is not threading.main_thread() and t.is_alive())")


def test_driver_reactor_is_stopped_before_the_interpreter_exits(cassandra, tmp_path):
    # A reactor thread still running native code while Python finalizes can crash the process
    # after the output is written (cassandra-driver <= 3.29.3 left it running: exit -11 seen in CI).
    result = run(sys.executable, ["-c", _THREADS_AT_EXIT, *cassandra.cqlsh_args, "-e",
                                  "SELECT release_version FROM system.local"], tmp_path)
    assert result.returncode == 0, result.stderr
    threads = re.search(r"threads-at-exit=(.*)", result.stderr)
    assert threads, result.stderr
    assert "event_loop" not in threads.group(1).split(",")


def test_scripts_keep_whole_values_without_padding_the_other_rows(cassandra, ks, tmp_path):
    # An undecodable value (its whole hex, kilobytes long) in -e output: written whole, and the other
    # rows of its column are not padded out to its width.
    s = cassandra.session(ks)
    s.execute("CREATE TABLE IF NOT EXISTS padding (name text PRIMARY KEY, data blob)")
    huge = bytes(range(256)) * 8
    for name, value in (("a", b"\x01\x02"), ("b", gzip.compress(b"small", mtime=0)), ("c", huge),
                        ("d", b"\xff" * 10)):
        s.execute("INSERT INTO padding (name, data) VALUES (%s, %s)", (name, value))
    s.shutdown()
    out = ext(cassandra, tmp_path, "-e", f"SELECT name, data FROM {ks}.padding").checked_stdout()
    rows = {line.split("|")[0].strip(): line for line in out.splitlines() if " | " in line}
    assert ("0x" + huge.hex()) in rows["c"]  # whole, never cut
    assert "…" not in out
    for name in ("a", "b", "d"):  # short values keep short lines
        assert len(rows[name]) < 60, rows[name]
    assert rows["b"].endswith("[gzip] small")
    # As docs/interactive.md says: the rule under the header is as wide as the column
    # without the long value, so narrower than it; the other rows line up under the rule.
    rule = next(line for line in out.splitlines() if re.fullmatch(r"-+\+-+", line))
    assert len(rule) < len(rows["c"]) and len(rule) == len(rows["a"]) + 1 == len(rows["b"]) + 1


def test_cqlsh_blob_test_values_print_as_stock_even_in_auto_mode(cassandra, ks, tmp_path):
    # The rows of cqlsh's own pty test for blobs (test_blob_output in cqlshlib/test): plain binary
    # values must look exactly as stock cqlsh prints them, decoding on or off, --classic or not.
    s = cassandra.session(ks)
    s.execute("CREATE TABLE IF NOT EXISTS blob_output (k int PRIMARY KEY, b blob)")
    for k, value in enumerate((b"\x00\x01\x02\x03\x04\x05\xff\xfe\xfd", b"\xff" * 9, b"", b"\x80")):
        s.execute("INSERT INTO blob_output (k, b) VALUES (%s, %s)", (k, value))
    s.shutdown()
    statement = f"SELECT * FROM {ks}.blob_output"
    stock = without_patch_warning(run(STOCK_CQLSH, [*cassandra.cqlsh_args, "-e", statement], tmp_path).stdout)
    for flags in ((), ("--classic",), ("-d", "auto")):
        assert ext(cassandra, tmp_path, *flags, "-e", statement).checked_stdout() == stock
    for shown in ("0x000102030405fffefd", "0xffffffffffffffffff", " 0x\n", "0x80"):
        assert shown in stock
