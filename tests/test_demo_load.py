"""`cqlsh-ext demo load` as a user runs it: every argument explained in --help, the login found as
cqlsh finds it (-u/-p, then a credentials file that only its owner can read), status on stderr and
the counts on stdout."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest
from shell_runner import CQLSH_EXT, isolated_env, run


def _credentials(path: Path, username: str, password: str, mode: int = 0o600) -> Path:
    path.write_text(f"[plain_text_auth]\nusername = {username}\npassword = {password}\n")
    os.chmod(path, mode)
    return path


def test_help_explains_every_argument(tmp_path: Path):
    out = run(CQLSH_EXT, ["demo", "load", "--help"], tmp_path)
    assert out.returncode == 0, out.stderr
    text = re.sub(r"\s+", " ", out.stdout)
    for argument, says in [("host", "the server"), ("port", "its CQL port"),
                           ("-u USERNAME, --username USERNAME", "user to log in as"),
                           ("-p PASSWORD, --password PASSWORD", "its password"),
                           ("--credentials FILE", "a credentials file as cqlsh reads it"),
                           ("-k KEYSPACE, --keyspace KEYSPACE", "the keyspace to create")]:
        assert f" {argument} {says}" in text, (argument, out.stdout)


@pytest.fixture(scope="module")
def loaded(cassandra, tmp_path_factory) -> str:
    """A demo keyspace loaded with the login from --credentials alone."""
    home = tmp_path_factory.mktemp("demo-load")
    keyspace = f"demo_creds_{os.getpid()}"
    creds = _credentials(home / "creds", cassandra.username, cassandra.password)
    out = run(CQLSH_EXT, ["demo", "load", "-k", keyspace, "--rows", "10", "--credentials", str(creds),
                          cassandra.host, str(cassandra.port)], home)
    assert out.returncode == 0, out.stderr
    assert f"cqlsh-ext demo: loading the demo data into {keyspace} (10 documents per JSON table) ..." \
        in out.stderr
    assert "password" not in out.stderr.lower()  # no warning: nothing was given on the command line
    assert out.stdout.splitlines() == [f"{keyspace}.table_with_compressed_json: 10 rows",
                                       f"{keyspace}.table_with_uncompressed_json: 10 rows",
                                       f"{keyspace}.blob_formats: 20 rows",
                                       f"{keyspace}.nested_blobs: 1 row"]
    return keyspace


def test_the_credentials_file_is_what_logs_in(cassandra, loaded, tmp_path: Path):
    wrong = _credentials(tmp_path / "wrong", cassandra.username, "not-the-password")
    out = run(CQLSH_EXT, ["demo", "load", "-k", loaded, "--if-missing", "--credentials", str(wrong),
                          cassandra.host, str(cassandra.port)], tmp_path)
    assert out.returncode == 1
    assert out.stderr.startswith(f"cqlsh-ext demo: Bad credentials: {cassandra.host}:{cassandra.port} "
                                 "refused the login (")
    assert "not-the-password" not in out.stdout + out.stderr
    # -u/-p come before the file, as in cqlsh.
    out = run(CQLSH_EXT, ["demo", "load", "-k", loaded, "--if-missing", "--credentials", str(wrong),
                          "-u", cassandra.username, "-p", cassandra.password,
                          cassandra.host, str(cassandra.port)], tmp_path)
    assert out.returncode == 0, out.stderr
    assert out.stdout == f"{loaded}: demo data already loaded\n"


def test_a_file_others_can_read_is_not_used(cassandra, loaded, tmp_path: Path):
    shared = _credentials(tmp_path / "shared", cassandra.username, "not-the-password", mode=0o644)
    env = {**isolated_env(tmp_path), "CQLSH_EXT_DEMO_PASSWORD": cassandra.password}
    out = subprocess.run([CQLSH_EXT, "demo", "load", "-k", loaded, "--if-missing",
                          "--credentials", str(shared), "-u", cassandra.username,
                          cassandra.host, str(cassandra.port)],
                         capture_output=True, text=True, timeout=120, env=env)
    assert out.returncode == 0, out.stderr
    assert out.stderr.splitlines() == [
        f"cqlsh-ext demo: credentials file {shared} not used: it must be yours and readable by you only "
        f"(chmod 600 {shared}), as cqlsh requires"]


def test_the_demo_s_dictionaries_written_alone_read_its_dictionary_rows(cassandra, loaded, tmp_path: Path):
    # `demo dictionaries DIR` (the Compose shell's, before it starts) writes the bytes `demo load`
    # wrote its values with: named by --dictionary, the rows that need them are decoded, not hex.
    out = run(CQLSH_EXT, ["demo", "dictionaries", str(tmp_path / "dicts")], tmp_path)
    assert out.returncode == 0 and not out.stdout and not out.stderr, out
    statement = f"SELECT name, data FROM {loaded}.blob_formats WHERE name IN ('zstd dictionary', " \
                "'zlib preset dictionary')"
    dicts = tmp_path / "dicts"
    shell = run(CQLSH_EXT, [*cassandra.cqlsh_args, "--dictionary", str(dicts / "demo.zstd-dict"),
                            "--dictionary", str(dicts / "demo.zlib-dict"), "-e", statement], tmp_path)
    assert shell.returncode == 0, shell.stderr
    assert 'zstd dictionary | [zstd] {"orderId":"ORD-' in shell.stdout, shell.stdout
    assert 'zlib preset dictionary | [zlib] {"orderId":"ORD-' in shell.stdout, shell.stdout


def test_a_long_load_shows_its_progress_on_the_terminal(cassandra, tmp_path: Path):
    # `demo load --rows 30000` said nothing for 2 min 53 s (issue 96, 8). At 80 columns, a status line
    # of the rows written so far, redrawn in place as each part is written, then cleared for the counts.
    from repl.terminal import Term, clean

    keyspace = f"demo_progress_{os.getpid()}"
    rows = 1500  # three parts of LOAD_CHUNK documents per table
    t = Term(["demo", "load", "-k", keyspace, "--rows", str(rows), cassandra.host, str(cassandra.port),
              "-u", cassandra.username, "-p", cassandra.password], tmp_path, rows=24, cols=80)
    assert t.finish(timeout=300) == 0, t.tail()
    drawn = [clean(line) for line in t.raw.split("\r") if "rows/s" in line]
    counts = [int(re.search(r": ([\d,]+) rows", line).group(1).replace(",", "")) for line in drawn]
    assert counts == [1000, 2000, 3000], drawn  # both tables, part by part
    assert all(line.startswith("demo load: ") and len(line) < 80 for line in drawn), drawn
    screen = [row for row in t.display() if row]
    assert not any("rows/s" in row for row in screen), screen  # cleared
    assert f"{keyspace}.table_with_compressed_json: 1,500 rows" in screen, screen


def test_a_load_into_a_pipe_says_its_progress_in_a_few_lines(cassandra, tmp_path: Path):
    # Into a pipe or a log, `demo load` said nothing for 80 s on 20,000 rows (no terminal, no status
    # line): a line at each tenth of the documents now, on stderr, the counts alone on stdout.
    keyspace = f"demo_piped_{os.getpid()}"
    out = run(CQLSH_EXT, ["demo", "load", "-k", keyspace, "--rows", "1000", cassandra.host,
                          str(cassandra.port), "-u", cassandra.username, "-p", cassandra.password], tmp_path,
              timeout=300)
    assert out.returncode == 0, out.stderr
    said = [line for line in out.stderr.splitlines() if line.startswith("demo load: ")]
    assert said == ["demo load: 1,000 of 2,000 documents written",
                    "demo load: 2,000 of 2,000 documents written"], out.stderr
    assert f"{keyspace}.table_with_compressed_json: 1,000 rows" in out.stdout.splitlines()
