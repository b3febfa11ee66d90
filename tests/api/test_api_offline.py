"""The API's parts that need no server: `import cqlsh_ext` loads none of it until it is asked for,
and a missing optional library is one line naming the extra."""

from __future__ import annotations

import subprocess
import sys

import pytest

import cqlsh_ext


def test_import_cqlsh_ext_loads_the_api_only_when_asked():
    code = ("import sys, cqlsh_ext\n"
            "print(sorted(m for m in sys.modules if m.startswith('cqlsh_ext')))\n"
            "cqlsh_ext.decode\n"
            "print('cqlsh_ext.api' in sys.modules, 'cqlsh_ext.shell' in sys.modules)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.splitlines() == ["['cqlsh_ext']", "True False"]


def test_without_pyarrow_one_line_names_the_extra(monkeypatch):
    from cqlsh_ext.api.query_answer import need

    monkeypatch.setitem(sys.modules, "pyarrow", None)  # as if it were not installed
    with pytest.raises(cqlsh_ext.Error) as missing:
        need("pyarrow")
    # In this checkout's .venv the way to add it is bin/setup's (common.install.install_hint).
    assert str(missing.value).startswith("pyarrow is not installed: run ")
    assert str(missing.value).endswith("--api") and "\n" not in str(missing.value)


def test_an_unknown_name_is_an_attribute_error():
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        cqlsh_ext.nope  # noqa: B018


class _File:
    """Where ParquetSink writes (export.target.ExportFile's two parts)."""

    def __init__(self, folder) -> None:
        self.folder = folder
        self.temp = folder / "out.parquet"
        self.made = 0

    def scratch(self):
        self.made += 1
        return self.folder / f"scratch-{self.made}.parquet"


def test_arrow_table_widens_as_the_parquet_file_does(tmp_path):
    """Kinds that change after the first row group (an int column meeting 10**20, then a string):
    the table in memory and the file end in one schema and the same values."""
    import pyarrow.parquet as pq

    from cqlsh_ext.render.parquet import ArrowTableSink, ParquetSink
    from cqlsh_ext.settings import DisplaySettings

    batches = [[(1,), (2,)], [(10**20,), (3,)], [("seven",), (None,)]]
    memory = ArrowTableSink(["v"], [None], DisplaySettings(), [None], row_group_size=2)
    target = _File(tmp_path)
    file = ParquetSink(target, ["v"], [None], DisplaySettings(), [None], row_group_size=2)
    for batch in batches:
        memory.write(batch)
        file.write(batch)
    memory.finish()
    file.finish()
    written = pq.read_table(target.temp)
    assert memory.table.schema == written.schema
    assert memory.table.to_pylist() == written.to_pylist()
    values = [row["v"] for row in memory.table.to_pylist()]
    assert values == ["1", "2", "100000000000000000000", "3", '"seven"', None]
