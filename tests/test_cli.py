"""The command line as a user meets it: --help, pipes closed early, the version warning, settings errors."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from shell_runner import CQLSH_EXT, isolated_env, run


def test_help_is_one_usage_text_with_cqlsh_and_our_options(tmp_path: Path):
    result = run(CQLSH_EXT, ["--help"], tmp_path)
    assert result.returncode == 0
    lines = result.stdout.splitlines()
    assert lines[0] == "usage: cqlsh-ext [options] [host [port]]"
    assert "Usage:" not in result.stdout
    for option in ("--username", "--cqlshrc", "--decompress", "--output-format", "--keyspaces", "--sigv4"):
        assert option in result.stdout, option


@pytest.mark.parametrize("columns", ["60", "80", "200"])
def test_help_has_no_stray_usage_lines_at_any_width(tmp_path: Path, columns: str):
    # Only cqlsh's usage, first; our options follow cqlsh's under their own heading.
    env = dict(isolated_env(tmp_path), COLUMNS=columns)
    proc = subprocess.run([CQLSH_EXT, "--help"], capture_output=True, text=True, env=env, timeout=60)
    assert proc.returncode == 0
    stray = [line for line in proc.stdout.splitlines()[1:] if line.lstrip().startswith("[-")]
    assert not stray, stray
    assert "\n\n\n" not in proc.stdout


@pytest.mark.parametrize(("typed", "meant"), [("--verison", "--version"),
                                              ("--decmpress=none", "--decompress"),
                                              ("--encodng", "--encoding"), ("-x", None)])
def test_a_mistyped_option_is_named_never_taken_for_a_host(tmp_path: Path, typed: str, meant: str | None):
    # cqlsh reads a word it does not know as its host: 'the host name in --verison:9042 does not
    # resolve'. One line instead, before anything connects, and the status of a usage error.
    result = run(CQLSH_EXT, [typed, "127.0.0.1", "9"], tmp_path)
    assert result.returncode == 2 and not result.stdout
    word = typed.split("=")[0] if meant else typed
    said = f" (did you mean {meant}?)" if meant else ""
    assert result.stderr.strip() == \
        f"cqlsh-ext: error: unknown option {typed}{said}: cqlsh-ext --help lists them"
    assert word in result.stderr and "resolve" not in result.stderr


@pytest.mark.parametrize("columns", [60, 80, 200])
def test_help_s_tools_and_last_paragraph_are_filled_to_the_width(tmp_path: Path, columns: int):
    # cqlsh's closing paragraph broke after 'These' (its source's line), and the tools ran past 80.
    env = dict(isolated_env(tmp_path), COLUMNS=str(columns))
    proc = subprocess.run([CQLSH_EXT, "--help"], capture_output=True, text=True, env=env, timeout=60)
    tools = proc.stdout.split("\ntools:\n")[1].split("\n\n")
    last = tools[-1].splitlines()
    assert " ".join(last).startswith("Connects to 127.0.0.1:9042 by default. These defaults can be changed")
    for rows in (tools[0].splitlines(), last):
        assert all(len(row) <= columns - 2 for row in rows), rows
        # filled: no row would have taken the next row's first word
        pairs = zip(rows, rows[1:], strict=False)
        assert all(len(row) + 1 + len(after.split()[0]) > columns - 2 for row, after in pairs
                   if not after.startswith("  cqlsh-ext")), rows


def test_help_into_a_pipe_closed_early_ends_quietly(tmp_path: Path):
    # `cqlsh-ext --help | head -1`: no BrokenPipeError traceback.
    proc = subprocess.run(f"'{CQLSH_EXT}' --help | head -1", shell=True, capture_output=True, text=True,
                          env=isolated_env(tmp_path), timeout=60)
    assert proc.stdout == "usage: cqlsh-ext [options] [host [port]]\n"
    assert proc.stderr == ""


def test_query_output_into_a_pipe_closed_early_ends_quietly(tmp_path: Path, cassandra):
    args = " ".join(cassandra.cqlsh_args)
    statement = "SELECT keyspace_name, table_name, column_name FROM system_schema.columns"
    proc = subprocess.run(f"'{CQLSH_EXT}' {args} -e '{statement}' | head -3", shell=True,
                          capture_output=True, text=True, env=isolated_env(tmp_path), timeout=120)
    assert len(proc.stdout.splitlines()) == 3
    assert "Traceback" not in proc.stderr and "Broken" not in proc.stderr and "Errno" not in proc.stderr


def test_no_version_warning_for_a_patch_release_difference(tmp_path: Path, cassandra):
    # The bundled cqlsh knows 5.0.0; the test server is 5.0.x: same major.minor, nothing to warn about.
    statement = "SELECT release_version FROM system.local"
    result = run(CQLSH_EXT, [*cassandra.cqlsh_args, "-e", statement], tmp_path)
    assert result.returncode == 0
    assert "5.0." in result.stdout
    assert "WARNING" not in result.stdout + result.stderr


def test_version_comparison():
    from cqlsh_ext.shell.results import major_minor, same_grammar

    assert major_minor("5.0.6") == major_minor("5.0.0")
    assert major_minor("5.0.6-SNAPSHOT") == ("5", "0")
    assert not same_grammar("4.1.3", "5.0.0")
    assert not same_grammar("3.11.2", "5.0.0")  # Amazon Keyspaces


@pytest.mark.parametrize(("text", "said"), [
    # The case: a header left open, after a good section (the line is the 4th).
    ("[ui]\ncolor = on\n\n[cqlsh_ext\ndecompress = auto\n",
     "line 4 is a [section] header without its closing ]"),
    ("decompress = auto\n[cqlsh_ext]\n", "line 1 comes before any [section] header"),
    ("[cqlsh_ext]\ndecompress = auto\njust words\n[ui\n",
     "line 3 is neither a [section] header nor a key = value line (also line 4)"),
    # A file that is no cqlshrc (a .env): none of its lines is said, it may hold a secret.
    ("SECRET=hunter2\n", "line 1 comes before any [section] header"),
    ("[x]\nSECRET hunter2\n", "line 2 is neither a [section] header nor a key = value line"),
    ("[cqlsh_ext]\ndecompress = auto\ndecompress = gzip\n",
     "line 3: key 'decompress' in [cqlsh_ext] is given twice"),
])
def test_malformed_cqlshrc_names_its_line(tmp_path: Path, text: str, said: str):
    rc = tmp_path / "cqlshrc"
    rc.write_text(text)
    result = run(CQLSH_EXT, ["--cqlshrc", str(rc), "-e", "SELECT 1"], tmp_path)
    assert result.returncode == 2 and result.stdout == ""
    assert result.stderr == f"cqlsh-ext: error: {rc}: {said}\n"


@pytest.mark.parametrize(("text", "args", "said"), [
    # cqlsh's own keys it reads as a number or a boolean: cqlsh stopped with a traceback, and we
    # with 'internal error ... please report it'.
    ("[ui]\nfloat_precision = abc\n", [], "{rc} [ui] float_precision: not a whole number: 'abc'"),
    ("[history]\ndisabled = perhaps\n", [],
     "{rc} [history] disabled: not a boolean: 'perhaps' (true/false, on/off, yes/no, 1/0)"),
    # An encoding Python has not was said as 'Connection error: could not connect to ...'.
    ("[ui]\nencoding = utf-9\n", [],
     "{rc} [ui] encoding: unknown encoding: 'utf-9' (a Python codec name: utf-8, latin-1, ...)"),
    ("", ["--encoding", "utf-9"],
     "--encoding: unknown encoding: 'utf-9' (a Python codec name: utf-8, latin-1, ...)"),
])
def test_a_cqlsh_setting_it_cannot_read_is_named_in_one_line(tmp_path: Path, text: str, args: list[str],
                                                             said: str):
    rc = tmp_path / "cqlshrc"
    rc.write_text(text)
    result = run(CQLSH_EXT, ["--cqlshrc", str(rc), *args, "-e", "SELECT 1"], tmp_path)
    assert (result.returncode, result.stdout) == (2, "")
    assert result.stderr == f"cqlsh-ext: error: {said.format(rc=rc)}\n"


def test_unknown_cqlshrc_key_names_the_known_ones(tmp_path: Path):
    rc = tmp_path / "cqlshrc"
    rc.write_text("[cqlsh_ext]\ndecompres = snappy\n")
    result = run(CQLSH_EXT, ["--cqlshrc", str(rc), "-e", "SELECT 1"], tmp_path)
    assert result.returncode == 2
    assert "unknown key 'decompres'" in result.stderr and "decompress" in result.stderr
    assert result.stderr.strip().count("\n") == 0


def test_sample_config_documents_every_key_and_reads_back(tmp_path: Path):
    from cqlsh_ext.settings import KEYS, load

    result = run(CQLSH_EXT, ["sample-config"], tmp_path)
    assert result.returncode == 0
    text = result.stdout
    main_section = text.split("[cqlsh_ext.decode]")[0]
    settings_lines = [ln for ln in main_section.splitlines()
                      if ln.startswith(";") and not ln.startswith("; ")]
    documented = {line[1:].split("=")[0].strip() for line in settings_lines}
    assert documented == set(KEYS)
    # Every setting switched on at once is a cqlshrc cqlsh-ext accepts.
    rc = tmp_path / "cqlshrc"
    rc.write_text("\n".join(line[1:] if line.startswith(";") and not line.startswith("; ") else
                            line[2:] if line.startswith("; shop.") else line
                            for line in text.splitlines()))
    settings = load(None, str(rc))
    assert settings.keyspaces.region == "us-east-1" and settings.display.cells == "cut"
    assert settings.display.columns["shop.orders.body"] == "zstd>msgpack"


def test_every_help_text_of_ours_fits_80_columns():
    # HELP <topic> opens in `less -S` when taller than the screen: a wider line would be cut there.
    from cqlsh_ext.repl.shellhooks import own_help_texts
    from cqlsh_ext.settings import Settings
    from cqlsh_ext.shell.ext_shell import shell_class

    texts = own_help_texts(shell_class(Settings()))
    assert {text.split("[cqlsh-ext]")[0].split()[0] for text in texts} >= {
        "QUERIES", "encode()", "DECOMPRESS", "DECODE", "OUTPUT", "INSPECT", "COMPRESSION"}
    wide = [line for text in texts for line in text.splitlines() if len(line) > 79]
    assert not wide, wide



def test_a_ctrl_c_while_the_process_exits_ends_it_without_a_traceback(tmp_path: Path) -> None:
    """A press that lands after the work is done, while Python shuts down (held there by an exit
    hook that waits), ends the process at once: status 130, what it printed kept, no
    KeyboardInterrupt traceback."""
    import io
    import signal

    import pexpect

    hook = tmp_path / "hook"
    hook.mkdir()
    (hook / "sitecustomize.py").write_text(
        "import atexit, sys, time\n"
        "def _late():\n"
        "    print('shutting down', file=sys.stderr, flush=True)\n"
        "    time.sleep(60)\n"
        "atexit.register(_late)\n")
    seen = io.StringIO()
    child = pexpect.spawn(CQLSH_EXT, ["--version"], env={**isolated_env(tmp_path), "PYTHONPATH": str(hook)},
                          encoding="utf-8", timeout=60)
    child.logfile_read = seen
    child.expect("shutting down")
    child.kill(signal.SIGINT)
    child.expect(pexpect.EOF)
    child.close()
    out = seen.getvalue()
    assert (child.exitstatus, child.signalstatus) == (130, None), out
    assert out.startswith("cqlsh-ext ") and "Traceback" not in out and "KeyboardInterrupt" not in out, out


#: cqlsh-ext's own entry point, with a slow last step at exit: an exit hook that runs after Python
#: has stopped its thread pools and before the driver's own hook closes the connection (on a loaded
#: machine, exiting takes that long by itself).
_SLOW_EXIT = """
import atexit, sys, time
import cassandra.cluster
from cqlsh_ext.cli import run
atexit.register(time.sleep, 3)
sys.argv[0] = "cqlsh-ext"
run()
"""


def test_a_statement_run_with_e_ends_without_a_traceback_on_a_slow_exit(tmp_path: Path, cassandra):
    # A schema change makes the driver schedule a refresh up to 2 seconds later (what TRIAL's
    # scratch tables dropped at its end did): the connection must be closed when the statements
    # are done, not left to the driver's exit hook, after Python's thread pools are shut down
    # ("RuntimeError: cannot schedule new futures after shutdown").
    ks = cassandra.create_keyspace("cli_exit")
    statements = f"CREATE TABLE {ks}.scratch (id int PRIMARY KEY); DROP TABLE {ks}.scratch;"
    import sys

    result = run(sys.executable, ["-c", _SLOW_EXIT, *cassandra.cqlsh_args, "-e", statements], tmp_path)
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr and "Exception" not in result.stderr, result.stderr
