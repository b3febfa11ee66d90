"""examples/payloads_in_pandas.ipynb executed with nbclient against the real server: a payload
query into pandas, a parameterized query, the same answer read by four processes
(examples/partitioned_read.py) and DESCRIBE PAYLOAD, as a person running it sees them."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from .conftest import Orders

pytestmark = pytest.mark.server

NOTEBOOK = Path(__file__).resolve().parents[2] / "examples" / "payloads_in_pandas.ipynb"


def test_the_notebook_runs_against_the_server(cassandra, orders: Orders, tmp_path, monkeypatch):
    import nbformat
    from nbclient import NotebookClient
    from orders import take

    for name, value in (("HOST", cassandra.host), ("PORT", str(cassandra.port)),
                        ("USER", cassandra.username), ("PASSWORD", cassandra.password),
                        ("KEYSPACE", orders.ks)):
        monkeypatch.setenv(f"CQLSH_EXT_{name}", value)
    monkeypatch.setenv("HOME", str(tmp_path))  # no developer's cqlshrc
    notebook = nbformat.read(NOTEBOOK, as_version=4)
    # Run where the notebook is, as a person opens it: examples/partitioned_read.py imports from there.
    NotebookClient(notebook, timeout=300, kernel_name="python3",
                   resources={"metadata": {"path": str(NOTEBOOK.parent)}}).execute()
    outputs = ["".join(out.get("text", "") or out.get("data", {}).get("text/plain", "")
                       for out in cell.outputs)
               for cell in notebook.cells if cell.cell_type == "code"]
    paid = sum(1 for _row, doc in orders.rows if doc is not None and take(doc, ("status",)) == "PAID")
    undecodable = sum(1 for _row, doc in orders.rows if doc is None)
    assert f"{paid} orders paid; {undecodable} values undecodable" in outputs[1]
    assert "data.customer.name" in outputs[1] and "PAID" in outputs[1]
    found = sorted((row["pk"], row["ck"]) for row, doc in orders.rows
                   if row["pk"] == "p1" and doc is not None and take(doc, ("customer", "name")) == "C1")
    printed = [line for line in outputs[2].splitlines() if line.startswith("{")]
    assert sorted((ast.literal_eval(line)["pk"], ast.literal_eval(line)["ck"]) for line in printed) == found \
        and found
    assert all("'data.customer.name': 'C1'" in line for line in printed)
    assert (f"{paid} orders paid, read by 4 processes; {len(orders.rows)} rows read, {undecodable} values "
            "undecodable") in outputs[3]
    assert f"DESCRIBE PAYLOAD {orders.ks}.orders.data" in outputs[4]
    assert "zstd>msgpack" in outputs[4]
