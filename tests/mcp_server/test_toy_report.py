"""A built-in report is declared once and every front end is made from the declaration (issue 84): a
toy report added to a copy of the tree in three files, its service, its declaration (one more
`register` in features/reads.py) and its test, is a statement of the shell (HELP lists it, HELP <its
words> prints its document, Tab completes it, it runs and refuses a bad argument in one line), an MCP
tool (tools/list, called), a method of the Python API and a section of docs/features.md
(tools/features_table.py), with no other file touched."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.repl.terminal import Term
from tests.shell_runner import api, ext, isolated_env

from .harness import write_credentials

ROOT = Path(__file__).resolve().parents[2]

#: The toy's three files, as a person adding a report writes them.
SERVICE = ("cqlsh_ext/insight/run_toy.py", '''"""TOY REPORT: a table's rows counted."""


def toy_report(ctx, call):
    from cqlsh_ext.cql.spelling import spell
    from cqlsh_ext.reading.typed import ReportAnswer

    keyspace, table = call.table
    keyspace = keyspace or ctx.keyspace
    row = ctx.session.execute(f"SELECT count(*) AS n FROM {spell(keyspace)}.{spell(table)}").one()
    count = row["n"] if isinstance(row, dict) else row.n  # the shell's session: its row factory
    data = {"table": f"{keyspace}.{table}", "rows": count}
    return ReportAnswer("TOY REPORT", lambda: data, lambda width, blocks: [f"{count} rows"])
''')
DECLARATION = '''register(Feature(
    "toy_report", "Toy report", "Counts a table's rows.", (_table(),), Reads("table", "table"), REPORT,
    {"type": "object", "properties": {"table": {"type": "string"}, "rows": {"type": "integer"}},
     "required": ["table", "rows"]},
    Service("cqlsh_ext.insight.run_toy", "toy_report"),
    statement=Statement(("TOY", "REPORT"), "TOY REPORT ks.t;"), method=Method("toy_report")))

'''
TEST = ("tests/insight/test_toy.py", '''from cqlsh_ext.cql.lexer import Lexed
from cqlsh_ext.features import declared
from cqlsh_ext.features.calling import read_statement


def test_the_toy_report_reads_its_table():
    toy = declared(plugins=False)["toy_report"]
    call, as_json = read_statement(toy, Lexed("TOY REPORT JSON t;"), 2, "ks")
    assert (call.table, as_json) == (("ks", "t"), True)
''')


def _tree(copy: Path) -> dict[str, bytes]:
    """The checkout's files as they are now (tracked and new, not ignored), copied into `copy`."""
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                            cwd=ROOT, capture_output=True, check=True).stdout.decode().split("\0")
    files: dict[str, bytes] = {}
    for name in filter(None, listed):
        source = ROOT / name
        if source.is_file() and not source.is_symlink():
            target = copy / name
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(source, target)
            files[name] = source.read_bytes()
    return files


def _add_the_toy(copy: Path) -> None:
    """The toy report's three files: its service, its declaration, its test."""
    for name, text in (SERVICE, TEST):
        (copy / name).write_text(text)
    reads = copy / "cqlsh_ext/features/reads.py"
    text = reads.read_text()
    anchor = "#: The features declared here"
    assert anchor in text
    reads.write_text(text.replace(anchor, DECLARATION + anchor))


def _changed(copy: Path, before: dict[str, bytes]) -> list[str]:
    """The files of `copy` that are new or differ from the checkout's."""
    return sorted(str(path.relative_to(copy)) for path in copy.rglob("*")
                  if path.is_file() and "__pycache__" not in path.parts
                  and before.get(str(path.relative_to(copy))) != path.read_bytes())


@pytest.fixture(scope="module")
def toy_tree(tmp_path_factory: pytest.TempPathFactory) -> Path:
    copy = tmp_path_factory.mktemp("toy-tree")
    before = _tree(copy)
    _add_the_toy(copy)
    assert _changed(copy, before) == sorted([SERVICE[0], "cqlsh_ext/features/reads.py", TEST[0]])
    return copy


def _env(copy: Path) -> dict[str, str]:
    """The copy's cqlsh_ext first on the path, ahead of the checkout's editable install."""
    return {"PYTHONPATH": os.pathsep.join([str(copy), *filter(None, [os.environ.get("PYTHONPATH")])])}


def test_the_toy_s_own_test_and_the_features_reference(toy_tree: Path, tmp_path: Path) -> None:
    env = {**isolated_env(tmp_path), **_env(toy_tree)}
    own = subprocess.run([sys.executable, "-m", "pytest", "--noconftest", "-p", "no:cacheprovider", "-q",
                          TEST[0]], cwd=toy_tree, env=env, capture_output=True, text=True, timeout=300)
    assert own.returncode == 0, own.stdout + own.stderr
    wrote = subprocess.run([sys.executable, "tools/features_table.py"], cwd=toy_tree, env=env,
                           capture_output=True, text=True, timeout=300)
    assert wrote.returncode == 0, wrote.stderr
    reference = (toy_tree / "docs/features.md").read_text()
    assert "| `toy_report` | Toy report | table (`table`) | `cqlsh.report` | " \
           "`cqlsh_ext.insight.run_toy.toy_report` | Counts a table's rows. |" in reference
    assert "\n## toy_report\n" in reference
    assert "In the shell: `TOY REPORT [JSON] [keyspace.]table`, e.g. `TOY REPORT ks.t;`" in reference


@pytest.mark.server
def test_the_toy_in_the_shell_mcp_and_the_api(  # type: ignore[no-untyped-def]
        toy_tree: Path, cassandra, demo, serve, tmp_path: Path) -> None:
    env = _env(toy_tree)
    home = tmp_path / "home"
    home.mkdir()
    table = f"{demo.keyspace}.blob_formats"
    session = cassandra.session()
    counted = session.execute(f"SELECT count(*) FROM {table}").one().count
    session.shutdown()
    assert counted > 0

    # The shell: HELP lists it, HELP TOY REPORT is its document, it runs; a bad argument is one line.
    listed = ext(cassandra, home, "-e", "HELP", env=env).checked_stdout()
    assert "  TOY REPORT [JSON] [keyspace.]table  -- Toy report: Counts a table's rows." in listed
    document = ext(cassandra, home, "-e", "HELP TOY REPORT", env=env).checked_stdout()
    assert document.startswith("TOY REPORT [JSON] [keyspace.]table;")
    assert "table (string, required)" in document
    assert ext(cassandra, home, "-e", f"TOY REPORT {table}", env=env).checked_stdout() == f"{counted} rows\n"
    as_json = json.loads(ext(cassandra, home, "-e", f"TOY REPORT JSON {table}", env=env).checked_stdout())
    assert as_json == {"table": table, "rows": counted}
    refused = ext(cassandra, home, "-e", "TOY REPORT 42", env=env)
    assert refused.returncode == 2 and not refused.stdout
    said = refused.stderr.strip().splitlines()[-1]
    assert said == "TOY REPORT: table takes a string (keyspace.table), not 42"

    # Tab at the prompt: its words, then its argument.
    write_credentials(home, cassandra.username, cassandra.password)
    term = Term([cassandra.host, str(cassandra.port)], home, env=env)
    try:
        term.prompt()
        term.type("TO\t")
        term.expect("TOY")
        term.type("R\t")
        term.expect("REPORT")
        term.type(f"{table};")
        term.enter()
        term.expect(rf"\n{counted} rows\n")
        assert term.exit() == 0
    finally:
        term.close()

    # MCP: a tool of its declaration, called; the API: db.toy_report, made from it.
    server = serve(env=env)
    tool = {tool.name: tool for tool in server.tools()}["toy_report"]
    assert (tool.title, tool.input_schema["required"]) == ("Toy report", ["table"])
    assert set(tool.input_schema["properties"]) == {"table", "max_bytes"}
    called = server.call("toy_report", table=table).data
    assert (called["table"], called["rows"]) == (table, counted)
    proc = api(cassandra, home, "import inspect, json\n"
               "print(list(inspect.signature(db.toy_report).parameters))\n"
               "print(json.dumps(db.toy_report(argv[0]).to_dict()))\n"
               "try:\n"
               "    db.toy_report(42)\n"
               "except cqlsh_ext.Error as err:\n"
               "    print(err)\n", table, env=env, timeout=300)
    assert proc.returncode == 0, proc.stderr
    parameters, answered, refused_line = proc.stdout.splitlines()
    assert parameters == "['table', 'progress']"
    assert json.loads(answered) == {"table": table, "rows": counted}
    assert refused_line == "toy_report: table takes a string (keyspace.table), not 42"
