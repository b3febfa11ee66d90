"""Every example of the README runs on the demo's data, as a newcomer runs it after `bin/demo`
(issue 86, item 3: the examples named shop.orders, which the demo does not create, and each had to
be translated). The demo is loaded into the test server by `cqlsh-ext demo load` under a keyspace of
this module's own; each example runs as written but for that keyspace's name, the server's address
and the credentials file, and must succeed: exit status 0, no error, the rows it asks for."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import REPO_ROOT
from shell_runner import CQLSH_EXT, isolated_env

README = (REPO_ROOT / "README.md").read_text()
DEMO = "compression_demo"
#: What a failed statement says (cqlsh's errors and ours), on either stream.
_FAILED = re.compile(r"(?i)\b(?:error|(?<!\d )refused|improper|no viable|does not exist|not found|unknown|"
                     r"invalid|traceback|cannot)\b")


def _blocks(language: str) -> list[str]:
    return re.findall(rf"^```{language}\n(.*?)^```", README, re.DOTALL | re.MULTILINE)


def statements() -> list[str]:
    """The README's CQL examples: its sql blocks' statements, the statement its screen shows, and
    every `-e "..."` of a command run against the local server (not one for Amazon Keyspaces, whose
    tables are the reader's own)."""
    found = []
    for block in _blocks("sql"):  # in order, each as often as written (UNDO LAST after each write)
        found += [" ".join(s.split()) for s in block.split(";") if s.strip()]
    more = re.findall(rf"^cassandra@cqlsh:{DEMO}> (.+?);?$", README, re.MULTILINE)
    for command in _commands():
        if "--keyspaces" not in command:
            more += [" ".join(s.split()).rstrip(";") for s in re.findall(r'-e\s+"([^"]+)"', command)]
    return found + [statement for statement in dict.fromkeys(more) if statement not in found]


def _commands() -> list[str]:
    """The README's command lines: its sh blocks' (a line ending in a backslash goes on), and the
    commands written inline in its prose."""
    commands = []
    for block in _blocks("sh"):
        commands += [" ".join(line.split()) for line in re.sub(r"\\\n", " ", block).splitlines()]
    prose = re.sub(r"^```.*?^```", "", README, flags=re.DOTALL | re.MULTILINE)
    commands += [" ".join(code.split()) for code in re.findall(r"`([^`]+)`", prose)]
    return commands


def test_every_example_names_the_demo_s_tables() -> None:
    said = statements()
    assert len(said) >= 10, said
    for statement in said:
        quoted = re.sub(r"'[^']*'", "''", statement)  # not a file name, a value, a chain
        named = re.findall(r"\b([a-z_]+)\.([a-z_]+)\b", quoted)
        keyspaces = {ks for ks, _ in named if ks != "data" and not ks.startswith("data")}
        assert keyspaces <= {DEMO}, statement
    assert "shop." not in README and "ks.orders" not in README


@pytest.fixture(scope="module")
def demo(cassandra, tmp_path_factory) -> tuple[str, Path]:
    """The demo keyspace under a name of this module's own, its dictionaries written where bin/demo
    names them from."""
    keyspace = f"readme_{os.getpid()}"
    home = tmp_path_factory.mktemp("readme-home")
    dictionaries = home / "dictionaries"
    proc = subprocess.run([CQLSH_EXT, "demo", "load", "-k", keyspace, "--rows", "200", "--dictionaries",
                           str(dictionaries), *cassandra.cqlsh_args], capture_output=True, text=True,
                          timeout=600, env=isolated_env(home))
    assert proc.returncode == 0, proc.stderr
    return keyspace, dictionaries


def _shell(cassandra, demo: tuple[str, Path], home: Path, statement: str) -> subprocess.CompletedProcess[str]:
    keyspace, dictionaries = demo
    args = [*cassandra.cqlsh_args, "-k", keyspace, "--journal-dir", str(home / "journals"),
            "--dictionary", str(dictionaries / "demo.zstd-dict"),
            "--dictionary", str(dictionaries / "demo.zlib-dict"),
            "-e", statement.replace(DEMO, keyspace)]
    return subprocess.run([CQLSH_EXT, *args], capture_output=True, text=True, timeout=600, cwd=home,
                          env=isolated_env(home))


def test_every_statement_of_the_readme_runs_on_the_demo(cassandra, demo, tmp_path) -> None:
    for statement in statements():
        proc = _shell(cassandra, demo, tmp_path, statement)
        shown = f"{statement}\n{proc.stdout[-2000:]}\n{proc.stderr[-2000:]}"
        assert proc.returncode == 0, shown
        assert not [line for line in proc.stdout.splitlines() + proc.stderr.splitlines()
                    if _FAILED.search(line)], shown
        if statement.upper().startswith("SELECT"):
            assert re.search(r"\(([1-9]\d*) rows\)", proc.stdout), shown  # rows, not an empty answer
    # What the edit example wrote, UNDO LAST wrote back; the export example's file has its rows.
    assert (tmp_path / "returns.jsonl").read_text().count("\n") > 0
    said = _shell(cassandra, demo, tmp_path, f"SELECT data.status FROM {DEMO}.table_with_compressed_json "
                  "WHERE id = b4cc8000-a838-11ee-8000-0de30de30de3")
    assert "PICKING" in said.stdout, said.stdout
    # The way back: the load wrote zstd, its UNDO put the demo's snappy values back (python-snappy).
    import json
    import uuid

    import snappy

    loaded = [json.loads(line) for line in (tmp_path / "returns-whole.jsonl").read_text().splitlines()]
    session = cassandra.session(demo[0])
    try:
        for row in loaded[:5]:
            stored = session.execute("SELECT data FROM table_with_compressed_json WHERE id = %s",
                                     [uuid.UUID(row["id"])]).one().data
            assert json.loads(snappy.uncompress(stored)) == row["data"]["payload"]
    finally:
        session.shutdown()


def test_the_readme_shows_the_way_back_and_links_the_notebook() -> None:
    # Loading (COPY ... FROM, db.write) and its UNDO were missing; the notebook was linked from nowhere.
    said = statements()
    loads = [s for s in said if re.match(r"COPY \S+ \([\w, ]+\) FROM '", s)]
    assert any(s.endswith("CONFIRM") for s in loads) and any(not s.endswith("CONFIRM") for s in loads), said
    assert said.index("UNDO LAST CONFIRM") > said.index(next(s for s in loads if s.endswith("CONFIRM")))
    assert "db.write(" in README
    assert "(examples/payloads_in_pandas.ipynb)" in README


def test_the_readme_s_python_example_runs_on_the_demo(cassandra, demo, tmp_path) -> None:
    [block] = [b for b in _blocks("python") if "cqlsh_ext.connect" in b]
    keyspace, _ = demo
    credentials = tmp_path / "credentials"
    credentials.write_text(f"[plain_text_auth]\nusername = {cassandra.username}\n"
                           f"password = {cassandra.password}\n")
    credentials.chmod(0o600)
    program = (block.replace('"127.0.0.1", 9042', f'"{cassandra.host}", {cassandra.port}')
               .replace(".cache/dev-cassandra/credentials", str(credentials)).replace(DEMO, keyspace))
    assert program != block
    program += ("\nassert len(frame) > 0 and set(frame['data.status']) == {'PAID'}, frame\n"
                "print('rows', len(frame))\n")
    proc = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, timeout=600,
                          env=isolated_env(tmp_path), cwd=tmp_path)
    assert proc.returncode == 0 and proc.stdout.startswith("rows "), proc.stderr[-3000:]
