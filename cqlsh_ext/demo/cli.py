"""`cqlsh-ext demo load`: create the demo keyspace and fill it.

Tables (keyspace `compression_demo` by default):
- table_with_compressed_json (id timeuuid, data blob): snappy-compressed order documents, as in the
  Amazon Keyspaces compression article;
- table_with_uncompressed_json (id timeuuid, data text): the same documents uncompressed;
- blob_formats (name text, producer text, data blob): one value per supported container;
- nested_blobs: blobs inside a map, a list, a tuple and a UDT.

With `--dictionaries DIR` the dictionaries blob_formats' `zstd dictionary` and `zlib preset
dictionary` rows were written with are also written to DIR (samples.DICTIONARY_FILES), loaded or not:
bin/demo names them to the shell with --dictionary. `cqlsh-ext demo dictionaries DIR` writes them
alone, without a server (the same bytes on every run): the Compose shell does, for its --dictionary.
"""

from __future__ import annotations

import argparse
import os
import uuid
from typing import Any

import cramjam

from cqlsh_ext.common.text import plural, say
from cqlsh_ext.demo.records import documents
from cqlsh_ext.demo.samples import DICTIONARY_FILES, dictionaries, samples

#: cqlsh's own default credentials file.
DEFAULT_CREDENTIALS = "~/.cassandra/credentials"

SCHEMA = """
CREATE KEYSPACE IF NOT EXISTS {ks} WITH replication = {{'class': 'SimpleStrategy', 'replication_factor': 1}};
CREATE TABLE IF NOT EXISTS {ks}.table_with_compressed_json (id timeuuid PRIMARY KEY, data blob);
CREATE TABLE IF NOT EXISTS {ks}.table_with_uncompressed_json (id timeuuid PRIMARY KEY, data text);
CREATE TABLE IF NOT EXISTS {ks}.blob_formats (name text PRIMARY KEY, producer text, data blob);
CREATE TYPE IF NOT EXISTS {ks}.attachment (filename text, content blob);
CREATE TABLE IF NOT EXISTS {ks}.nested_blobs (id int PRIMARY KEY, by_codec map<text, blob>,
    history list<blob>, pair tuple<text, blob>, attached frozen<attachment>);
"""


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="cqlsh-ext demo", description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="action", required=True)
    load = sub.add_parser("load", help="create the demo keyspace and tables and fill them",
                          description="Create the demo keyspace and its tables and fill them. The login "
                                      "is found as cqlsh finds it: -u/-p, else the credentials file, "
                                      "else cassandra/cassandra.")
    load.add_argument("host", nargs="?", default=os.environ.get("CQLSH_HOST", "127.0.0.1"),
                      help="the server (default: $CQLSH_HOST, else 127.0.0.1)")
    load.add_argument("port", nargs="?", type=int, default=int(os.environ.get("CQLSH_PORT", "9042")),
                      help="its CQL port (default: $CQLSH_PORT, else 9042)")
    load.add_argument("-u", "--username",
                      help="user to log in as (default: the credentials file's, else cassandra)")
    load.add_argument("-p", "--password",
                      help="its password (default: $CQLSH_EXT_DEMO_PASSWORD, the credentials file's, "
                           "else cassandra)")
    load.add_argument("--credentials", metavar="FILE", default=DEFAULT_CREDENTIALS,
                      help="a credentials file as cqlsh reads it: [plain_text_auth] username and password; "
                           "used only when it is yours and readable by you alone, as in cqlsh "
                           "(default: %(default)s)")
    load.add_argument("-k", "--keyspace", default="compression_demo",
                      help="the keyspace to create and fill (default: %(default)s)")
    load.add_argument("--rows", type=int, default=2000, help="documents per JSON table (default %(default)s)")
    load.add_argument("--connect-timeout", type=float, default=10.0, metavar="SECONDS",
                      help="how long to wait for the server (default: %(default)s)")
    load.add_argument("--if-missing", action="store_true", help="do nothing when the demo data is there")
    load.add_argument("--dictionaries", metavar="DIR",
                      help=f"also write the demo's dictionaries to DIR ({', '.join(DICTIONARY_FILES)}), "
                           "for the shell's --dictionary")
    written = sub.add_parser("dictionaries", help="write the demo's dictionaries to a directory",
                             description="Write the demo's dictionaries to DIR "
                                         f"({', '.join(DICTIONARY_FILES)}), for the shell's --dictionary: "
                                         "the same bytes `demo load` wrote its values with.")
    written.add_argument("directory", metavar="DIR")
    return parser


def write_dictionaries(directory: str) -> list[str]:
    """The demo's two dictionaries written to `directory`: their paths."""
    os.makedirs(directory, exist_ok=True)
    paths = []
    for name, data in zip(DICTIONARY_FILES, dictionaries(next(documents(1))), strict=True):
        path = os.path.join(directory, name)
        with open(path, "wb") as f:
            f.write(data)
        paths.append(path)
    return paths


def login(args: argparse.Namespace) -> tuple[str, str]:
    """(username, password) as cqlsh picks them: the flags, then the credentials file (when it is
    the user's own and unreadable by others), then the demo server's cassandra/cassandra; the
    password from $CQLSH_EXT_DEMO_PASSWORD before the file."""
    import configparser

    from cqlsh_ext.upstream.seams import credentials_file_secure

    path = os.path.expanduser(args.credentials)
    from_file: dict[str, str] = {}
    if not credentials_file_secure(path):
        say(f"cqlsh-ext demo: credentials file {path} not used: it must be yours and readable by you "
            f"only (chmod 600 {path}), as cqlsh requires")
    else:
        creds = configparser.RawConfigParser()
        try:
            creds.read(path)
        except (configparser.Error, OSError, UnicodeDecodeError) as err:
            say(f"cqlsh-ext demo: credentials file {path} not read: {err}")
        else:
            if creds.has_section("plain_text_auth"):
                from_file = dict(creds.items("plain_text_auth"))
    username = args.username or from_file.get("username") or "cassandra"
    password = (args.password or os.environ.get("CQLSH_EXT_DEMO_PASSWORD") or from_file.get("password")
                or "cassandra")
    return username, password


#: Documents generated and written at a time (each table's), between two updates of the status line.
LOAD_CHUNK = 500


def load(session: Any, keyspace: str, rows: int) -> dict[str, int]:
    """Create and fill the demo tables through a cassandra-driver session; returns rows written."""
    import itertools

    from cassandra.concurrent import execute_concurrent_with_args

    from cqlsh_ext.scanning.scan import progress_for

    for statement in SCHEMA.format(ks=keyspace).split(";"):
        if statement.strip():
            session.execute(statement)
    compressed = session.prepare(
        f"INSERT INTO {keyspace}.table_with_compressed_json (id, data) VALUES (?, ?)"
    )
    plain = session.prepare(
        f"INSERT INTO {keyspace}.table_with_uncompressed_json (id, data) VALUES (?, ?)"
    )
    # A status line on a terminal while the two JSON tables fill (30,000 documents take minutes).
    progress = progress_for("demo load", True, 2 * rows)  # its keyspace said on the line before
    if progress is not None:
        progress.ctrl_c = ("(Ctrl-C stops; demo load again fills it)", "(Ctrl-C: stop)")
    written = 0
    # Off a terminal (a pipe, a log) no status line: a line at each tenth of the documents instead.
    tenth, told = max(2 * rows // 10, 1), 0
    try:
        generated = documents(rows)  # one sequence (one seed): the same documents as ever
        for start in range(0, rows, LOAD_CHUNK):
            docs = list(itertools.islice(generated, LOAD_CHUNK))
            ids = [_timeuuid(number) for number in range(start, start + len(docs))]
            execute_concurrent_with_args(
                session, compressed,
                [(i, bytes(cramjam.snappy.compress_raw(d.encode()))) for i, d in zip(ids, docs, strict=True)],
                concurrency=64)
            execute_concurrent_with_args(session, plain, list(zip(ids, docs, strict=True)), concurrency=64)
            written += 2 * len(docs)
            if progress is not None:
                progress.update(written, force=True)
            elif written // tenth > told:
                told = written // tenth
                say(f"demo load: {written:,} of {2 * rows:,} documents written")
    finally:
        if progress is not None:
            progress.close()

    sample_doc = next(documents(1))  # docs[0]: the one the dictionaries are made of
    formats = samples(sample_doc)
    insert = session.prepare(
        f"INSERT INTO {keyspace}.blob_formats (name, producer, data) VALUES (?, ?, ?)"
    )
    execute_concurrent_with_args(session, insert, [(s.name, s.producer, s.data) for s in formats])

    by_name = {s.name: "0x" + s.data.hex() for s in formats}
    # CQL literals: the UDT value is easiest to write that way.
    session.execute(
        f"INSERT INTO {keyspace}.nested_blobs (id, by_codec, history, pair, attached) VALUES (1, "
        f"{{'snappy': {by_name['snappy raw']}, 'zstd': {by_name['zstd']}, 'raw': 0x00010203}}, "
        f"[{by_name['gzip']}, {by_name['lz4 frame']}], ('doc', {by_name['xz']}), "
        f"{{filename: 'order.json.gz', content: {by_name['gzip']}}})"
    )
    return {
        "table_with_compressed_json": rows,
        "table_with_uncompressed_json": rows,
        "blob_formats": len(formats),
        "nested_blobs": 1,
    }


def _timeuuid(number: int) -> uuid.UUID:
    """Time-based ids that are the same on every load, so loading again overwrites instead of adding."""
    from cassandra.util import uuid_from_time

    return uuid_from_time(1_704_067_200 + number * 0.001, node=0x0DE30DE30DE3, clock_seq=number % 0x3FFF)


def is_loaded(session: Any, keyspace: str) -> bool:
    if keyspace not in session.cluster.metadata.keyspaces:
        return False
    rows = session.execute(f"SELECT name FROM {keyspace}.blob_formats LIMIT 1")
    return rows.one() is not None


def main(argv: list[str]) -> int:
    args = _parser().parse_args(argv)
    if args.action == "dictionaries":
        write_dictionaries(args.directory)
        return 0
    if args.dictionaries:
        write_dictionaries(args.dictionaries)
    from cassandra.auth import PlainTextAuthProvider
    from cassandra.cluster import Cluster

    from cqlsh_ext.keyspaces.errors import ConnectionFailed, connection_failures, remember_secret

    username, password = login(args)
    remember_secret(password)
    try:
        # The shell's one wrapper: one line naming host:port and what to check, for any failure.
        with connection_failures(args.host, args.port):
            cluster = Cluster(
                [args.host],
                port=args.port,
                connect_timeout=args.connect_timeout,
                auth_provider=PlainTextAuthProvider(username, password),
            )
            try:
                session = cluster.connect()
            except BaseException:
                cluster.shutdown()
                raise
    except ConnectionFailed as err:
        say(f"cqlsh-ext demo: {err}")
        return 1
    try:
        session.default_timeout = 60
        if args.if_missing and is_loaded(session, args.keyspace):
            print(f"{args.keyspace}: demo data already loaded")
            return 0
        # Status on stderr (the counts below are the result): loading takes seconds.
        per_table = plural(args.rows, "document")
        say(f"cqlsh-ext demo: loading the demo data into {args.keyspace} ({per_table} per JSON table) ...")
        written = load(session, args.keyspace, args.rows)
    finally:
        cluster.shutdown()
    for table, count in written.items():
        print(f"{args.keyspace}.{table}: {plural(count, 'row')}")
    return 0
