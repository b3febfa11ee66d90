"""SELECT with payload paths on Spark (being written)."""

from __future__ import annotations

from typing import Any

from cqlsh_ext.spark.session import SparkError


def run(spark: Any, session: Any, stmt: Any, settings: Any) -> None:
    raise SparkError("SELECT in Spark mode is not available yet")
