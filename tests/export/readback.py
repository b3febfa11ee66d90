"""Reading an export back the way its users do: pyarrow and DuckDB for Parquet, json for JSON
Lines, csv for CSV; and the shell's closing line."""

from __future__ import annotations

import csv
import json
import re
from pathlib import Path
from typing import Any

CLOSING = re.compile(r"^COPY \(SELECT \.\.\.\): ([\d,]+) rows written to (.+?) \((.+?)\)(?:; (.*))?$")


def closing_line(stdout: str) -> str:
    """The closing line as one line: on a terminal it is wrapped at words, its later rows indented
    (common.text.message), and a status line drawn over with "\r" is gone."""
    shown = [line.rstrip("\r").rsplit("\r", 1)[-1] for line in stdout.split("\n")]
    lines: list[str] = []
    continued = False  # the line before was the closing line, or a row of it
    for line in shown:
        if line.startswith("COPY (SELECT ...): "):
            lines.append(line)
            continued = True
        elif continued and line.startswith("    "):
            lines[-1] += " " + line.strip()
        else:
            continued = False
    assert len(lines) == 1, stdout
    return lines[0]


def rows_written(stdout: str) -> int:
    found = CLOSING.match(closing_line(stdout))
    assert found is not None, stdout
    return int(found.group(1).replace(",", ""))


def parquet_rows(path: Path) -> tuple[Any, list[dict[str, Any]]]:
    """(the Arrow schema, the rows) as pyarrow reads them."""
    import pyarrow.parquet as pq

    table = pq.read_table(path)
    return table.schema, table.to_pylist()


def duckdb_rows(path: Path, columns: str = "*") -> tuple[dict[str, str], list[dict[str, Any]]]:
    """({column: DuckDB's type} of every column of the file, the rows of `columns`) as DuckDB
    reads them."""
    import duckdb

    con = duckdb.connect()
    try:
        con.execute("SET TimeZone = 'UTC'")
        described = con.execute(f"DESCRIBE SELECT * FROM read_parquet('{path}')").fetchall()
        types = {row[0]: row[1] for row in described}
        relation = con.execute(f"SELECT {columns} FROM read_parquet('{path}')")
        names = [d[0] for d in relation.description]
        rows = [dict(zip(names, row, strict=True)) for row in relation.fetchall()]
    finally:
        con.close()
    return types, rows


def jsonl_rows(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def csv_rows(path: Path) -> list[list[str]]:
    with open(path, newline="", encoding="utf-8") as f:
        return list(csv.reader(f))
