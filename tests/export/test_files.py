"""An export is safe with files: an existing file is kept unless the statement says OVERWRITE, an
unwritable place, a full disk (here a file-size limit) or a refused statement end in one line with
nothing written, and Ctrl-C closes the file with the rows read so far. Stock COPY keeps its
meaning; what the query form does not take is refused in one line."""

from __future__ import annotations

import json
import os
import re
import resource
import shutil
import signal
import subprocess
import sys
import sysconfig
from pathlib import Path

import pexpect
import pyte
import pytest
from orders import rows, write_table
from shell_runner import CQLSH_EXT, Run, isolated_env, said_lines

from tests.payload_select.conftest import shell

from .conftest import Orders
from .readback import closing_line, jsonl_rows, parquet_rows, rows_written

REPO = Path(__file__).resolve().parents[2]


def _one_error_line(out: Run) -> str:
    lines = said_lines(out.stderr)
    assert len(lines) == 1, out.stderr
    assert "Traceback" not in out.stderr
    return re.sub(r"^<stdin>:\d+:", "", lines[0])  # cqlsh's place of an error in -e's statements


def _leftovers(directory) -> list[str]:
    return sorted(p.name for p in directory.iterdir() if p.name.endswith(".part"))


def test_an_existing_file_is_kept_unless_overwrite_is_said(cassandra, orders: Orders, home):
    target = home / "kept.jsonl"
    target.write_text("mine\n")
    select = f"SELECT ck FROM {orders.name} WHERE pk = 'p1'"
    out = shell(cassandra, home, f"COPY ({select}) TO '{target}'")
    assert "kept.jsonl exists: add WITH OVERWRITE = true to replace it" in _one_error_line(out)
    assert target.read_text() == "mine\n" and _leftovers(home) == []
    out = shell(cassandra, home, f"COPY ({select}) TO '{target}' WITH OVERWRITE = true")
    assert out.returncode == 0, out.stderr
    expected = sorted(row["ck"] for row, _doc in orders.rows if row["pk"] == "p1")
    assert sorted(r["ck"] for r in jsonl_rows(target)) == expected


def test_an_unwritable_place_is_said_before_reading(cassandra, orders: Orders, home):
    select = f"SELECT ck, data.status FROM {orders.name} WHERE data.status = 'NEW' ALLOW FILTERING"
    out = shell(cassandra, home, f"COPY ({select}) TO '{home}/no/such/dir/x.parquet'")
    line = _one_error_line(out)
    assert line.startswith("COPY (SELECT ...): cannot write") and "no directory" in line
    (home / "file").write_text("")
    out = shell(cassandra, home, f"COPY ({select}) TO '{home}/file/x.parquet'")
    assert "cannot write" in _one_error_line(out)
    out = shell(cassandra, home, f"COPY ({select}) TO '{home}' WITH FORMAT = 'parquet'")
    assert "is a directory" in _one_error_line(out)
    assert "rows read" not in out.stdout + out.stderr  # refused before anything was read


def _with_file_size_limit(limit: int):
    def limited() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past it fails (EFBIG) instead of killing
    return limited


@pytest.mark.parametrize("name", ["full.parquet", "full.jsonl"])
def test_a_full_disk_leaves_no_file_and_one_line(cassandra, orders: Orders, home, name):
    statement = f"COPY (SELECT * FROM {orders.name}) TO '{home / name}' WITH RAW = true"
    proc = subprocess.run([CQLSH_EXT, *cassandra.cqlsh_args, "-e", statement], capture_output=True, text=True,
                          timeout=300, env=isolated_env(home), preexec_fn=_with_file_size_limit(20_000))
    out = Run(proc.returncode, proc.stdout, proc.stderr)
    line = _one_error_line(out)
    assert line == f"COPY (SELECT ...): writing {home / name} failed: File too large; nothing written"
    assert not (home / name).exists() and _leftovers(home) == []


def test_ctrl_c_closes_the_file_with_the_rows_read(cassandra, home):
    ks = cassandra.create_keyspace("faults_export")  # faults_*: the server's fault handler delays it
    session = cassandra.session(ks)
    data = rows(400, partitions=400)
    write_table(session, data)
    session.shutdown()
    target = home / "cut.parquet"
    cassandra.faults.set("delay", -1, 300)  # every page late: the scan takes seconds
    try:
        child = pexpect.spawn(CQLSH_EXT, [*cassandra.cqlsh_args, "-e",
                                          f"COPY (SELECT ck, data.status FROM {ks}.orders WHERE data.status "
                                          f"IN ('PAID', 'NEW') ALLOW FILTERING) TO '{target}' "
                                          "WITH ROW_GROUP_SIZE = 5"],
                              env=isolated_env(home), encoding="utf-8", timeout=120, dimensions=(40, 160))
        child.expect(r"[1-9][0-9,]* rows, ")  # the progress line: the scan is under way
        child.kill(signal.SIGINT)
        child.expect(pexpect.EOF)
        out = re.sub(r"\x1b\[[0-9;]*[A-Za-z]", "", child.before)
        child.close()
    finally:
        cassandra.faults.clear()
    assert "Traceback" not in out
    line = closing_line(out)
    assert "interrupted (Ctrl-C): the file holds the rows read before" in line, out[-2000:]
    read = int(line.split("; ", 1)[1].split(" rows read")[0].replace(",", ""))
    assert 0 < read < len(data)
    _schema, found = parquet_rows(target)  # a valid, closed file
    assert len(found) == rows_written(out)
    truth = {row["ck"]: doc["status"] for row, doc in data
             if doc is not None and doc.get("status") in ("PAID", "NEW")}
    assert all(truth[r["ck"]] == r["data.status"] for r in found)
    assert _leftovers(home) == []


#: Rows of the table exported while Ctrl-C is pressed: one row group, so all of the decoding and
#: writing happens once the reading is done. The statements below take the whole blob: its
#: columns are what takes time to write, tens of milliseconds for these rows (the ordinary
#: columns and a path the core lays out take a few), so a press may land after the file is
#: finished: _pressed_while_writing tries again.
WRITTEN_ROWS = 8000


@pytest.fixture(scope="module")
def big(cassandra) -> tuple[str, list]:
    ks = cassandra.create_keyspace("faults_written")  # faults_*: the server's fault handler may delay it
    session = cassandra.session(ks)
    data = rows(WRITTEN_ROWS, partitions=200)
    write_table(session, data)
    session.shutdown()
    return ks, data


#: A start-up hook that holds an export's file before it is named (tests/export/held/sitecustomize.py).
HELD = Path(__file__).resolve().parent / "held"


class _Exporting:
    """cqlsh-ext -e "COPY (...) TO ..." in a pseudo-terminal whose file, its rows written, waits
    for its name until release() (HELD: as on a slow disk), so a Ctrl-C typed once the screen says
    "writing" lands while the file is written, whatever the machine's load. Each press is typed
    with the process stopped (the terminal sends SIGINT, held until the process goes on)."""

    def __init__(self, cassandra, home, statement: str) -> None:
        self.gate = home / "release-the-file"
        self.gate.unlink(missing_ok=True)
        env = {**isolated_env(home), "PYTHONPATH": str(HELD), "CQLSH_EXT_TEST_HOLD_COMMIT": str(self.gate)}
        self.child = pexpect.spawn(CQLSH_EXT, [*cassandra.cqlsh_args, "-e", statement], encoding="utf-8",
                                   env=env, timeout=120, dimensions=(40, 160))
        self.screen = pyte.Screen(160, 40)
        self.stream = pyte.Stream(self.screen)
        self.seen = ""

    def expect(self, pattern: str) -> str:
        self.child.expect(pattern)
        shown = self.child.before + self.child.after
        self.stream.feed(shown)
        self.seen += shown
        return str(self.child.after)

    def ctrl_c_now(self) -> None:
        os.kill(self.child.pid, signal.SIGSTOP)
        self.child.sendintr()
        os.kill(self.child.pid, signal.SIGCONT)

    def release(self) -> None:
        """The file may take its name now."""
        self.gate.touch()

    def end(self) -> str:
        self.child.expect(pexpect.EOF)
        self.stream.feed(self.child.before)
        self.seen += self.child.before
        self.child.close()
        self.gate.unlink(missing_ok=True)
        return re.sub(r"\x1b\[[0-9;]*[A-Za-z]", "", self.seen)


def _pressed_while_writing(cassandra, home, statement: str, presses: int) -> tuple[str, str]:
    """The screen's status line while the file was written, and the export's output, when the
    first press landed while its file was written (said at once: "Ctrl-C again discards it"), then
    `presses` - 1 more. A file never discarded is released, to say what happened."""
    run = _Exporting(cassandra, home, statement)
    run.expect(r"writing [^\n]*discard it\)")
    status = next(row for row in run.screen.display if "writing" in row).strip()
    run.ctrl_c_now()
    run.expect(r"Ctrl-C\s+again\s+discards\s+it")
    for _ in range(presses - 1):
        run.ctrl_c_now()
    if presses == 1:
        run.release()
    return status, run.end()


def _spellings(target: Path, home: Path) -> tuple[str, str]:
    """How a line names `target`: whole, or from `~` where the line is too wide for the screen
    (common.text.home_short; `home` is the shell's HOME)."""
    return str(target), f"~/{target.relative_to(home)}"


def test_ctrl_c_while_the_file_is_written_finishes_it_with_the_rows_read(cassandra, big, home):
    ks, data = big
    target = home / "cc.parquet"
    statement = f"COPY (SELECT pk, ck, data.status, data FROM {ks}.orders) TO '{target}'"
    # What the screen showed while the file was written (the reading's progress line gone).
    status, out = _pressed_while_writing(cassandra, home, statement, presses=1)
    assert status.startswith(f"COPY (SELECT ...): writing {target.name}, {WRITTEN_ROWS:,} rows")
    assert "Traceback" not in out
    line = closing_line(out)
    assert any(line.startswith(f"COPY (SELECT ...): {WRITTEN_ROWS:,} rows written to {spelt}")
               for spelt in _spellings(target, home)), line
    assert line.endswith("; Ctrl-C while writing: the file was finished with the rows read")
    _schema, found = parquet_rows(target)  # a valid, closed file with every row read
    assert sorted((r["pk"], r["ck"]) for r in found) == sorted((row["pk"], row["ck"]) for row, _doc in data)
    assert _leftovers(home) == []


def test_a_second_ctrl_c_while_the_file_is_written_discards_it(cassandra, big, home):
    ks, _data = big
    target = home / "gone.parquet"
    said = [f"COPY (SELECT ...): interrupted (Ctrl-C twice) before {spelt} was finished: nothing written"
            for spelt in _spellings(target, home)]
    _status, out = _pressed_while_writing(cassandra, home, f"COPY (SELECT pk, ck, data FROM {ks}.orders) "
                                          f"TO '{target}'", presses=2)
    assert "Traceback" not in out
    assert any(one in " ".join(out.split()) for one in said), out  # on a terminal, wrapped at words
    assert not target.exists() and _leftovers(home) == []


def test_after_a_ctrl_c_that_stopped_the_scan_the_next_one_discards_the_file(cassandra, big, home):
    ks, _data = big
    target = home / "half.parquet"
    said = [f"interrupted (Ctrl-C twice) before {spelt} was finished: nothing written"
            for spelt in _spellings(target, home)]
    cassandra.faults.set("delay", -1, 300)  # every page late: the scan takes seconds
    try:
        run = _Exporting(cassandra, home, f"COPY (SELECT ck, data.status, data FROM {ks}.orders WHERE "
                                          f"data.status IS NOT NULL ALLOW FILTERING) TO '{target}'")
        run.expect(r"[1-9][0-9]?,[0-9]{3} rows, ")  # a thousand rows and more read: something to write
        run.child.sendintr()  # the first: the scan stops, the file is written with what was read
        run.expect(r"writing [^\n]*\(Ctrl-C again: discard it\)")
        run.ctrl_c_now()
        out = run.end()
    finally:
        cassandra.faults.clear()
    assert "Traceback" not in out
    assert any(one in " ".join(out.split()) for one in said), out
    assert not target.exists() and _leftovers(home) == []


def test_stock_copy_to_a_parquet_name_points_to_the_query_form(cassandra, orders: Orders, home):
    out = shell(cassandra, home, f"COPY {orders.name} TO '{home / 'x.parquet'}'")
    assert _one_error_line(out).endswith(
        f"COPY {orders.name} TO writes CSV of the stored bytes, not Parquet: COPY (SELECT * FROM "
        f"{orders.name}) TO '{home / 'x.parquet'}' writes Parquet with blobs decoded (HELP EXPORT)")
    assert not (home / "x.parquet").exists()
    out = shell(cassandra, home, f"COPY {orders.name} TO '{home / 'x.json'}'")  # CSV under a .json name
    assert _one_error_line(out).endswith(
        f"not JSON Lines: COPY (SELECT * FROM {orders.name}) TO '{home / 'x.json'}' writes JSON Lines with "
        "blobs decoded (HELP EXPORT)")
    assert not (home / "x.json").exists()
    # a stock COPY TO a CSV file is cqlsh's, stored bytes and all
    out = shell(cassandra, home, f"COPY {orders.name} (pk, ck, data) TO '{home / 'x.csv'}'")
    assert out.returncode == 0, out.stderr
    stored = {str(row["ck"]): "0x" + row["data"].hex() for row, _doc in orders.rows}
    lines = (home / "x.csv").read_text().splitlines()
    assert {line.split(",")[1]: line.split(",")[2] for line in lines} == stored


@pytest.mark.parametrize(("select", "says"), [
    ("SELECT JSON pk, ck FROM {t}", "SELECT JSON is not supported here"),
    ("SELECT pk, writetime(data) FROM {t}", "writetime() is the server's, and a payload query computes only"),
    ("SELECT pk AS p FROM {t}", "AS is not supported"),
    ("SELECT data.status FROM {t} WHERE data.status = 'NEW'", "add ALLOW FILTERING"),
])
def test_what_the_query_form_does_not_take_is_refused_in_one_line(cassandra, orders: Orders, home, select,
                                                                  says):
    out = shell(cassandra, home, f"COPY ({select.format(t=orders.name)}) TO '{home / 'r.parquet'}'")
    line = _one_error_line(out)
    assert line.startswith("COPY (SELECT ...): ") and says in line, line
    assert not (home / "r.parquet").exists() and _leftovers(home) == []


def test_statement_errors_are_one_line(cassandra, orders: Orders, home):
    cases = {
        f"COPY (SELECT ck FROM {orders.name}) TO '{home / 'x.txt'}'":
            f"cannot tell the format from the name '{home / 'x.txt'}': end it in .parquet, .jsonl or "
            ".csv, or add WITH FORMAT = 'parquet' (or 'jsonl', 'csv')",
        f"COPY (SELECT ck FROM {orders.name}) TO '{home / 'x'}' WITH FORMAT = 'parqet'":
            "unknown format 'parqet' (did you mean parquet?); valid: parquet, jsonl, csv",
        f"COPY (SELECT ck FROM {orders.name}) TO '{home / 'x.jsonl'}' WITH ROW_GROUP_SIZE = 10":
            "COMPRESSION and ROW_GROUP_SIZE are Parquet's options",
        f"COPY (SELECT ck FROM {orders.name}) TO '{home / 'x.csv'}' WITH SPEED = 3": "unknown option 'SPEED'",
        f"COPY (SELECT ck FROM {orders.name}) TO '{home / 'x.csv'}' WITH COMPRESSION = 'zstd'":
            "COMPRESSION and ROW_GROUP_SIZE are Parquet's options",
        f"COPY (SELECT ck FROM {orders.name}) TO '{home / 'x.parquet'}' WITH COMPRESSION = 'rar'":
            "COMPRESSION takes",
        f"COPY (SELECT ck FROM {orders.name} TO '{home / 'x.csv'}'": "no closing parenthesis",
        f"COPY (SELECT ck FROM {orders.ks}.nothing) TO '{home / 'x.csv'}'": "unknown table",
    }
    for statement, says in cases.items():
        line = _one_error_line(shell(cassandra, home, statement))
        assert says in line, (statement, line)
    assert sorted(p.name for p in home.iterdir() if not p.name.startswith(".")) == []


def test_decoding_off_refuses_the_decoded_forms(cassandra, orders: Orders, home):
    out = shell(cassandra, home, f"COPY (SELECT pk, data FROM {orders.name}) TO '{home / 'n.jsonl'}'",
                "-d", "none")
    assert _one_error_line(out).endswith("COPY (SELECT ...): decoding is off (-d none): "
                                         "COPY table TO exports the stored bytes")
    assert not (home / "n.jsonl").exists()


def _without_pyarrow(cassandra, home, statement: str, program: str = CQLSH_EXT, cwd=None,
                     **env: str) -> Run:
    """The shell run where `import pyarrow` fails, as in an installation without the parquet extra."""
    hidden = home / "no_pyarrow"
    hidden.mkdir(exist_ok=True)
    (hidden / "pyarrow.py").write_text("raise ImportError('No module named pyarrow')\n")
    proc = subprocess.run([program, *cassandra.cqlsh_args, "-e", statement], capture_output=True, text=True,
                          timeout=300, cwd=cwd or home,
                          env={**isolated_env(home), "PYTHONPATH": str(hidden), **env})
    return Run(proc.returncode, proc.stdout, proc.stderr, None)


@pytest.fixture(scope="module")
def installed_checkout(tmp_path_factory) -> tuple[Path, Path]:
    """(checkout, environment): a copy of this checkout pip-installed (not editable) into an
    environment of its own, as `python3 -m pip install .` does; the dependencies are this test
    environment's, on its path, so nothing is downloaded."""
    base = tmp_path_factory.mktemp("installed")
    checkout = base / "checkout"
    checkout.mkdir()
    for name in ("pyproject.toml", "README.md", "LICENSE"):
        shutil.copy2(REPO / name, checkout / name)
    shutil.copytree(REPO / "cqlsh_ext", checkout / "cqlsh_ext", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(REPO / "man", checkout / "man")  # the manual page the wheel installs (pyproject.toml)
    env_dir = base / "env"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(env_dir)], check=True)
    python = env_dir / "bin" / "python"
    site = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                          capture_output=True, text=True, check=True).stdout.strip()
    Path(site, "test-deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    subprocess.run([str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
                    "--no-deps", "--no-build-isolation", str(checkout)], check=True, capture_output=True,
                   timeout=300)
    return checkout, env_dir


def test_the_parquet_hint_works_where_cqlsh_ext_was_installed_from(cassandra, orders: Orders, home,
                                                                    installed_checkout):
    statement = f"COPY (SELECT ck FROM {orders.name}) TO '{home / 'p.parquet'}'"
    said = "COPY (SELECT ...): a Parquet file needs pyarrow: run "
    # This checkout's .venv (bin/setup): bin/setup learns the extra (tests/test_bin.py runs it).
    assert _one_error_line(_without_pyarrow(cassandra, home, statement, cwd=REPO)).endswith(
        f"{said}bin/setup --parquet")
    assert _one_error_line(_without_pyarrow(cassandra, home, statement)).endswith(
        f"{said}{REPO / 'bin' / 'setup'} --parquet")
    # A checkout pip-installed into another environment: that environment's pip, that checkout.
    checkout, env_dir = installed_checkout
    line = _one_error_line(_without_pyarrow(cassandra, home, statement, str(env_dir / "bin" / "cqlsh-ext")))
    assert line.endswith(f"{said}{env_dir / 'bin' / 'python'} -m pip install '{checkout}[parquet]'")
    # The Docker image (no pip in it): built again with the extra.
    line = _one_error_line(_without_pyarrow(cassandra, home, statement, CQLSH_EXT_IMAGE="1"))
    assert "docker build --build-arg EXTRAS=parquet" in line
    assert not (home / "p.parquet").exists()
    # JSON Lines and CSV need nothing more
    select = f"SELECT ck FROM {orders.name} WHERE pk = 'p0'"
    out = _without_pyarrow(cassandra, home, f"COPY ({select}) TO '{home / 'p.jsonl'}'")
    assert out.returncode == 0, out.stderr
    assert json.loads((home / "p.jsonl").read_text().splitlines()[0]).keys() == {"ck"}


def test_help_export(cassandra, home):
    out = shell(cassandra, home, "HELP EXPORT")
    assert "COPY (SELECT ...) TO 'file'" in out.stdout and "OVERWRITE = true" in out.stdout
    assert len(out.stdout.strip().splitlines()) <= 30  # a screenful
    listed = shell(cassandra, home, "HELP").stdout
    assert re.search(r"\bEXPORT\b", listed.split("CQL help topics")[0])
    assert "HELP EXPORT" in shell(cassandra, home, "HELP QUERIES").stdout
