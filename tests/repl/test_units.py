"""The pieces of the front end and of the output formats that need no server."""

from __future__ import annotations

import datetime
import decimal
import gzip
import io
import json
import os
import shutil
import stat
import sys
import threading
import time
import uuid
from pathlib import Path

import pytest
from cassandra import cqltypes, util

from cqlsh_ext.common.jsonenc import float32_text
from cqlsh_ext.output.spellings import CsvSpelling, JsonSpelling
from cqlsh_ext.repl.history import SafeFileHistory, carries_password
from cqlsh_ext.repl.pager import NoPager, PagedOutput, pager_command
from cqlsh_ext.repl.statement_end import is_complete
from cqlsh_ext.settings import DisplaySettings, SettingError, Settings, load


@pytest.fixture(scope="module")
def ruleset():
    from cqlsh_ext.upstream import seams

    cqlshmain = seams.import_cqlshmain(None)
    if cqlshmain.cqlruleset is None:
        from cqlshlib import cql3handling

        from cqlsh_ext.shell.completion import register_grammar

        register_grammar()
        cqlshmain.setup_cqlruleset(cql3handling)
    return cqlshmain.cqlruleset


# ---------------------------------------------------------------- statement end

@pytest.mark.parametrize("text, complete", [
    ("SELECT * FROM t;", True),
    ("SELECT * FROM t", False),
    ("SELECT * FROM t WHERE a = ';'", False),
    ("SELECT * FROM t WHERE a = ';';", True),
    ("BEGIN BATCH INSERT INTO t (a) VALUES (1);", False),
    ("BEGIN BATCH INSERT INTO t (a) VALUES (1); APPLY BATCH;", True),
    ("CREATE FUNCTION f() RETURNS NULL ON NULL INPUT RETURNS int LANGUAGE java AS $$ return 1;", False),
    ("CREATE FUNCTION f() RETURNS NULL ON NULL INPUT RETURNS int LANGUAGE java AS $$ return 1; $$;", True),
    ("SELECT 1; SELECT", False),
    ("/* a comment", False),
    ("-- only a comment", True),
    ("", True),
    ("HELP", True),  # shell commands end at the newline
    ("EXPAND ON", True),
    ("DECOMPRESS gzip", True),
    ("OUTPUT FORMAT json", True),
    ("SELECT é", True),  # not lexable: run it, so cqlsh reports the error
])
def test_is_complete(ruleset, text, complete):
    assert is_complete(text, ruleset) is complete


@pytest.mark.parametrize("before, data, joined", [
    # A hint wrapped on a narrow screen: the path broken inside its quotes (kept: the journal's
    # reader takes the break out), CONFIRM on a line of its own (joined: UNDO ends at a newline).
    ("", "UNDO '/home/me/.cassandra/journal/\n    edit-ks.t-20261126T194055-3fa9c2d1.jsonl'\n    CONFIRM",
     "UNDO '/home/me/.cassandra/journal/\n    edit-ks.t-20261126T194055-3fa9c2d1.jsonl' CONFIRM"),
    ("", "COMPRESSION REWRITE RESUME 'abc'\r\n    CONFIRM;", "COMPRESSION REWRITE RESUME 'abc' CONFIRM;"),
    ("UNDO 'abc'", "\n  CONFIRM", " CONFIRM"),  # pasted after what was typed
    # Anything else keeps its lines: CQL goes on over lines, a statement ended by ';' is ended,
    # a line not indented starts a statement of its own.
    ("", "SELECT *\n    FROM t;", "SELECT *\n    FROM t;"),
    ("", "EXPAND ON;\n    SELECT 1;", "EXPAND ON;\n    SELECT 1;"),
    ("", "EXPAND ON\nSELECT * FROM t;", "EXPAND ON\nSELECT * FROM t;"),
    ("", "UPDATE t SET a = 'x\n    y' WHERE k = 1;", "UPDATE t SET a = 'x\n    y' WHERE k = 1;"),
])
def test_a_paste_runs_a_wrapped_command_as_one_statement(ruleset, before, data, joined):
    from cqlsh_ext.repl.statement_end import pasted

    assert pasted(before, data, ruleset) == joined


def test_highlighting_classes_cql_tokens(ruleset):
    from cqlsh_ext.repl.highlight import CqlLexer

    lexer = CqlLexer(ruleset)
    assert lexer.fragments("") == []
    assert lexer.scan is None  # nothing built for the empty first prompt
    text = "SELECT id FROM ks.t WHERE name = 'a;b' -- why\nAND n = 3;"
    fragments = lexer.fragments(text)
    assert "".join(t for _, t in fragments) == text  # every character is drawn, once
    styles = {t: s for s, t in fragments}
    assert styles["SELECT"] == styles["FROM"] == styles["WHERE"] == "class:cql.keyword"
    assert styles["id"] == styles["name"] == ""  # names are not keywords
    assert styles["'a;b'"] == "class:cql.string"
    assert styles["-- why"] == "class:cql.comment"
    assert styles["3"] == "class:cql.number"


def test_payload_paths_are_one_token_in_a_select(ruleset):
    from cqlsh_ext.repl.highlight import CqlLexer

    lexer = CqlLexer(ruleset)
    text = ("SELECT pk, data.status, data.\"order-id\", data.items[0].sku, data.key, m['k'].n "
            "FROM ks.t WHERE data.customer.tier = 'gold' GROUP BY data.select;\n"
            "UPDATE ks.t SET x.y = 1")
    fragments = lexer.fragments(text)
    assert "".join(t for _, t in fragments) == text
    paths = [t for s, t in fragments if s == "class:cql.path"]
    assert paths == ["data.status", 'data."order-id"', "data.items[0].sku", "data.key", "m['k'].n",
                     "data.customer.tier", "data.select"]
    styles = {t: s for s, t in fragments}
    # The table name stays a name and a dot; a keyword after a path stays a keyword.
    assert styles["ks"] == styles["t"] == "" and styles["FROM"] == styles["GROUP"] == "class:cql.keyword"
    assert styles["'gold'"] == "class:cql.string"
    assert "x.y" not in styles and styles["x"] == ""  # only in a SELECT
    # A path being typed: the part written so far is the path, the open bracket is not.
    fragments = lexer.fragments("SELECT data.items[")
    assert fragments[-2:] == [("class:cql.path", "data.items"), ("class:cql.operator", "[")]


# ---------------------------------------------------------------- history

@pytest.mark.parametrize("text", [
    "LOGIN admin 'pw'",
    "login admin",
    "SELECT 1; LOGIN admin 'x'",
    "/* again */ LOGIN admin 'pw'",  # cqlsh's lexer skips the comment: it logs in
    "-- who\nlogin admin 'pw'",
    "SELECT 1; /* x */ // y\n LOGIN admin 'x'",
    "CREATE ROLE r WITH PASSWORD = 'x' AND LOGIN = true;",
    "ALTER ROLE r WITH HASHED PASSWORD = '$2a$10$...';",
    "CREATE USER u WITH PASSWORD 'x';",
    "ALTER USER u WITH PASSWORD 'y';",
    "INSERT INTO users (name, passwd) VALUES ('a', 'b');",
    "cqlsh -u admin -p secret",
    "cqlsh --password=secret",
])
def test_passwords_are_recognised(text):
    assert carries_password(text)


@pytest.mark.parametrize("text", [
    "SELECT * FROM logins;",  # 'login' inside a word
    "SELECT * FROM t WHERE a-p = 1;",
    "CREATE ROLE r WITH LOGIN = true;",
    "DESCRIBE KEYSPACES",
    "SELECT login FROM t; -- login",
    "-" * 20_000 + ";" + "/*" * 5_000,  # (read at once: no backtracking over the comment marks)
])
def test_ordinary_statements_are_kept(text):
    assert not carries_password(text)


def test_history_file_skips_passwords_and_is_private(tmp_path):
    path = tmp_path / "hist"
    history = SafeFileHistory(str(path))
    history.append_string("SELECT 1;")
    history.append_string("CREATE ROLE r WITH PASSWORD = 'hunter2';")
    history.append_string("SELECT\n2;")
    assert history.get_strings() == ["SELECT 1;", "SELECT\n2;"]
    text = path.read_text()
    assert "hunter2" not in text and "+SELECT\n+2;\n" in text
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    # Written earlier by something else: not offered either.
    with open(path, "a") as f:
        f.write("\n# old\n+LOGIN admin 'pw'\n")
    assert list(SafeFileHistory(str(path)).load_history_strings()) == ["SELECT\n2;", "SELECT 1;"]


def test_history_not_saved_when_disabled(tmp_path):
    history = SafeFileHistory(str(tmp_path / "hist"), save=False)
    history.append_string("SELECT 1;")
    assert history.get_strings() == ["SELECT 1;"] and not (tmp_path / "hist").exists()


# ---------------------------------------------------------------- pager

def test_pager_command_choice(monkeypatch):
    monkeypatch.setenv("PAGER", "cat -v")
    assert pager_command(None) == "cat -v"
    assert pager_command("") is NoPager.OFF  # [cqlsh_ext] pager = off
    monkeypatch.setenv("PAGER", "")
    assert pager_command(None) is NoPager.OFF  # an empty $PAGER means none, as in psql
    monkeypatch.delenv("PAGER")
    assert pager_command(None) == ("less -SRXFK" if _has("less") else NoPager.NOT_FOUND)
    assert pager_command("no-such-pager-anywhere") is NoPager.NOT_FOUND


def test_read_only_runs_only_less_or_no_pager(monkeypatch, tmp_path):
    """Under --read-only (secure) a pager with no secure mode is replaced by less; without less
    installed, none runs (cqlsh's own ---MORE--- pauses); less itself keeps the user's flags."""
    sh, only_more = shutil.which("sh") or "/bin/sh", tmp_path / "bin"
    only_more.mkdir()
    (only_more / "more").symlink_to(sh)
    monkeypatch.setenv("PATH", str(only_more))
    assert pager_command("more") == "more"
    assert pager_command("more", secure=True) is NoPager.NOT_FOUND
    (only_more / "less").symlink_to(sh)
    assert pager_command("more", secure=True) == "less -SRXFK"
    assert pager_command("less -R", secure=True) == "less -R"
    assert pager_command("", secure=True) is NoPager.OFF


def _has(program: str) -> bool:
    import shutil

    return shutil.which(program) is not None


def test_the_shells_long_outputs_are_paged_and_its_reads_let_ctrl_c_go():
    from cqlsh_ext.repl.app import _reads_only
    from cqlsh_ext.repl.pager import is_paged

    # INSPECT and COMPRESSION are paged as SELECT is; UNDO and COMPRESSION REWRITE write.
    assert [is_paged(word) for word in ("INSPECT", "compression", "select", "undo", "insert")] == \
        [True, True, True, False, False]
    typed = (("inspect", "INSPECT SELECT data FROM t"), ("undo", "UNDO LAST"), ("decompress", "DECOMPRESS"))
    assert [_reads_only(word, text) for word, text in typed] == [True, False, True]


def test_paged_output_holds_short_results_and_pipes_long_ones(tmp_path):
    out = io.StringIO()
    short = PagedOutput(out, f"cat > {tmp_path / 'p1'}", max_lines=5)
    short.write("a\nb\n")
    short.finish()
    assert out.getvalue() == "a\nb\n" and not (tmp_path / "p1").exists()
    long = PagedOutput(out, f"cat > {tmp_path / 'p2'}", max_lines=5)
    for i in range(20):
        long.write(f"line {i}\n")
    long.finish()
    assert (tmp_path / "p2").read_text().count("\n") == 20
    assert out.getvalue() == "a\nb\n"


# ---------------------------------------------------------------- values

@pytest.fixture
def enc() -> JsonSpelling:
    return JsonSpelling(DisplaySettings())


def test_numbers_stay_numbers(enc):
    assert enc.value(2**70, cqltypes.IntegerType) == str(2**70)
    pi = "3.14159265358979323846"
    assert enc.value(decimal.Decimal(pi), cqltypes.DecimalType) == pi
    assert enc.value(1.100000023841858, cqltypes.FloatType) == "1.1"
    assert enc.value(0.1, cqltypes.DoubleType) == "0.1"
    assert enc.value(float("nan"), cqltypes.DoubleType) == '"NaN"'
    assert enc.value(float("-inf"), cqltypes.FloatType) == '"-Infinity"'
    assert enc.value(True, cqltypes.BooleanType) == "true"
    assert enc.value(cqltypes.EMPTY, cqltypes.Int32Type) == "null"


def test_float32_text_round_trips():
    import struct

    for value in (1.1, 3.4028235e38, 1e-45, 0.0, -2.5, 123456.789):
        single = struct.unpack(">f", struct.pack(">f", value))[0]
        text = float32_text(single)
        assert struct.pack(">f", float(text)) == struct.pack(">f", single)


def test_times_and_ids_are_strings(enc):
    ts = datetime.datetime(2024, 1, 2, 3, 4, 5, 678000)
    assert enc.value(ts, cqltypes.DateType) == '"2024-01-02T03:04:05.678Z"'
    assert enc.value(253402300800000 * 10, cqltypes.DateType) == "2534023008000000"  # beyond datetime
    u = uuid.UUID("5b6962dd-3f90-4c93-8f61-eabfa4a803e2")
    assert enc.value(u, cqltypes.UUIDType) == f'"{u}"'
    assert enc.value(util.Date(19725), cqltypes.SimpleDateType) == '"2024-01-03"'
    assert enc.value(util.Duration(14, 3, 4 * 3600 * 10**9), cqltypes.DurationType) == '"1y2mo3d4h"'


def test_collections_maps_tuples_udts(enc):
    list_int = cqltypes.ListType.apply_parameters([cqltypes.Int32Type])
    assert enc.value([1, 2], list_int) == "[1, 2]"
    map_int_text = cqltypes.MapType.apply_parameters([cqltypes.Int32Type, cqltypes.UTF8Type])
    assert json.loads(enc.value({1: "a"}, map_int_text)) == {"1": "a"}
    map_uuid_ts = cqltypes.MapType.apply_parameters([cqltypes.UUIDType, cqltypes.DateType])
    u = uuid.uuid4()
    assert json.loads(enc.value({u: datetime.datetime(2020, 1, 1)}, map_uuid_ts)) == {
        str(u): "2020-01-01T00:00:00.000Z"}
    tup = cqltypes.TupleType.apply_parameters([cqltypes.Int32Type, cqltypes.UTF8Type])
    assert enc.value((7, "x"), tup) == '[7, "x"]'
    udt = cqltypes.UserType.make_udt_class("ks", "addr", ("street", "zip"),
                                           (cqltypes.UTF8Type, cqltypes.Int32Type))
    assert json.loads(enc.value(("Main", 12345), udt)) == {"street": "Main", "zip": 12345}


def test_blob_objects(enc):
    doc = {"a": [1, 2.5, {"b": "x\ny"}]}
    stored = gzip.compress(b'{\n  "a": [1, 2.50,\n {"b": "x\\ny"}]\n}', mtime=0)
    text = enc.value(stored, cqltypes.BytesType)
    assert "\n" not in text  # one JSON Lines line, even for an indented payload
    assert '"payload": {"a":[1,2.50,{"b":"x\\ny"}]}' in text  # embedded as stored, numbers untouched
    assert json.loads(text) == {"label": "gzip>json", "kind": "text", "confidence": "confident",
                                 "payload": doc}
    plain = gzip.compress(b"hello", mtime=0)
    assert json.loads(enc.value(plain, cqltypes.BytesType)) == {"label": "gzip>text", "kind": "text",
                                                                "confidence": "confident", "payload": "hello"}
    assert enc.value(b"\x00\x01\x02\x03\x04\x05", cqltypes.BytesType) == '"0x000102030405"'
    assert CsvSpelling(DisplaySettings()).value(plain, cqltypes.BytesType) == "hello"
    raw = DisplaySettings(raw_blobs=True)
    assert json.loads(JsonSpelling(raw).value(plain, cqltypes.BytesType))["raw"] == "0x" + plain.hex()
    assert CsvSpelling(raw).value(plain, cqltypes.BytesType) == "0x" + plain.hex()


def test_csv_fields():
    csv_field = CsvSpelling(DisplaySettings()).value
    assert csv_field(None, cqltypes.Int32Type) == ""
    assert csv_field("a,b", cqltypes.UTF8Type) == "a,b"
    assert csv_field(datetime.datetime(2024, 1, 1), cqltypes.DateType) == "2024-01-01T00:00:00.000Z"
    assert csv_field([1, 2], cqltypes.ListType.apply_parameters([cqltypes.Int32Type])) == "[1, 2]"


# ---------------------------------------------------------------- settings

def test_cqlshrc_settings(tmp_path: Path):
    rc = tmp_path / "cqlshrc"
    rc.write_text("[cqlsh_ext]\noutput_format = CSV\nraw_blobs = yes\nclassic = on\n"
                  "auto_vertical = false\npager = off\n")
    settings = load(None, str(rc)).display
    assert (settings.output_format.name, settings.raw_blobs, settings.classic, settings.auto_vertical,
            settings.pager) == ("csv", True, True, False, "")
    rc.write_text("[cqlsh_ext]\noutput_format = xml\n")
    with pytest.raises(SettingError, match="output format 'xml'"):
        load(None, str(rc))
    rc.write_text("[cqlsh_ext]\nclassic = maybe\n")
    with pytest.raises(SettingError, match="not a boolean"):
        load(None, str(rc))


def test_prompt_toolkit_is_not_imported_by_the_shell_module():
    import subprocess

    code = ("import sys; sys.argv=['x']; import cqlsh_ext.cli, cqlsh_ext.shell.ext_shell; "
            "print(any(m.startswith('prompt_toolkit') for m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


class _ShellWithPrompt:
    """A shell whose prompt is already built: the preload's work is then only its import."""

    repl_session = object()


def test_preload_waits_for_the_main_thread_to_block_then_builds():

    from cqlsh_ext.repl.shellhooks import Preload

    preload = Preload(_ShellWithPrompt())
    # Busy main thread (the handshake): the preload must not start.
    busy_until = time.monotonic() + 0.1
    while time.monotonic() < busy_until:
        pass
    assert preload.thread.is_alive()
    # Main thread waiting (as for the server's password check): it goes ahead without join().
    # The wait ends on the build's end, not on a time (a loaded machine takes longer).
    finished = threading.Event()
    threading.Thread(target=lambda: (preload.thread.join(), finished.set()), daemon=True).start()
    assert finished.wait(120), "the preload never went ahead while the main thread waited"
    assert not preload.needed.is_set()


def test_preload_join_does_not_wait_for_an_idle_main_thread():
    from cqlsh_ext.repl.shellhooks import Preload

    preload = Preload(_ShellWithPrompt())
    done = threading.Thread(target=preload.join, daemon=True)
    done.start()
    done.join(timeout=30)  # the loop needs the prompt now: no waiting for idleness
    assert not done.is_alive()


class _ToolbarShell:
    hostname, port, current_keyspace = "cassandra.eu-west-1.amazonaws.com", 9142, "orders_ks"
    consistency_level, page_size, use_paging, tracing_enabled = 6, 100, True, True
    settings = Settings()
    expand_enabled = False


def test_toolbar_shortens_before_it_leaves_anything_out():
    from cqlsh_ext.repl.toolbar import toolbar_fragments

    def text(width: int, pending: bool, opened: str | None = None) -> str:
        return "".join(t for _, t in toolbar_fragments(_ToolbarShell(), pending=pending, width=width,
                                                      opened=opened))

    wide = text(200, pending=True)
    for part in ("host cassandra.eu-west-1", "keyspace orders_ks", "consistency LOCAL_QUORUM",
                 "decompress auto", "paging 100", "output table", "tracing on", "end the statement with ;"):
        assert part in wide
    # Short labels and hint: every item still there.
    middle = text(130, pending=True)
    assert len(middle) <= 130 and "end with ;" in middle
    for part in ("cassandra.eu-west-1.amazonaws.com:9142", "ks:orders_ks", "cl:LOCAL_QUORUM", "dec:auto",
                 "page:100", "out:table", "trace:on"):
        assert part in middle
    # Narrower: the keyspace (the prompt shows it), then the host go before any setting.
    narrow = text(80, pending=True)
    assert len(narrow) <= 80 and "end with ;" in narrow
    assert "orders_ks" not in narrow and "amazonaws" not in narrow
    for part in ("cl:LOCAL_QUORUM", "dec:auto", "page:100", "out:table", "trace:on"):
        assert part in narrow
    assert "a string is open: close it with '" in text(200, pending=True, opened="'")
    assert "close it with $$" in text(80, pending=True, opened="$$")


@pytest.mark.parametrize(("text", "opened"), [
    ("SELECT * FROM t WHERE a = 'abc", "'"),
    ("SELECT * FROM t WHERE a = 'abc;", "'"),
    ('SELECT "Col', '"'),
    ("SELECT $$ abc", "$$"),
    ("SELECT /* why", "*/"),
    ("SELECT * FROM t WHERE a = 'it''s'", None),
    ("SELECT 1;", None),
])
def test_input_state_names_what_is_left_open(ruleset, text, opened):
    from cqlsh_ext.repl.statement_end import input_state

    complete, left_open = input_state(text, ruleset)
    assert left_open == opened
    assert complete is (text == "SELECT 1;")


def test_completion_offers_nothing_past_what_cqlsh_s_grammar_reads(ruleset):
    # A pasted 20,000-key IN list, then a keystroke: cqlsh's grammar, quadratic in the tokens, once
    # took gigabytes there. Past its bound nothing is offered; a short statement is completed.
    from cqlsh_ext.repl.completer import CqlCompleter

    completer = CqlCompleter(None, ruleset)  # type: ignore[arg-type]  # no schema names asked here
    keys = ",".join(str(i) for i in range(20_000))
    assert completer.candidates(f"SELECT * FROM ks.t WHERE id IN ({keys}) ", "ALL") == ([], [])
    found, _ = completer.candidates("SELECT * FROM ks.t WHERE id IN (1,2) ", "ALL")
    assert "ALLOW" in [word.strip() for word in found]
