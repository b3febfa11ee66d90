"""A file format is one entry of common.file_formats (issue 99, item 4; docs/extending.md, "Adding a
file format"): a toy format, TSV (tab-separated values), is added to a copy of the tree as a
maintainer adds one: its entry in the table, its module (render/tsv.py: its writer and its reading of
records) with its line in render/README.md, and its own test; the manual page is written again by
tools/man_page.py (HELP EXPORT and HELP LOAD name the formats). Nothing else is touched. The copy then
passes lint-imports, ruff on what was added, and the fast tests that read the formats (HELP, the man
page, the package READMEs, the start-up imports, MCP's declarations); and against the real server
COPY (SELECT ...) TO 'x.tsv' writes it, COPY ... FROM 'x.tsv' loads it back, and MCP's export tool
offers it and writes it. The file is read with Python's csv module and the stored values decoded
with zstandard's own decompressor: the oracles, apart from cqlsh-ext's code."""

from __future__ import annotations

import csv
import io
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import zstandard

from tests.shell_runner import ext

from .tree_copy import assert_checks_pass, changed, copied, copy_env, in_copy

#: The table's new entry, as a maintainer writes it (after CSV's, before the table's end).
ENTRY = '''    FileFormat("tsv", "TSV", (".tsv",), "cqlsh_ext.render.tsv:TsvSink",
               fields="cqlsh_ext.render.tsv:fields",
               load_options=("header",), mcp=True, mime="text/tab-separated-values",
               note="tab-separated values, a header row first"),
'''
#: Where the entry goes: before the table's closing parenthesis.
TABLE_END = '''               note="as --output-format csv prints"),
)
'''
MODULE = ("cqlsh_ext/render/tsv.py", '''"""TSV, tab-separated values: a typed answer's rows as
--output-format csv spells them, a tab between fields (render.csv_rows), and a file's records read
back (load.source reads them as a CSV file's)."""

from __future__ import annotations

import csv
import io
from collections.abc import Iterator, Sequence
from typing import Any

from cqlsh_ext.render.csv_rows import CsvRows


class TsvSink:
    """COPY (SELECT ...) TO 'file.tsv': write(batch) for each batch, then finish(), or abort()."""

    def __init__(self, target: Any, answer: Any, settings: Any, places: Sequence[Any],
                 export: Any) -> None:
        self.out = io.TextIOWrapper(target.output(), encoding="utf-8", newline="",
                                    errors="backslashreplace")
        self.fields = CsvRows(self.out, answer.columns, settings, places, delimiter="\\t")
        self.width = len(answer.columns)
        self.rows = 0

    def write(self, batch: Any) -> None:
        self.fields.write_columns(batch.columns(self.width))
        self.rows += len(batch)

    def finish(self) -> None:
        self.out.close()

    def abort(self) -> None:
        try:
            self.out.close()
        except Exception:  # the file is discarded anyway
            pass


def fields(lines: Iterator[str]) -> Iterator[list[str]]:
    """A TSV file's records, each its fields."""
    return csv.reader(lines, delimiter="\\t", strict=True)
''')
README_LINE = ("- `tsv.py`: TSV, tab-separated values: a typed answer's rows as --output-format csv "
               "spells them, a tab between fields, and a file's records read back.\n")
TEST = ("tests/export/test_tsv.py", '''from cqlsh_ext.common.file_formats import by_suffix
from cqlsh_ext.cql.lexer import Lexed
from cqlsh_ext.export.parse import parse as export
from cqlsh_ext.features import declared
from cqlsh_ext.load.parse import is_load
from cqlsh_ext.load.parse import parse as load


def test_tsv_is_a_format_of_copy_to_copy_from_and_mcp():
    assert by_suffix("rows.TSV").title == "TSV"
    assert export(Lexed("COPY (SELECT * FROM ks.t) TO 'rows.tsv'")).fmt == "tsv"
    assert export(Lexed("COPY (SELECT * FROM ks.t) TO 'rows' WITH FORMAT = 'tsv'")).fmt == "tsv"
    statement = Lexed("COPY ks.t FROM 'rows.tsv' WITH HEADER = false")
    assert is_load(statement)
    assert (load(statement, None).format, load(statement, None).header) == ("tsv", False)
    tool = declared(plugins=False)["export"]
    assert "tsv" in next(a for a in tool.arguments if a.name == "format").keywords["enum"]
''')
#: The fast tests that read the formats, run in the copy beside the format's own test.
FAST = ["tests/mcp_server/test_declarations.py", "tests/test_man_page.py", "tests/test_maintainer_docs.py",
        "tests/test_imports.py", "tests/test_function_length.py", "tests/test_names.py",
        "tests/test_architecture_doc.py"]


def _add_the_format(copy: Path) -> None:
    table = copy / "cqlsh_ext/common/file_formats.py"
    text = table.read_text()
    assert text.count(TABLE_END) == 1
    table.write_text(text.replace(TABLE_END, TABLE_END[:-2] + ENTRY + ")\n"))
    for name, body in (MODULE, TEST):
        (copy / name).write_text(body)
    readme = copy / "cqlsh_ext/render/README.md"
    text = readme.read_text()
    after = "- `text_report.py`"
    readme.write_text(text.replace(after, README_LINE + after))


@pytest.fixture(scope="module")
def tsv_tree(tmp_path_factory: pytest.TempPathFactory) -> Path:
    copy = tmp_path_factory.mktemp("tsv-tree")
    before = copied(copy)
    _add_the_format(copy)
    home = tmp_path_factory.mktemp("tsv-home")
    written = in_copy(copy, home, sys.executable, "tools/man_page.py")  # the page from the HELP texts
    assert written.returncode == 0, written.stderr
    assert changed(copy, before) == sorted([
        "cqlsh_ext/common/file_formats.py", MODULE[0], "cqlsh_ext/render/README.md", TEST[0],
        "man/cqlsh-ext.1"])
    return copy


def test_the_format_passes_the_lints_and_the_tests_that_read_the_formats(tsv_tree: Path,
                                                                         tmp_path: Path) -> None:
    assert_checks_pass(tsv_tree, tmp_path, [MODULE[0], TEST[0], "cqlsh_ext/common/file_formats.py"],
                       [TEST[0], *FAST])
    # HELP EXPORT and HELP LOAD say it, and a FORMAT no format has names it among the valid ones.
    shown = in_copy(tsv_tree, tmp_path, sys.executable, "-c",
                     "from cqlsh_ext.export.help import EXPORT_HELP\n"
                     "from cqlsh_ext.load.help import LOAD_HELP\n"
                     "from cqlsh_ext.cql.lexer import Lexed\n"
                     "from cqlsh_ext.export.parse import parse, CopyError\n"
                     "print(' '.join(EXPORT_HELP.split())); print(' '.join(LOAD_HELP.split()))\n"
                     "try:\n    parse(Lexed(\"COPY (SELECT * FROM t) TO 'x' WITH FORMAT = 'tvs'\"))\n"
                     "except CopyError as err:\n    print(err)\n")
    assert shown.returncode == 0, shown.stderr
    export_help, load_help, refused = shown.stdout.splitlines()
    assert ".tsv (tab-separated values, a header row first)" in export_help
    assert "FORMAT = 'parquet' | 'jsonl' | 'csv' | 'tsv'" in export_help
    assert "FROM 'file.parquet' | 'file.jsonl' | 'file.csv' | 'file.tsv'" in load_help
    assert refused == "unknown format 'tvs' (did you mean tsv?); valid: parquet, jsonl, csv, tsv"


#: Documents written zstd-compressed by zstandard itself (the producer), one a row.
DOCUMENTS = {i: {"id": i, "name": f"Zoë\t{i}", "tags": ["a", "b"][: i % 3], "ok": i % 2 == 0}
             for i in range(5)}


def _tsv(text: str) -> dict[int, Any]:
    """A TSV file's rows read by Python's csv module: id -> its data field as JSON."""
    rows = list(csv.reader(io.StringIO(text), delimiter="\t"))
    assert rows[0] == ["id", "data"]
    return {int(key): json.loads(data) for key, data in rows[1:]}


@pytest.mark.server
def test_copy_to_copy_from_and_mcp_take_the_format(  # type: ignore[no-untyped-def]
        tsv_tree: Path, cassandra, serve, tmp_path: Path) -> None:
    env = copy_env(tsv_tree)
    home = tmp_path / "home"
    home.mkdir()
    ks = cassandra.create_keyspace("tsv_recipe")
    session = cassandra.session(ks)
    try:
        session.execute("CREATE TABLE src (id int PRIMARY KEY, data blob)")
        session.execute("CREATE TABLE twin (id int PRIMARY KEY, data blob)")
        insert = session.prepare("INSERT INTO src (id, data) VALUES (?, ?)")
        compressor = zstandard.ZstdCompressor()
        for key, document in DOCUMENTS.items():
            session.execute(insert, (key, compressor.compress(json.dumps(document).encode())))

        # COPY TO: the file is TSV, each document decoded.
        path = tmp_path / "rows.tsv"
        said = ext(cassandra, home, "-e", f"COPY (SELECT id, data FROM {ks}.src) TO '{path}'", env=env)
        assert said.returncode == 0, said.stderr
        assert f"5 rows written to {path} (TSV)" in said.stdout
        assert _tsv(path.read_text(encoding="utf-8")) == DOCUMENTS

        # COPY FROM: loaded back into the twin, each value written zstd>json as the column's label says.
        loaded = ext(cassandra, home, "-e", f"COPY {ks}.twin (id, data) FROM '{path}' WITH ENCODE data = "
                     "'zstd>json' CONFIRM", env=env)
        assert loaded.returncode == 0, loaded.stderr
        decompressor = zstandard.ZstdDecompressor()
        twin = {row.id: json.loads(decompressor.decompress(row.data)) for row in
                session.execute(f"SELECT id, data FROM {ks}.twin")}
        assert twin == DOCUMENTS
    finally:
        session.shutdown()

    # MCP: the tool's schema offers it, and the file it writes is TSV.
    exports = tmp_path / "exports"
    server = serve("--export-dir", str(exports), env=env, home=_login(home, cassandra))
    tool = {tool.name: tool for tool in server.tools()}["export"]
    assert tool.input_schema["properties"]["format"]["enum"] == ["parquet", "jsonl", "tsv"]
    made = server.call("export", statement=f"SELECT id, data FROM {ks}.src", format="tsv").data
    assert (made["format"], made["mimeType"], made["rows"]) == ("tsv", "text/tab-separated-values", 5)
    contents = server.portal.call(server.client.read_resource, made["uri"]).contents
    assert len(contents) == 1 and contents[0].mime_type == "text/tab-separated-values"
    assert _tsv(contents[0].text) == DOCUMENTS


def _login(home: Path, cassandra: Any) -> Path:
    """`home` with credentials of the test server's user (who reads the new keyspace)."""
    from .harness import write_credentials

    write_credentials(home, cassandra.username, cassandra.password)
    return home


def test_the_recipe_names_no_format_outside_the_table() -> None:
    """The places that named a format each (docs/extending.md's old list) read the table now: no
    format's name nor suffix is spelt as a list of them anywhere but common/file_formats.py."""
    root = Path(__file__).resolve().parents[2]
    pair = r"\"(parquet|jsonl|csv)\", *\"(parquet|jsonl|json|csv)\""
    listed = subprocess.run(["git", "grep", "-n", "-E", pair, "--", "cqlsh_ext/*.py"], cwd=root,
                            capture_output=True, text=True).stdout
    assert listed.splitlines() == [line for line in listed.splitlines() if "file_formats.py" in line], listed
