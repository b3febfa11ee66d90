"""`cqlsh-ext spark -e "COPY (SELECT ...) TO 'dir' WITH FORMAT = 'parquet'"`: Spark's own Parquet
writer, a directory of part files that DuckDB reads equal to the shell's export of the same SELECT,
column for column and type for type (docs/export.md, "On Spark")."""

from __future__ import annotations

import pytest

from tests.export.readback import duckdb_rows

from .conftest import make_table, order, run_shell, run_spark

pytestmark = pytest.mark.spark

#: One SELECT of every kind of column the export makes: a CQL column, a decoded blob (struct and
#: companions), paths (typed, and JSON text where kinds mix), a map of blobs.
SELECT = "SELECT id, data, data.status, data.amount, data.customer, extra FROM {t}"
GROUPED = ("SELECT data.status, count(*), sum(data.amount), max(data.customer.name) FROM {t} "
           "GROUP BY data.status ALLOW FILTERING CONFIRM")


@pytest.fixture(scope="module")
def exports(cassandra, tmp_path_factory):
    home = tmp_path_factory.mktemp("spark_export")
    table = make_table(cassandra, 300)
    statements = home / "statements.cql"
    rows, groups = SELECT.format(t=table.qualified), GROUPED.format(t=table.qualified)
    parquet = "WITH FORMAT = 'parquet'"
    one = f"SELECT id FROM {table.qualified} WHERE data.amount = 37 ALLOW FILTERING CONFIRM"  # row 1 alone
    statements.write_text(f"COPY ({rows}) TO '{home / 'spark_rows'}' {parquet};\n"
                          f"COPY ({groups}) TO '{home / 'spark_groups'}' {parquet};\n"
                          f"COPY ({one}) TO '{home / 'spark_one'}' {parquet};\n"
                          f"COPY ({rows}) TO '{home / 'spark_rows'}' {parquet};\n")
    spark = run_spark(cassandra, home, ["--master", "local[2]", "-f", str(statements)])
    for name, select in (("shell_rows.parquet", SELECT), ("shell_groups.parquet", GROUPED)):
        shell = run_shell(cassandra, home, f"COPY ({select.format(t=table.qualified)}) TO '{home / name}'")
        assert shell.returncode == 0, shell.stderr
    return home, table, spark


def test_spark_writes_what_the_shell_writes(exports):
    home, table, spark = exports
    written = [line for line in spark.stdout.splitlines() if line.startswith("COPY (SELECT ...): ")]
    assert len(written) == 3, spark.stdout + spark.stderr
    assert written[0].startswith(f"COPY (SELECT ...): {len(table.values):,} rows written to "
                                 f"{home / 'spark_rows'} (Parquet part files by Spark, zstd)")
    assert list((home / "spark_rows").glob("part-*.parquet"))
    for spark_dir, shell_file, key in (("spark_rows", "shell_rows.parquet", "id"),
                                       ("spark_groups", "shell_groups.parquet", "data.status")):
        spark_types, spark_rows = duckdb_rows(f"{home / spark_dir}/*.parquet")
        shell_types, shell_rows = duckdb_rows(home / shell_file)
        assert spark_types == shell_types, spark_dir
        def ordered(rows: list[dict], key: str = key) -> list[dict]:
            return sorted(rows, key=lambda r: repr(r[key]))

        assert ordered(spark_rows) == ordered(shell_rows)
    _types, rows = duckdb_rows(f"{home / 'spark_rows'}/*.parquet")
    decoded = {r["id"]: r for r in rows if r["data"] is not None}
    for i, row in decoded.items():
        assert row["data"]["status"] == order(i)["status"] and row["data.amount"] == order(i)["amount"]


def test_one_row_written_is_said_in_the_singular(exports):
    # "1 rows written" (issue 109): the shell's export said "1 row written"; Spark's said "rows".
    home, _table, spark = exports
    assert f"COPY (SELECT ...): 1 row written to {home / 'spark_one'} " in spark.stdout, spark.stdout


def test_an_existing_directory_is_kept_unless_overwrite_is_said(exports):
    _home, _table, spark = exports
    # the third statement wrote to spark_rows again without OVERWRITE: refused in one line
    assert spark.returncode != 0
    assert "spark_rows exists: add WITH OVERWRITE = true to replace it" in spark.stderr
