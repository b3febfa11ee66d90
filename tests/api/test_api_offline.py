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
    assert str(missing.value) == "pyarrow is not installed: pip install 'cqlsh-ext[api]'"


def test_an_unknown_name_is_an_attribute_error():
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        cqlsh_ext.nope  # noqa: B018
