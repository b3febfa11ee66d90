"""`cqlsh-ext spark` reads values written with dictionaries (python-zstandard with a trained
dictionary, zlib with zdict) once they are named, as the shell does: each task carries the
driver's dictionaries to its executor, which read no settings of its own. The table is `runs`'
(conftest.DictionaryTable), whose run reads it without the dictionaries; `read_only_run` reads it
with them."""

from __future__ import annotations

import json

import pytest

from .conftest import json_lines

pytestmark = pytest.mark.spark


def test_spark_tasks_read_values_written_with_dictionaries(shell_runs, read_only_run):
    """DICTIONARY_STATEMENTS, run by `read_only_run` with the dictionaries named (its own run until
    it was one of that run's: a Spark start saved)."""
    made = shell_runs.dictionaries.made
    stats, count = [doc for doc in json_lines(read_only_run.stdout) if "command" in doc or "count" in doc]
    column = stats["columns"][0]
    assert column["by_codec"] == {"zstd": 30, "zlib": 30} and column["undecodable"] == {}, column
    paid = sum(1 for n in range(30) if json.loads(made.docs[n])["status"] == "PAID")
    assert paid and count == {"count": 2 * paid}, count


def test_without_them_the_executors_say_which_dictionary_each_value_needs(runs):
    """`runs` reads the table without naming the dictionaries (its own run until it was one of
    `runs`' statements: a Spark start saved), on Spark 3.5 and Spark 4."""
    made = runs.dictionaries.made
    (stats,) = [doc for doc in json_lines(runs.spark.stdout)
                if doc.get("command") == "COMPRESSION STATS" and runs.dictionaries.qualified in doc["query"]]
    assert stats["columns"][0]["reasons"] == {
        f"zlib stream needs a preset dictionary (DICTID 0x{made.zlib_id:08x})": 30,
        f"zstd frame needs dictionary ID {made.zstd_id}": 30}
