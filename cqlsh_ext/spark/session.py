"""A SparkSession: on Spark 3.5 with the Cassandra connector (jars from Maven Central into a
cache), on Spark 4 with cqlsh-ext's own Python data source (spark/datasource.py) and no jar; the JVM's
output in a log file, and one line for each way starting can fail.

The connector and (for SigV4) the Keyspaces plugin for the Java driver are resolved by Spark itself
(`spark.jars.packages`) into an Ivy cache (`spark.jars.ivy`): the first start downloads them from
Maven Central (about 15 jars, 17 MB), later starts read the cache. `bin/setup --spark` fills the
cache once (`cqlsh-ext spark --fetch-jars`).
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

#: pyspark 3.5's jars are Scala 2.12; 3.5.1 is the newest connector for Spark 3.5 on Maven Central.
CONNECTOR = "com.datastax.spark:spark-cassandra-connector_2.12:3.5.1"
#: SigV4 for the Java driver the connector carries (Amazon Keyspaces with IAM credentials).
SIGV4_PLUGIN = "software.aws.mcs:aws-sigv4-auth-cassandra-java-driver-plugin:4.0.9"
#: Where the connector's jars are kept between runs (overridden by CQLSH_EXT_SPARK_CACHE).
CACHE_ENV = "CQLSH_EXT_SPARK_CACHE"
#: The oldest pyspark 4 whose Python data sources take pushed filters (DataSourceReader.pushFilters).
SPARK4_OLDEST = (4, 1)


class SparkError(Exception):
    """One line for the user: what failed, and what to do."""


def cache_dir() -> Path:
    given = os.environ.get(CACHE_ENV)
    if given:
        return Path(given).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "cqlsh-ext" / "spark"


def pyspark_version() -> tuple[int, int]:
    """The installed pyspark's (major, minor)."""
    import re

    import pyspark

    found = re.match(r"(\d+)\.(\d+)", pyspark.__version__)
    return (int(found.group(1)), int(found.group(2))) if found else (0, 0)


def on_spark4(spark: Any) -> bool:
    """Whether the session is Spark 4's (its reads go through cqlsh-ext's data source)."""
    return int(str(spark.version).split(".")[0]) >= 4


def check_environment() -> None:
    """What pyspark needs before it starts a JVM, said in one line each."""
    try:
        import pyspark  # noqa: F401
    except ImportError:
        from cqlsh_ext.common.install import install_hint

        raise SparkError(f"Spark mode needs pyspark: {install_hint('spark')}") from None
    version = pyspark_version()
    if version >= (4, 0):
        if version < SPARK4_OLDEST:
            from cqlsh_ext.common.install import install_hint

            raise SparkError(f"pyspark {pyspark.__version__}: Spark 4's Python data sources take pushed "
                             f"filters from pyspark 4.1: install pyspark 4.1 or later, or 3.5 "
                             f"({install_hint('spark')})")
        _check_java()
        return
    try:
        # pyspark 3.5's pandas UDFs and its version checks import distutils, which Python 3.12+
        # lacks; setuptools provides it (the [spark] extra installs it there).
        import distutils  # noqa: F401
    except ImportError:
        from cqlsh_ext.common.install import install_hint

        raise SparkError("pyspark 3.5 needs distutils, which this Python lacks (setuptools has it): "
                         f"{install_hint('spark')}") from None
    _check_java()


def _check_java() -> None:
    java_home = os.environ.get("JAVA_HOME")
    java = os.path.join(java_home, "bin", "java") if java_home else shutil.which("java")
    if not java or not os.access(java, os.X_OK):
        where = f"JAVA_HOME={java_home} has no bin/java" if java_home else "no java on PATH"
        raise SparkError(f"Spark needs Java (17): {where}")


def executor_python() -> None:
    """Executors run this interpreter (with cqlsh_ext installed), unless the user chose one."""
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)


@contextmanager
def _jvm_output_to(log: Path) -> Iterator[None]:
    """The JVM inherits stdout and stderr when pyspark starts it: pointed at the log file while it
    starts, so Ivy's and log4j's lines stay out of the report and the one progress line."""
    sys.stdout.flush()
    sys.stderr.flush()
    saved = os.dup(1), os.dup(2)
    fd = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        os.dup2(fd, 1)
        os.dup2(fd, 2)
        yield
    finally:
        os.dup2(saved[0], 1)
        os.dup2(saved[1], 2)
        for f in (fd, *saved):
            os.close(f)


def log_path() -> Path:
    return Path(tempfile.gettempdir()) / f"cqlsh-ext-spark-{os.getuid()}-{os.getpid()}.log"


def _last_error(log: Path) -> str:
    """The most telling line the JVM wrote before it gave up."""
    try:
        lines = [line.strip() for line in log.read_text(errors="replace").splitlines() if line.strip()]
    except OSError:
        return "no output"
    for marker in ("unresolved dependency", "Exception", "Error"):
        for line in lines:
            if marker in line and not line.startswith("at "):
                return line[:300]
    return lines[-1][:300] if lines else "no output"


def start(master: str, conf: dict[str, str], packages: list[str], app_name: str = "cqlsh-ext") -> Any:
    """A SparkSession, or SparkError with one line."""
    check_environment()
    executor_python()
    from pyspark.sql import SparkSession

    cache = cache_dir()
    cache.mkdir(parents=True, exist_ok=True)
    builder = SparkSession.builder.master(master).appName(app_name).config("spark.ui.showConsoleProgress",
                                                                            "false")
    if packages:  # (Spark 4 reads through cqlsh-ext's data source: no jar)
        builder = (builder.config("spark.jars.packages", ",".join(packages))
                   .config("spark.jars.ivy", str(cache / "ivy")))
    for key, value in conf.items():
        builder = builder.config(key, value)
    log = log_path()
    try:
        with _jvm_output_to(log):
            spark = builder.getOrCreate()
    except Exception as err:
        raise SparkError(f"Spark could not start: {_last_error(log) if log.exists() else err} "
                         f"(Spark's output: {log})") from None
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def read_failed(spark: Any, table: str, err: BaseException) -> SparkError:
    """The one line for a table's read that failed: what read it (the connector, or on Spark 4
    cqlsh-ext's data source) and why."""
    reader = "cqlsh-ext's data source" if on_spark4(spark) else "the Spark connector"
    return SparkError(f"reading {table} through {reader} failed: {java_error(err)}")


def java_error(err: BaseException) -> str:
    """One line from a Py4JJavaError or a pyspark AnalysisException: the Java exception's own
    message, and its root cause where that says more (the connector wraps a driver error)."""
    text = str(getattr(err, "desc", None) or err)
    if "PYTHON_DATA_SOURCE" in text or "Traceback (most recent call last)" in text:
        # Spark 4's data source failed in a Python worker (planning it, or reading in a task): its
        # error's line (before: a task's was Spark's first line alone, "An exception was thrown
        # from the Python worker:", the reason left out)
        worker = _python_error(text)
        if worker:
            return worker
    java = getattr(err, "java_exception", None)
    if java is None:
        return " ".join(text.splitlines()[0].split()) if text else type(err).__name__
    parts = []
    seen = 0
    while java is not None and seen < 8:
        parts.append(str(java.toString()))
        java = java.getCause()
        seen += 1
    first = " ".join(parts[0].split())
    if "org.apache.spark.api.python.PythonException" in first:
        # A Python error in an executor: its own last line, not the Java and Python stacks.
        import re

        errors = re.findall(r"\b([A-Z]\w*(?:Error|Exception): .*?)(?= at org\.apache| File \"|$)", first)
        python = [s for s in errors if not s.startswith(("PythonException", "SparkException"))]
        return f"a Python error in a Spark task: {python[-1] if python else first[:300]}"
    root = " ".join(parts[-1].split())
    # The Java driver's "Could not reach any contact point ... (showing first 1 nodes, ...): [each
    # node's error]" is long: the part before the node list says it.
    first = first.split(" (showing first")[0]
    said = root.split(": ", 1)[-1][:60] in first
    return first if said or root == first else f"{first} (cause: {root.split(' (showing first')[0]})"


def _python_error(text: str) -> str | None:
    """The last error line of a Python traceback in `text`: cqlsh-ext's own one line as it is (the
    data source's refusals), another error named."""
    import re

    lines = [found for found in re.findall(r"^\s*((?:\w+\.)*)([A-Z]\w*): (.+)$", text, re.M)
             if found[1].endswith(("Error", "Exception"))]
    if not lines:
        return None
    module, name, message = lines[-1]
    if f"{module}{name}" == "cqlsh_ext.api.errors.Error":
        return message.strip()
    return f"a Python error in Spark's data source: {name}: {message.strip()}"


class TaskProgress:
    """Spark's own job status (its status tracker), one line on a terminal's stderr: completed
    tasks of the running stages, and rows read by the finished tasks."""

    def __init__(self, spark: Any, label: str, rows: Any) -> None:
        from cqlsh_ext.scanning.scan import progress_for

        self.tracker = spark.sparkContext.statusTracker()
        self.rows = rows  # a Spark accumulator, added to by each task
        self.line = progress_for(label, True)
        self.tasks = (0, 0)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self) -> TaskProgress:
        self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._stop.set()
        self._thread.join(2)
        if self.line is not None:
            self.line.close()

    def poll(self) -> tuple[int, int]:
        done = total = 0
        for stage in self.tracker.getActiveStageIds():
            info = self.tracker.getStageInfo(stage)
            if info is not None:
                done += info.numCompletedTasks
                total += info.numTasks
        if total:
            self.tasks = (done, total)
        return self.tasks

    def _run(self) -> None:
        while not self._stop.wait(0.25):
            done, total = self.poll()
            if self.line is not None:
                self.line.detail = lambda text=f"{done}/{total} Spark tasks": text
                self.line.update(int(self.rows.value), done / total if total else None)
