"""`cqlsh-ext spark [--master URL] [--read-only] [--policy FILE] [cqlsh connection options]
-e STATEMENT | -f FILE`.

The connection arguments are the shell's (host, port, -u/-p, --ssl, --credentials, --cqlshrc, -k,
--keyspaces REGION, --sigv4, --region, --certfile), read by cqlsh's own option reader and our
settings; -d and --output-format as in the shell. Each statement runs as Spark jobs; the report is
the shell's. Errors are one line on stderr, exit code 2. --read-only and --policy are the shell's
flags (the same settings, cqlshrc's read_only and policy too): every statement is asked of the
read-only rule the shell asks (agent.read_only) before Spark starts, a refusal the shell's one line
and exit code 3.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from cqlsh_ext.spark.session import SparkError

if TYPE_CHECKING:
    from cqlsh_ext.agent.read_only import ReadOnly
    from cqlsh_ext.cql.lexer import Lexed

USAGE = ("cqlsh-ext spark [--master URL] [--read-only] [--policy FILE] [connection options] "
         "(-e STATEMENT | -f FILE)")
DESCRIPTION = """Runs COMPRESSION STATS (exact, whole table), SELECT statements with payload
paths, conditions, aggregates and GROUP BY, DESCRIBE PAYLOAD (every row) and COMPRESSION REWRITE
(its writes from the executors) on Apache Spark, reading the table through the Spark Cassandra
Connector (pyspark 3.5) or cqlsh-ext's own Python data source (pyspark 4.1 and later); values are
decoded in the executors by cqlsh-ext itself. The connection options are the shell's (cqlsh-ext
--help). With --read-only (or --policy FILE, which implies it) each statement is first asked of the
read-only rule the shell's --read-only keeps to (cqlsh-ext docs agents): one it refuses is said in
the shell's one line, exit code 3, before Spark starts."""

#: The shell's settings whose flags `cqlsh-ext spark` takes beside the connection's (settings.SETTINGS).
READ_ONLY_FLAGS = ("read_only", "policy")


class ReadOnlyRefused(SparkError):
    """A statement the read-only rule refuses: its one line, exit code 3 (common.exits.REFUSED)."""


def _setting(text: str) -> tuple[str, str]:
    key, sep, value = text.partition("=")
    if not sep or not key.strip():
        raise argparse.ArgumentTypeError(f"expected KEY=VALUE, got {text!r}")
    return key.strip(), value


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="cqlsh-ext spark", usage=USAGE, description=DESCRIPTION,
                                     allow_abbrev=False)
    parser.add_argument("--master", default="local[*]",
                        help="Spark master URL (default local[*]: this machine, one task per core)")
    parser.add_argument("--conf", action="append", default=[], metavar="KEY=VALUE", type=_setting,
                        help="a Spark setting, as spark-submit --conf (repeatable)")
    parser.add_argument("--fetch-jars", action="store_true",
                        help="download the connector's jars into the cache and exit (bin/setup --spark; "
                             "Spark 3.5's: Spark 4 needs none)")
    from cqlsh_ext.settings import add_flags

    add_flags(parser, "agent", READ_ONLY_FLAGS)  # the shell's own flags, read as the shell reads them
    return parser


def _statements(options: Any) -> list[Lexed]:
    """The statements of -e or -f, split at each `;`: the text lexed once, each statement its
    tokens (cqlsh_ext.cql.lexer.Lexed) that spark.parse, the payload-query parser and the read-only
    rule read, in its own text (`_alone`)."""
    if options.execute:
        text = options.execute
    elif options.file:
        try:
            text = Path(options.file).read_text()
        except OSError as err:
            raise SparkError(f"cannot read {options.file}: {err.strerror}") from None
    else:
        raise SparkError("give a statement: -e 'COMPRESSION STATS ks.t' or -f FILE")
    from cqlsh_ext.cql.errors import QueryError
    from cqlsh_ext.cql.lexer import Lexed

    script = Lexed(text)
    try:
        tokens = script.tokens
    except QueryError as err:
        raise SparkError(str(err)) from None
    statements, start = [], 0
    for i, tok in enumerate(tokens):
        if (tok.kind == "punct" and tok.value == ";") or tok.kind == "end":
            if i > start:
                statements.append(_alone(script, start, i))
            start = i + 1
    return statements


def _alone(script: Lexed, first: int, stop: int) -> Lexed:
    """The statement of the script's tokens[first:stop] in a text of its own, from the end of the
    `;` before it to the start of the one after, its tokens (not lexed again) placed in it: as the
    shell hands each statement, so that the read-only rule reads what lies between its tokens, and
    none of the statement before it (whose `;` would read as one inside a comment)."""
    from dataclasses import replace

    from cqlsh_ext.cql.lexer import Lexed, Token

    tokens = script.tokens
    cut = tokens[first - 1].end if first else 0
    end = tokens[stop].start - cut
    moved = [replace(tok, start=tok.start - cut, end=tok.end - cut) for tok in tokens[first:stop]]
    return Lexed(script.text[cut:cut + end], [*moved, Token("end", "", end, end)])


def fetch_jars(spark_args: Any) -> int:
    from cqlsh_ext.spark import session

    session.check_environment()
    if session.pyspark_version() >= (4, 0):
        print("cqlsh-ext spark: Spark 4 reads through cqlsh-ext's own data source: no jar to fetch")
        return 0
    spark = session.start("local[1]", dict(spark_args.conf),
                          [session.CONNECTOR, session.SIGV4_PLUGIN], "cqlsh-ext fetch-jars")
    spark.stop()
    print(f"cqlsh-ext spark: connector jars in {session.cache_dir() / 'ivy'}")
    return 0


def main(args: list[str]) -> int:
    spark_args, rest = _parser().parse_known_args(args)
    try:
        if spark_args.fetch_jars:
            return fetch_jars(spark_args)
        return _run(spark_args, rest)
    except ReadOnlyRefused as err:
        from cqlsh_ext.common import exits

        print(err, file=sys.stderr)  # the shell's line, word for word
        return exits.REFUSED.code
    except SparkError as err:
        print(f"cqlsh-ext spark: {err}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("cqlsh-ext spark: interrupted", file=sys.stderr)
        return 130


def _run(spark_args: Any, rest: list[str]) -> int:
    from cqlsh_ext.keyspaces.errors import KeyspacesError
    from cqlsh_ext.settings import SettingError
    from cqlsh_ext.spark import connect, session

    try:
        conn = connect.connection(rest, {name: getattr(spark_args, name) for name in READ_ONLY_FLAGS})
    except (SettingError, KeyspacesError) as err:
        raise SparkError(str(err)) from None
    statements = _statements(conn.options)
    guard = _read_only(conn)
    if guard is not None:  # what the text decides (a write, a denied table named), before anything connects
        _check(guard, statements, conn.options.keyspace, lambda keyspace: (), None, None)
    from cqlsh_ext.spark.parse import classify

    # Every one checked before Spark starts (a table named alone is in -k's keyspace).
    parsed = [classify(statement, conn.options.keyspace) for statement in statements]
    session.check_environment()  # pyspark, distutils, Java: before connecting
    from cqlsh_ext.keyspaces.errors import ConnectionFailed, connection_failures

    try:
        # The shell's one wrapper: one line naming host:port and what to check.
        with connection_failures(conn.host, conn.port, tls=conn.ssl, keyspaces=conn.settings.keyspaces.active,
                                 debug=conn.settings.debug):
            cluster = conn.cluster()
            db = cluster.connect(conn.options.keyspace) if conn.options.keyspace else cluster.connect()
    except ConnectionFailed as err:
        raise SparkError(str(err)) from None
    try:
        db.default_timeout = conn.options.request_timeout
        if guard is not None:  # the tables the server names when it prepares each, before Spark starts
            from cqlsh_ext.agent.read_only import view_base

            _check(guard, statements, conn.options.keyspace, lambda keyspace: _tables_of(cluster, keyspace),
                   db.prepare, lambda keyspace, name: view_base(cluster.metadata, keyspace, name))
        spark4 = session.pyspark_version() >= (4, 0)
        if not spark4:
            _check_partitioner(db, conn)
        datacenter = next((h.datacenter for h in cluster.metadata.all_hosts() if h.datacenter), None)
        with tempfile.TemporaryDirectory(prefix="cqlsh-ext-spark-") as workdir:
            # Spark 4: no connector to configure; its reads go through cqlsh-ext's data source,
            # which connects with this command's own arguments (spark/datasource.py).
            conf = {} if spark4 else conn.spark_conf(datacenter, Path(workdir))
            conf.update(dict(spark_args.conf))
            spark = session.start(spark_args.master, conf, [] if spark4 else conn.packages())
            if spark4:
                from cqlsh_ext.spark.datasource import register

                register(spark, connection_arguments(rest))
            try:
                for stmt in parsed:
                    _one(spark, db, conn, stmt)
            finally:
                spark.stop()
            session.log_path().unlink(missing_ok=True)  # kept when something failed: errors name it
    finally:
        cluster.shutdown()
    return 0


def _read_only(conn: Any) -> ReadOnly | None:
    """--read-only's guard (the shell's: agent.read_only) when the settings ask for it, else None."""
    if not conn.settings.agent.read_only:
        return None
    from cqlsh_ext.agent import read_only
    from cqlsh_ext.mcp_server.policy import PolicyError

    try:
        return read_only.load(conn.settings.agent.policy)
    except PolicyError as err:
        raise SparkError(str(err)) from None


def _check(guard: ReadOnly, statements: list[Lexed], keyspace: str | None,
           tables_of: Callable[[str], Sequence[str]], prepare: Callable[[str], object] | None,
           base_of: Callable[[str, str], str | None] | None) -> None:
    """ReadOnlyRefused, with the shell's line, at the first statement the read-only rule refuses."""
    for statement in statements:
        why = guard.refusal(statement, None, keyspace, tables_of, prepare, base_of)
        if why is not None:
            raise ReadOnlyRefused(why)


def _tables_of(cluster: Any, keyspace: str) -> list[str]:
    """The tables and views of `keyspace` in the driver's schema (a name alone is one of them)."""
    meta = cluster.metadata.keyspaces.get(keyspace)
    return [] if meta is None else [*meta.tables, *getattr(meta, "views", {})]


def connection_arguments(rest: list[str]) -> list[str]:
    """The command line's arguments but its statements (-e, -f): the connection, as the data
    source's Python workers make it again."""
    kept: list[str] = []
    skip = False
    for arg in rest:
        if skip:
            skip = False
        elif arg in ("-e", "--execute", "-f", "--file"):
            skip = True
        elif not arg.startswith(("--execute=", "--file=")):
            kept.append(arg)
    return kept


def _check_partitioner(db: Any, conn: Any) -> None:
    """The connector splits a table by Murmur3 or Random tokens; Amazon Keyspaces' own
    DefaultPartitioner is neither (Amazon tells Spark users to switch the account to Murmur3)."""
    from cqlsh_ext.scanning.ring import server_partitioner

    partitioner = server_partitioner(db) or ""
    if partitioner and not partitioner.endswith(("Murmur3Partitioner", "RandomPartitioner")):
        raise SparkError(f"the Spark Cassandra Connector reads Murmur3Partitioner and RandomPartitioner "
                         f"clusters; {conn.host} uses "
                         f"{partitioner} (Amazon Keyspaces: set the account's partitioner to "
                         "Murmur3Partitioner, cqlsh-ext docs spark)")


def _one(spark: Any, db: Any, conn: Any, stmt: Any) -> None:
    """One statement (spark.parse.classify's): a declared statement's job (Statement.spark) runs
    itself; COMPRESSION REWRITE, COPY (SELECT ...) and SELECT are Spark mode's own."""
    from cqlsh_ext.spark.parse import ExportStatementOnSpark, QueryStatement, RewriteOnSpark

    if isinstance(stmt, RewriteOnSpark):
        from cqlsh_ext.spark import rewrite_job

        rewrite_job.run(spark, db, conn, stmt)
    elif isinstance(stmt, ExportStatementOnSpark):
        from cqlsh_ext.spark import export_job

        export_job.run(spark, db, stmt, conn.settings)
    elif isinstance(stmt, QueryStatement):
        from cqlsh_ext.spark import query_job

        query_job.run(spark, db, stmt, conn.settings, conn.options.float_precision)
    else:
        stmt.run(spark, db, conn)
