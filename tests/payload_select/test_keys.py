"""Key completion's sample (cqlsh_ext.payload_select.keys) on the real server, through the shell
the interactive front end uses: the keys offered after `data.`, read once per column."""

from __future__ import annotations

import gzip
import json
import random
from collections.abc import Iterator
from typing import Any

import pytest
import snappy
from cassandra.query import UNSET_VALUE
from shell_runner import in_process_shell

from cqlsh_ext.payload_select.keys import PayloadKeys, path_at

#: The documents in the test table (the keys a user expects to be offered).
DOCS = [
    {"status": "NEW", "order-id": "A-1", "customer": {"name": "Ann", "tier": "gold"},
     "items": [{"sku": "S1", "qty": 1}]},
    {"status": "PAID", "customer": {"name": "Bob", "Tier \"x\"": 2}, "items": [],
     "note": "leave at the door"},
    {"status": "FAILED", "items": [{"sku": "S2"}, {"sku": "S3", "gift": True}], "Status": "odd"},
]
UNDECODABLE = 4


def encode(i: int, doc: dict[str, Any]) -> bytes:
    text = json.dumps(doc).encode()
    return [text, gzip.compress(text, mtime=0), snappy.compress(text)][i % 3]


@pytest.fixture(scope="module")
def tables(cassandra) -> str:
    ks = cassandra.create_keyspace("keys")
    session = cassandra.session(ks)
    session.execute("CREATE TYPE wrap (name text, payload blob)")
    session.execute("CREATE TABLE docs (pk int PRIMARY KEY, data blob, m map<text, blob>, "
                    "u frozen<wrap>, other blob)")
    insert = session.prepare("INSERT INTO docs (pk, data, m, u, other) VALUES (?, ?, ?, ?, ?)")
    rng = random.Random(7)
    for i, doc in enumerate(DOCS * 10):
        inner = json.dumps({"inner": i, "label": "a map value"}).encode()
        udt = ("n", json.dumps({"field_in_udt": i, "more": "text"}).encode())  # (name, payload)
        session.execute(insert, (i, encode(i, doc), {"k": inner}, udt, UNSET_VALUE))
    for i in range(UNDECODABLE):  # random bytes: no reading fits, no keys
        session.execute(insert, (100 + i, bytes([0x9F, 0x00]) + rng.randbytes(40), None, None, UNSET_VALUE))
    session.shutdown()
    return ks


@pytest.fixture(scope="module")
def ext_shell(cassandra, tables) -> Iterator[Any]:
    with in_process_shell(cassandra) as sh:
        yield sh


class Requests:
    """Counts the requests the shell's session sends (the driver's request listener)."""

    def __init__(self, session: Any) -> None:
        self.statements: list[str] = []
        session.add_request_init_listener(self._seen)

    def _seen(self, future: Any) -> None:
        self.statements.append(str(getattr(future.message, "query", future.message)))


def keys_of(shell: Any) -> PayloadKeys:
    """Key completion as the REPL's completer makes it: in the shell's context as it is now."""
    from cqlsh_ext.reading.context import shell_context

    return PayloadKeys(lambda: shell_context(shell))


def keys_at(keys: PayloadKeys, text: str, read: bool = True) -> tuple[int, list[str]] | None:
    """Candidates with the cursor at '|' in `text`."""
    cursor = text.index("|")
    return keys.candidates(text.replace("|", ""), cursor, read)


def test_the_path_at_the_cursor_and_the_table_after_it():
    at = path_at("SELECT pk, data.customer.na FROM ks.t", len("SELECT pk, data.customer.na"))
    assert at is not None and at.head == "data" and at.partial == "na"
    assert at.steps == ((".", "customer"),) and at.table == ("ks", "t")
    assert path_at("SELECT * FROM ks.", len("SELECT * FROM ks.")) is None  # a table name: cqlsh's
    assert path_at("INSERT INTO t (data) VALUES (0x00)", 12) is None
    text = "SELECT 1 FROM a; SELECT m['a b'].x[2]. FROM t"  # the statement the cursor is in
    at = path_at(text, text.index(" FROM t"))
    assert at is not None and at.steps == (("[", "a b"), (".", "x"), 2) and at.table == (None, "t")


def test_before_the_from_the_column_names_its_table_or_the_from_is_asked_for(ext_shell, tables, cassandra):
    at = path_at("SELECT pk, data.cu", len("SELECT pk, data.cu"))
    assert at is not None and at.table is None and at.partial == "cu"  # a SELECT, its FROM not typed yet
    assert path_at("UPDATE t SET x = data.", 22) is None  # not a SELECT: nothing to guess
    keys = keys_of(ext_shell)
    ext_shell.current_keyspace = tables
    try:
        assert keys_at(keys, "SELECT pk, data.|") == (0, ["customer", "items", "note", '"order-id"', "Status",
                                                          "status"])  # docs: the one table with data
        assert keys.from_needed("SELECT pk, data.", 16) is None
        session = cassandra.session(tables)
        session.execute("CREATE TABLE IF NOT EXISTS more_docs (pk int PRIMARY KEY, data blob)")
        session.shutdown()
        ext_shell.conn.refresh_schema_metadata()
        assert keys_at(keys, "SELECT pk, data.|") is None  # two tables: no guess
        assert keys.from_needed("SELECT pk, data.", 16) == "<FROM first: data is in docs, more_docs>"
        # A narrow menu: as many tables as fit, else their number (the menu would cut the line).
        assert keys.from_needed("SELECT pk, data.", 16, room=35) == "<FROM first: data is in docs, ...>"
        assert keys.from_needed("SELECT pk, data.", 16, room=20) == "<FROM first: data is in 2 tables>"
        assert keys.from_needed("SELECT pk, other.", 17) is None  # one table again: its keys
        assert keys.from_needed("SELECT pk, nothing.", 19) is None  # no such blob: cqlsh's completion
    finally:
        ext_shell.current_keyspace = None
    assert keys.from_needed("SELECT pk, data.", 16) == "<FROM keyspace.table first: its values give the keys>"


def test_keys_nested_quoted_and_after_list_items(ext_shell, tables):
    keys = keys_of(ext_shell)
    # The FROM comes after the cursor, as a person fills in the columns last.
    assert keys_at(keys, f"SELECT pk, data.| FROM {tables}.docs") == (
        0, ["customer", "items", "note", '"order-id"', "Status", "status"])
    assert keys_at(keys, f"SELECT data.customer.| FROM {tables}.docs") == (
        0, ["name", "tier", '"Tier ""x"""'])
    assert keys_at(keys, f"SELECT data.items[1].| FROM {tables}.docs") == (0, ["gift", "qty", "sku"])
    assert keys_at(keys, f"SELECT data.cu| FROM {tables}.docs") == (2, ["customer"])
    assert keys_at(keys, f'SELECT data."or| FROM {tables}.docs') == (3, ['"order-id"'])
    assert keys_at(keys, f"SELECT * FROM {tables}.docs WHERE data.status = 'NEW' AND data.customer.t|") == (
        1, ["tier", '"Tier ""x"""'])
    # After USE, the table alone.
    ext_shell.current_keyspace = tables
    try:
        assert keys_at(keys, "SELECT data.items[0].s| FROM docs") == (1, ["sku"])
    finally:
        ext_shell.current_keyspace = None
    sample = keys.samples[(tables, "docs", "data")]
    assert sample.undecodable == UNDECODABLE and sample.rows == len(DOCS) * 10 + UNDECODABLE


def test_keys_inside_a_map_of_blobs_and_a_udt_field(ext_shell, tables):
    keys = keys_of(ext_shell)
    assert keys_at(keys, f"SELECT m['k'].| FROM {tables}.docs") == (0, ["inner", "label"])
    assert keys_at(keys, f"SELECT m['other'].| FROM {tables}.docs") == (0, [])
    assert keys_at(keys, f"SELECT u.payload.| FROM {tables}.docs") == (0, ["field_in_udt", "more"])
    assert keys_at(keys, f"SELECT u.name.| FROM {tables}.docs") is None  # a text field: no path
    assert keys_at(keys, f"SELECT pk.| FROM {tables}.docs") is None  # not a blob
    assert keys_at(keys, f"SELECT other.| FROM {tables}.docs") == (0, [])  # all null: no keys


def test_a_column_is_read_once_and_typing_never_reads(ext_shell, tables):
    keys = keys_of(ext_shell)
    requests = Requests(ext_shell.session)
    assert keys_at(keys, f"SELECT data.| FROM {tables}.docs", read=False) == (0, [])  # typing: cache only
    assert requests.statements == []
    assert keys_at(keys, f"SELECT data.| FROM {tables}.docs")[1]
    assert requests.statements == [f"SELECT data FROM {tables}.docs LIMIT 100"]
    for text in (f"SELECT data.customer.| FROM {tables}.docs", f"SELECT data.st| FROM {tables}.docs",
                 f"SELECT pk FROM {tables}.docs WHERE data.items[0].|"):
        assert keys_at(keys, text)[1]
        assert keys_at(keys, text, read=False)[1]
    assert len(requests.statements) == 1  # every later Tab on the column: the cache
    assert keys_at(keys, f"SELECT m['k'].| FROM {tables}.docs")[1]
    assert requests.statements[1:] == [f"SELECT m FROM {tables}.docs LIMIT 100"]


def test_a_slow_or_failing_read_gives_no_keys_once(ext_shell, cassandra):
    ks = cassandra.create_keyspace("faults_keys")
    session = cassandra.session(ks)
    session.execute("CREATE TABLE t (pk int PRIMARY KEY, data blob)")
    session.execute("INSERT INTO t (pk, data) VALUES (1, textAsBlob('{\"status\": \"NEW\", \"n\": 1}'))")
    session.shutdown()
    ext_shell.conn.refresh_schema_metadata()
    keys = keys_of(ext_shell)
    requests = Requests(ext_shell.session)
    cassandra.faults.set("delay", -1, 10000)  # far past the sample's timeout
    try:
        assert keys_at(keys, f"SELECT data.| FROM {ks}.t") == (0, [])
        assert (keys.samples[(ks, "t", "data")].error or "").startswith("OperationTimedOut")
        assert keys_at(keys, f"SELECT data.| FROM {ks}.t") == (0, [])  # not waited for again
        assert len(requests.statements) == 1
        cassandra.faults.set("read_timeout", -1)
        other = keys_of(ext_shell)
        assert keys_at(other, f"SELECT data.| FROM {ks}.t") == (0, [])
        assert "ReadTimeout" in (other.samples[(ks, "t", "data")].error or "")
    finally:
        cassandra.faults.clear()


def _shared_parts(levels: int, mapping: type = dict) -> Any:
    """A record of `levels` levels of ten keys, each level one mapping referenced ten times: a
    graph of 10 * levels nodes and 10**levels paths."""
    node: Any = mapping(leaf=1)
    for _ in range(levels):
        node = mapping({f"k{j}": node for j in range(10)})
    return node


def test_a_pickle_of_shared_parts_gives_its_keys_without_walking_every_path():
    # 888 bytes of pickle whose memo shares each level ten times: 10**12 paths. Tab's sample used
    # to walk them all (the shell hung on the first Tab after `data.`).
    import pickle

    from cqlsh_ext.payload.engine import ValueEngine
    from cqlsh_ext.payload.view import RECORD
    from cqlsh_ext.payload_select.keys import collect

    view = ValueEngine().view(pickle.dumps(_shared_parts(12), protocol=4))
    assert view.kind == RECORD
    keys: dict[Any, set[str]] = {}
    collect(view.tree, keys)
    ten = {f"k{j}" for j in range(10)}
    assert keys[()] == ten and keys[("k0",)] == ten and keys[("k0", "k0", "k0")] == ten


def test_the_key_walk_visits_at_most_max_visits_nodes_of_one_value():
    from cqlsh_ext.payload_select.keys import MAX_VISITS, collect

    visits = [0]

    class Counting(dict):  # type: ignore[type-arg]
        def items(self):  # type: ignore[override]
            visits[0] += 1
            return super().items()

    collect(_shared_parts(7, Counting), {})  # 10**7 paths
    assert 0 < visits[0] <= MAX_VISITS
