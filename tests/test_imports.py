"""What each entry point loads: start-up stays small because heavy parts load on first use."""

from __future__ import annotations

import gzip
import subprocess
import sys
from pathlib import Path


def _imported(code: str, *args: str) -> set[str]:
    """Top-level packages imported by running `code` (python -X importtime)."""
    proc = subprocess.run([sys.executable, "-X", "importtime", "-c", code, *args],
                          capture_output=True, text=True, check=True)
    names = set()
    for line in proc.stderr.splitlines():
        if line.startswith("import time:") and "|" in line:
            names.add(line.rsplit("|", 1)[1].strip().split(".")[0])
    return names


def test_offline_inspect_loads_neither_cqlsh_nor_the_driver(tmp_path: Path):
    value = tmp_path / "value.gz"
    value.write_bytes(gzip.compress(b'{"id": 1, "name": "offline"}' * 4))
    code = "import sys; from cqlsh_ext.cli import main; sys.exit(main(['inspect', sys.argv[1]]))"
    loaded = _imported(code, str(value))
    assert "cqlsh_ext" in loaded and "zlib" in loaded  # the run did decode
    assert not loaded & {"cqlshlib", "cassandra", "prompt_toolkit", "boto3", "botocore"}


def test_command_declarations_load_no_handler_dependencies():
    # The shell reads every declaration at start-up (features.shell_commands, and the command modules
    # whose handlers they name) to learn its grammar: they must stay light.
    loaded = _imported("from cqlsh_ext.features import commands\n"
                       "assert commands.command('undo').handler and commands.intercepts_for('copy')")
    assert "cqlsh_ext" in loaded
    assert not loaded & {"cassandra", "prompt_toolkit", "boto3", "zstandard", "lz4", "cramjam", "snappy",
                          "hdrh"}


def test_the_shell_and_a_script_load_no_arrow_until_an_export_asks():
    # COPY (SELECT ...) TO is wired in at start-up (cqlsh_ext.export.command): pyarrow, about 130 MB,
    # loads only when a Parquet file is written.
    loaded = _imported("from cqlsh_ext import shell; from cqlsh_ext.export import command, parse")
    assert "cqlsh_ext" in loaded
    assert not loaded & {"pyarrow", "duckdb"}
