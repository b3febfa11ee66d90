"""The Python API against the real server: a payload query into Arrow, pandas, polars and DuckDB,
DESCRIBE PAYLOAD and COMPRESSION STATS as data, one value decoded, errors as cqlsh_ext.Error with
the shell's one line, an answer read once."""

from __future__ import annotations

import random
import re
import subprocess
from typing import Any

import pytest
from orders import encode, take
from shell_runner import CQLSH_EXT, isolated_env

import cqlsh_ext

from .conftest import COUNT, Orders

pytestmark = pytest.mark.server


def paid(orders: Orders) -> set[tuple[str, int]]:
    """The truth: the (pk, ck) of every order whose status is PAID."""
    return {(row["pk"], row["ck"]) for row, doc in orders.rows
            if doc is not None and take(doc, ("status",)) == "PAID"}


def statement(orders: Orders) -> str:
    return (f"SELECT pk, ck, data.status, data.customer.name FROM {orders.name} "
            "WHERE data.status = 'PAID' ALLOW FILTERING")


def test_rows_are_dicts_with_paths_and_payloads(db, orders: Orders):
    answer = db.query(f"SELECT pk, ck, data.status, data FROM {orders.name} WHERE pk = 'p1'")
    assert [(c.name, c.role) for c in answer.columns] == [
        ("pk", "cql"), ("ck", "cql"), ("data.status", "path"), ("data", "blob")]
    got = {row["ck"]: row for row in answer}
    truth = {row["ck"]: doc for row, doc in orders.rows if row["pk"] == "p1"}
    assert set(got) == set(truth)
    for ck, doc in truth.items():
        if doc is None:  # random bytes: no payload
            assert got[ck]["data"] is None
            continue
        status = take(doc, ("status",))
        # The table's value (docs/api.md, Rows): a status its column's type (a string) does not
        # hold, the number 7 of one document, is None there, as in to_arrow()
        want = None if status is cqlsh_ext_missing() or not isinstance(status, str) else status
        assert got[ck]["data.status"] == want
        assert got[ck]["data"]["order-id"] == doc["order-id"]
    assert answer.notes["rows_read"] == len(truth)
    assert answer.notes["undecodable"] == sum(doc is None for doc in truth.values())
    with pytest.raises(cqlsh_ext.Error, match="read already"):
        list(answer)


def test_a_column_name_said_twice_is_refused_as_dicts_and_kept_in_arrow(db, orders: Orders):
    """A row as a dict holds one value a name: SELECT pk AS k, ck AS k gave {'k': ck}, the pk
    dropped. Its rows refuse in one line, reading nothing; its Arrow table keeps both columns."""
    answer = db.query(f"SELECT pk AS k, ck AS k FROM {orders.name} WHERE pk = 'p1'")
    with pytest.raises(cqlsh_ext.Error, match="'k' twice"):
        list(answer)
    table = answer.to_arrow()
    assert table.column_names == ["k", "k"] and set(table.column(0).to_pylist()) == {"p1"}
    cks = sorted(row["ck"] for row, _ in orders.rows if row["pk"] == "p1")
    assert cks and sorted(table.column(1).to_pylist()) == cks


def cqlsh_ext_missing() -> Any:
    from orders import MISSING

    return MISSING


def test_a_payload_filter_into_arrow_and_duckdb(db, orders: Orders):
    import duckdb
    import pyarrow as pa

    answer = db.query(statement(orders))
    table = answer.to_arrow()
    assert isinstance(table, pa.Table)
    assert table.column_names == ["pk", "ck", "data.status", "data.status:note", "data.customer.name",
                                  "data.customer.name:note"]
    assert table.schema.field("ck").type == pa.int32()
    assert table.schema.field("data.status").type == pa.string()
    keys = zip(table.column("pk").to_pylist(), table.column("ck").to_pylist(), strict=True)
    assert set(keys) == paid(orders)
    assert answer.to_arrow() is table  # held: asked again, the same table
    counted = duckdb.sql('SELECT count(*), min("data.status") FROM answer').fetchall()
    assert counted == [(len(paid(orders)), "PAID")]


def test_pandas_and_polars(db, orders: Orders):
    frame = db.query(statement(orders)).to_pandas()
    assert set(zip(frame["pk"], frame["ck"], strict=True)) == paid(orders)
    polars_frame = db.query(statement(orders)).to_polars()
    assert sorted(polars_frame["ck"].to_list()) == sorted(ck for _, ck in paid(orders))


def test_a_blob_column_in_arrow_is_the_export_s_five_columns(db, orders: Orders):
    table = db.query(f"SELECT ck, data FROM {orders.name} WHERE pk = 'p0'").to_arrow()
    assert table.column_names == ["ck", "data", "data:label", "data:kind", "data:note", "data:stored",
                                  "data:confidence"]
    kinds = dict(zip(table.column("ck").to_pylist(), table.column("data:kind").to_pylist(), strict=True))
    truth = {row["ck"]: doc for row, doc in orders.rows if row["pk"] == "p0"}
    # A document is a record (MessagePack, CBOR) or a text (JSON, its tree the payload); random bytes
    # have no known format.
    documents = {ck for ck, kind in kinds.items() if kind in ("record", "text")}
    assert documents == {ck for ck, d in truth.items() if d}
    assert {ck for ck, kind in kinds.items() if kind == "unknown"} == {ck for ck, d in truth.items() if not d}
    payloads = dict(zip(table.column("ck").to_pylist(), table.column("data").to_pylist(), strict=True))
    assert all(payloads[ck]["order-id"] == d["order-id"] for ck, d in truth.items() if d)


def test_describe_payload_and_stats(db, orders: Orders):
    described = db.describe_payload(f"{orders.name}.data", sample=None)
    data = described.to_dict()
    assert data["rows_read"] == len(orders.rows)
    (place,) = data["places"]
    paths = {entry["path"]: entry for entry in place["paths"]}
    documents = [doc for _, doc in orders.rows if doc is not None]
    assert paths["data.customer.name"]["present"]["count"] == sum("customer" in doc for doc in documents)
    labels = {encoding["label"]: encoding["count"] for encoding in place["encodings"]}
    assert labels["zstd>msgpack"] == len(orders.rows) // 6
    schema = described.json_schema()["json_schema"]["data"]
    assert schema["type"] == "object" and "customer" in schema["properties"]
    stats = db.stats(orders.name).to_dict()
    assert stats["rows"] == len(orders.rows) and stats["complete"]
    assert "Column data: 120 values" in db.stats(orders.name).text(80)
    # ALL (every_row): the same rows read, said so; the request built by describe_payload's declared
    # builder, as MCP's tool builds it (a bad argument refused in its one line).
    every = db.describe_payload(f"{orders.name}.data", every_row=True).to_dict()
    assert every["reading"]["mode"] == "all" and every["rows_read"] == len(orders.rows)
    with pytest.raises(cqlsh_ext.Error, match=r"^describe_payload: sample is at least 1, not 0$"):
        db.describe_payload(f"{orders.name}.data", sample=0)


def test_advise_and_settings_take_what_their_features_declare(db, orders: Orders):
    # The same arguments as MCP's compression_advise and compression_settings (one declaration each).
    advice = db.advise(orders.name, column="data", sample=30).to_dict()
    assert advice["query"] == f"SELECT data FROM {orders.ks}.orders"
    assert [column["column"] for column in advice["columns"]] == ["data"]
    assert advice["rows"] == 30 and advice["columns"][0]["values"] == 30
    settings = db.settings(orders.name, sample=50).to_dict()
    assert settings["table"] == "orders" and settings["sample"]["rows"] == 50
    with pytest.raises(cqlsh_ext.Error, match=r"^compression_settings: sample is at least 1, not 0$"):
        db.settings(orders.name, sample=0)
    with pytest.raises(cqlsh_ext.Error) as named:
        db.advise(orders.name, column="ks.data")  # the table is named apart: a column is one name
    assert str(named.value) == "column name must be one column's name (names, \"quoted\" where they need " \
                               "it), not 'ks.data'"
    with pytest.raises(cqlsh_ext.Error) as missing:
        db.advise(orders.name, column="dta")  # the column is looked up in the schema, not sent as text
    assert str(missing.value).startswith(f"COMPRESSION ADVISE: unknown column 'dta' in '{orders.ks}.orders' "
                                         "(did you mean data?); valid: ")


def test_decode_one_value():
    doc = {"status": "PAID", "items": [{"sku": "S1"}]}
    decoded = cqlsh_ext.decode(encode(doc, "zstd-msgpack", random.Random(1)))
    assert decoded.payload == doc
    assert decoded.kind == "record" and decoded.label is not None and "zstd" in decoded.label
    assert cqlsh_ext.decode(b"\x00\x01 not a payload").payload is None
    with pytest.raises(cqlsh_ext.Error, match="unknown decompression mode"):
        cqlsh_ext.decode(b"x", codec="nope")


def test_errors_are_one_line(db, orders: Orders):
    with pytest.raises(cqlsh_ext.Error) as server:
        db.query(f"SELECT nope FROM {orders.name}")
    assert "\n" not in str(server.value) and "nope" in str(server.value)
    with pytest.raises(cqlsh_ext.Error) as refused:
        db.query(f"SELECT data.status FROM {orders.name} WHERE data.status = 'PAID'")
    assert "\n" not in str(refused.value) and str(refused.value).startswith("payload query: ")
    with pytest.raises(cqlsh_ext.Error, match="not found|unknown"):
        db.stats(f"{orders.ks}.nosuchtable")


def test_to_arrow_has_the_types_copy_to_parquet_writes(cassandra, db, orders: Orders, tmp_path):
    """The same statement through the real binary's COPY TO and through to_arrow(): one schema,
    the same rows (the file's metadata aside)."""
    import pyarrow.parquet as pq
    from shell_runner import CQLSH_EXT, run

    select = f"SELECT pk, ck, data.status, data.n, data FROM {orders.name} WHERE pk = 'p2'"
    path = tmp_path / "p2.parquet"
    done = run(CQLSH_EXT, [*cassandra.cqlsh_args, "-e", f"COPY ({select}) TO '{path}'"], tmp_path)
    assert done.returncode == 0, done.stderr
    written = pq.read_table(path)
    table = db.query(select).to_arrow()
    assert table.schema == written.schema.remove_metadata()
    assert table.sort_by("ck").to_pylist() == written.sort_by("ck").to_pylist()


def test_progress_events_and_ctrl_c_keep_what_was_read(db, orders: Orders):
    """Ctrl-C (SIGINT, sent at the first progress event) ends the reading at its next page:
    to_arrow() gives the rows read so far and the notes say it was interrupted."""
    import signal

    events: list[dict[str, Any]] = []

    def progress(event: dict[str, Any]) -> None:
        events.append(event)
        if len(events) == 1:
            signal.raise_signal(signal.SIGINT)

    answer = db.query(f"SELECT pk, ck, data.status FROM {orders.name} WHERE data.status = 'PAID' "
                      "ALLOW FILTERING", progress=progress)
    table = answer.to_arrow()
    assert events and events[0]["rows"] > 0
    assert answer.notes["stopped"] == "interrupted" and not answer.notes["exact"]
    assert table.num_rows == answer.notes["matched"]
    assert set(table.column("data.status").to_pylist()) <= {"PAID"}
    keys = set(zip(table.column("pk").to_pylist(), table.column("ck").to_pylist(), strict=True))
    assert keys <= paid(orders)


def test_a_refused_connection_is_the_shell_s_one_line(cassandra, cqlshrc: str):
    with pytest.raises(cqlsh_ext.Error) as refused:
        cqlsh_ext.connect(cassandra.host, cassandra.port, username=cassandra.username,
                          password="not-the-password-42", cqlshrc=cqlshrc)
    text = str(refused.value)
    # What to check, in this function's words; not the driver's ('Unable to connect to any servers', {...}).
    assert text.startswith(f"Connection error: Bad credentials: {cassandra.host}:{cassandra.port} refused "
                           "the login (")
    assert text.endswith("): check username/password, or the credentials file (credentials=)"), text
    assert "Unable to connect" not in text and "AuthenticationFailed" not in text
    assert "\n" not in text and "not-the-password-42" not in text
    with pytest.raises(cqlsh_ext.Error, match="^--decompress: unknown decompression mode 'nope'"):
        cqlsh_ext.connect(cassandra.host, cassandra.port, decode="nope", cqlshrc=cqlshrc)


def _credentials(path, username: str, password: str, mode: int = 0o600) -> str:  # type: ignore[no-untyped-def]
    """A credentials file as the shell reads it (cqlsh's [PlainTextAuthProvider] section)."""
    path.write_text(f"[PlainTextAuthProvider]\nusername = {username}\npassword = {password}\n")
    path.chmod(mode)
    return str(path)


def test_connect_reads_the_shell_s_credentials_file(cassandra, orders: Orders, cqlshrc: str, tmp_path):
    # As `cqlsh-ext --credentials FILE`: the password stays out of the program's code.
    good = _credentials(tmp_path / "good", cassandra.username, cassandra.password)
    with cqlsh_ext.connect(cassandra.host, cassandra.port, credentials=good, cqlshrc=cqlshrc) as db:
        assert db.cluster.auth_provider.username == cassandra.username
        assert len(list(db.query(f"SELECT pk FROM {orders.name} LIMIT 3"))) == 3
    # The same file the shell takes, with the same result.
    args = [cassandra.host, str(cassandra.port), "--credentials", good, "--cqlshrc", cqlshrc, "-e",
            f"SELECT count(*) FROM {orders.name}"]
    shell = subprocess.run([CQLSH_EXT, *args], capture_output=True, text=True, timeout=300,
                           env=isolated_env(tmp_path / "home"))
    assert shell.returncode == 0 and f"{COUNT}" in shell.stdout, shell.stderr
    # A login the server refuses: one line saying what to check.
    wrong = _credentials(tmp_path / "wrong", cassandra.username, "not-the-password-43")
    with pytest.raises(cqlsh_ext.Error) as refused:
        cqlsh_ext.connect(cassandra.host, cassandra.port, credentials=wrong, cqlshrc=cqlshrc)
    text = str(refused.value)
    assert text.startswith("Connection error: Bad credentials: ") and "\n" not in text
    assert text.endswith("check username/password, or the credentials file (credentials=)")
    assert "not-the-password-43" not in text
    # A file cqlsh would not read is refused before connecting, saying why.
    shared = _credentials(tmp_path / "shared", cassandra.username, cassandra.password, mode=0o644)
    said = rf"^credentials file {re.escape(shared)} not used: it must be yours and readable by you only " \
        rf"\(chmod 600 {re.escape(shared)}\), as cqlsh requires$"
    with pytest.raises(cqlsh_ext.Error, match=said):
        cqlsh_ext.connect(cassandra.host, cassandra.port, credentials=shared, cqlshrc=cqlshrc)
    missing = tmp_path / "missing"
    with pytest.raises(cqlsh_ext.Error, match=rf"^credentials file {re.escape(str(missing))}: no such file$"):
        cqlsh_ext.connect(cassandra.host, cassandra.port, credentials=missing, cqlshrc=cqlshrc)


def test_cqlshrc_s_own_auth_provider_connects_as_in_the_shell(cassandra, orders: Orders, tmp_path,
                                                             monkeypatch):
    """A provider of cqlshrc's [auth_provider] that is neither plain nor SigV4 (the Python driver
    takes any): the API connects with it; Spark mode, whose connector cannot, says so in its words."""
    (tmp_path / "own_provider.py").write_text(
        "from cassandra.auth import AuthProvider, PlainTextAuthenticator\n\n\n"
        "class Provider(AuthProvider):\n"
        "    def __init__(self, user, secret):\n"
        "        self.user, self.secret = user, secret\n\n"
        "    def new_authenticator(self, host):\n"
        "        return PlainTextAuthenticator(self.user, self.secret)\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    rc = tmp_path / "cqlshrc"
    rc.write_text(f"[auth_provider]\nmodule = own_provider\nclassname = Provider\n"
                  f"user = {cassandra.username}\nsecret = {cassandra.password}\n")
    with cqlsh_ext.connect(cassandra.host, cassandra.port, cqlshrc=str(rc)) as own:
        assert type(own.cluster.auth_provider).__name__ == "Provider"
        assert len(list(own.query(f"SELECT pk FROM {orders.name} LIMIT 3"))) == 3
    from cqlsh_ext.spark.connect import connection
    from cqlsh_ext.spark.session import SparkError

    with pytest.raises(SparkError, match=r"^Spark mode authenticates with a user name and password or "
                                         r"with SigV4; cqlshrc's \[auth_provider\] names another provider$"):
        connection([cassandra.host, str(cassandra.port), "--cqlshrc", str(rc)])
