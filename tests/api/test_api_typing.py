"""The API is typed for a program's tools: `py.typed` goes into the wheel, docs/api.md's examples
pass `mypy --strict` as a program using cqlsh-ext would be checked, and what the main calls give
is their precise type, not Any."""

from __future__ import annotations

import re
import subprocess
import sys
import textwrap
import zipfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
DOC = REPO / "docs" / "api.md"

#: What each call gives, as mypy reveals it.
REVEALED = {
    'cqlsh_ext.connect("127.0.0.1")': "cqlsh_ext.api.database.Database",
    'db.query("SELECT pk FROM orders WHERE pk = ?", ["p1"])': "cqlsh_ext.api.query_answer.QueryAnswer",
    'next(iter(db.query("SELECT pk FROM orders")))': "dict[str, Any]",
    'db.query("SELECT pk FROM orders").notes': "dict[str, Any]",
    'db.query("SELECT pk FROM orders").paging_state': "bytes | None",
    'db.query("SELECT pk FROM orders").to_polars()': "polars.dataframe.frame.DataFrame",
    'db.execute("DELETE FROM orders WHERE pk = ?", ["p1"])': "cqlsh_ext.api.database.Executed",
    'db.partitions("SELECT pk FROM orders", 4)': "list[cqlsh_ext.api.partitions.Partition]",
    'cqlsh_ext.read_partition(db.partitions("SELECT pk FROM orders", 4)[0], db)':
        "cqlsh_ext.api.query_answer.QueryAnswer",
    'cqlsh_ext.scan(db, "SELECT pk FROM orders")': "polars.lazyframe.frame.LazyFrame",
    'db.edit("DELETE data.note FROM orders WHERE pk = \'p1\'")': "cqlsh_ext.api.writes.EditResult",
    'db.rewrite("shop.orders.data", "zstd")': "cqlsh_ext.api.writes.RewriteResult",
    'db.undo("journal.jsonl")': "cqlsh_ext.api.writes.UndoResult",
    'db.stats("orders")': "cqlsh_ext.api.report.ReportResult",
    'cqlsh_ext.decode(b"x")': "cqlsh_ext.api.one_value.DecodedValue",
}


def examples() -> list[str]:
    """docs/api.md's Python examples, each as written."""
    return re.findall(r"```python\n(.*?)```", DOC.read_text(), re.DOTALL)


def program() -> str:
    """The examples as a program checks them: each a function of the names they take as given
    (`db`, a connection; `tampered_journal`, a path), then what the calls give, revealed."""
    parts = ["from typing import Any\n\nimport cqlsh_ext\n"]
    for n, example in enumerate(examples()):
        parts.append(f"\ndef example_{n}(db: cqlsh_ext.Database, tampered_journal: str) -> None:\n"
                     + textwrap.indent(example, "    "))
    parts.append("\ndef revealed(db: cqlsh_ext.Database) -> None:\n"
                 + "".join(f"    reveal_type({call})\n" for call in REVEALED))
    return "".join(parts)


def test_py_typed_goes_into_the_wheel(tmp_path: Path) -> None:
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "--quiet",
                    "-w", str(tmp_path), str(REPO)], check=True, capture_output=True, timeout=600)
    (wheel,) = tmp_path.glob("cqlsh_ext-*.whl")
    assert "cqlsh_ext/py.typed" in zipfile.ZipFile(wheel).namelist()


def test_the_docs_examples_pass_mypy_strict_and_the_calls_are_typed(tmp_path: Path) -> None:
    assert len(examples()) >= 12
    source = tmp_path / "uses_cqlsh_ext.py"
    source.write_text(program())
    # cqlsh_ext from this checkout, checked as an installed typed package is: its types read, its
    # own errors not the program's. pyarrow and pandas ship no annotations: Any, as for any program.
    config = tmp_path / "mypy.ini"
    config.write_text(f"[mypy]\nstrict = True\nmypy_path = {REPO}\n"
                      "[mypy-cqlsh_ext.*]\nignore_errors = True\n"
                      "[mypy-pyarrow.*]\nignore_missing_imports = True\n"
                      "[mypy-pandas.*]\nignore_missing_imports = True\n"
                      "[mypy-cassandra.*]\nignore_missing_imports = True\n"
                      "[mypy-cqlsh_ext_native]\nignore_missing_imports = True\n")
    done = subprocess.run([sys.executable, "-m", "mypy", "--config-file", str(config), "--no-incremental",
                           str(source)], capture_output=True, text=True, timeout=900, cwd=tmp_path)
    lines = done.stdout.splitlines()
    errors = [line for line in lines if ": error:" in line]
    assert not errors, "\n".join(errors)
    said = [line.split('Revealed type is "', 1)[1].rstrip('"')
            for line in lines if "Revealed type is" in line]
    assert said == list(REVEALED.values())
