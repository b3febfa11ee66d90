"""The Dockerfile's dependency layer (tools/docker/requirements.py): the shell's extras, not the
test tools and not Spark mode's (the image has no JVM; Spark hosts get their own environment)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def _requirements(extras: str) -> list[str]:
    out = subprocess.run([sys.executable, str(REPO / "tools/docker/requirements.py"), extras,
                          str(REPO / "pyproject.toml")], capture_output=True, text=True, check=True)
    return out.stdout.split()


def test_all_leaves_out_test_tools_and_spark():
    # (a requirement's name: before its extras, its version's range or its marker)
    chosen = {re.split(r"[\[<>=!~;\s]", req, maxsplit=1)[0] for req in _requirements("all")}
    assert "cqlsh" in chosen and "boto3" in chosen
    assert "pyarrow" in chosen  # COPY (SELECT ...) TO 'x.parquet' works in the image
    assert "mcp" in chosen  # so does `docker run -i ... mcp` (docs/mcp.md)
    assert not chosen & {"pyspark", "pandas", "pytest", "mypy", "duckdb"}


def test_spark_can_still_be_asked_for():
    chosen = _requirements("spark")
    assert any(req.startswith("pyspark==") for req in chosen)
    # the spark extra names the parquet extra for pyarrow: its pin, never cqlsh-ext from PyPI
    assert "pyarrow==26.0.1" in chosen and not any(req.startswith("cqlsh-ext") for req in chosen)
