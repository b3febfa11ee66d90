"""Which stored values read as text (cqlsh_ext.payload.unwrap.stored_text): no false positives
on random binary values, nor on values of the compressed formats, seeded sweeps of 20,000 each."""

from __future__ import annotations

import random

from cqlsh_ext.demo.records import documents
from cqlsh_ext.demo.samples import samples
from cqlsh_ext.payload.unwrap import MIN_TEXT_LENGTH, stored_text


def test_random_values_never_read_as_text():
    rng = random.Random(20_000)
    hits = [n for n in (rng.randint(MIN_TEXT_LENGTH, 4096) for _ in range(20_000))
            if stored_text(rng.randbytes(n)) is not None]
    assert hits == []


def test_random_values_behind_a_utf16_mark_never_read_as_text():
    rng = random.Random(16)
    hits = [1 for _ in range(20_000)
            if stored_text(rng.choice((b"\xff\xfe", b"\xfe\xff")) + rng.randbytes(rng.randint(6, 512)))]
    assert hits == []


def test_compressed_values_never_read_as_text():
    docs = list(documents(40, seed=3))
    values = [s.data for doc in docs for s in samples(doc) if s.name != "plain json"]
    assert len(values) > 500
    assert [v[:8] for v in values if stored_text(v) is not None] == []


def test_text_and_json_of_every_size_read_as_text():
    rng = random.Random(7)
    for doc in documents(200, seed=5):
        cut = doc[: rng.randint(MIN_TEXT_LENGTH, len(doc))]
        assert stored_text(cut.encode()) == (cut, True)


#: Short JSON documents with a character past ASCII, as a producer writes them (json.dumps with
#: ensure_ascii=False), under the 32 bytes below which only ASCII text counts.
SHORT_DOCUMENTS = [{"a": "xéy"}, ["ü", "ö", "ä"], {"név": 1}, {"k": "日本"}, {"€": [1, 2]}]


def test_a_short_json_document_past_ascii_reads_as_json_at_every_door(cassandra, tmp_path):
    """The shell's table and JSON, and the API's path, on the engine this run has (bin/test runs it
    on both): each document read as the JSON it is (it was shown in hex: no known format), random
    short values still not (the sweeps above)."""
    import json

    from shell_runner import api, ext

    ks = cassandra.create_keyspace("short_json")
    session = cassandra.session(ks)
    session.execute("CREATE TABLE t (id int PRIMARY KEY, data blob)")
    for key, document in enumerate(SHORT_DOCUMENTS):
        stored = json.dumps(document, ensure_ascii=False).encode()
        assert MIN_TEXT_LENGTH <= len(stored) < 32 and not stored.isascii()
        session.execute("INSERT INTO t (id, data) VALUES (%s, %s)", (key, stored))
    session.shutdown()
    statement = f"SELECT id, data FROM {ks}.t"
    run = ext(cassandra, tmp_path, "--output-format", "json", "-e", statement)
    assert run.returncode == 0, run.stderr
    rows = {row["id"]: row["data"] for row in map(json.loads, run.stdout.splitlines())}
    assert {k: (row["label"], row["payload"]) for k, row in rows.items()} == \
        {k: ("json", document) for k, document in enumerate(SHORT_DOCUMENTS)}
    table = ext(cassandra, tmp_path, "-e", statement).checked_stdout()
    assert "0x" not in table and all(json.dumps(d, ensure_ascii=False) in table for d in SHORT_DOCUMENTS)
    proc = api(cassandra, tmp_path, "import json\n"
               "print(json.dumps({r['id']: r['data.a'] for r in db.query(argv[0])}, ensure_ascii=False))\n",
               f"SELECT id, data.a FROM {ks}.t WHERE id = 0")
    assert json.loads(proc.stdout) == {"0": "xéy"}, proc.stderr


#: JSON documents shorter than MIN_TEXT_LENGTH (they were shown in hex, where 10 bytes and more decoded).
TINY_DOCUMENTS = [{"e": 1}, ["é"], {}, [], [1, 2]]


def test_random_short_values_that_start_as_json_read_as_text_only_where_they_parse():
    rng = random.Random(9)
    hits = [value for value in (rng.choice((b"{", b"[")) + rng.randbytes(rng.randint(0, MIN_TEXT_LENGTH - 2))
                                for _ in range(20_000)) if stored_text(value) is not None]
    assert all(json_of(value) is not None for value in hits), hits


def json_of(value: bytes) -> object:
    import json

    try:
        return json.loads(value)
    except ValueError:
        return None


def test_a_json_document_under_ten_bytes_reads_as_json_at_every_door(cassandra, tmp_path):
    """The shell's table and JSON (on the engine this run has: bin/test runs it on both): each
    document read as the JSON it is, a short value that is no JSON still in hex."""
    import json

    from shell_runner import ext

    ks = cassandra.create_keyspace("tiny_json")
    session = cassandra.session(ks)
    session.execute("CREATE TABLE t (id int PRIMARY KEY, data blob)")
    for key, document in enumerate(TINY_DOCUMENTS):
        stored = json.dumps(document, ensure_ascii=False).encode()
        assert len(stored) < MIN_TEXT_LENGTH
        session.execute("INSERT INTO t (id, data) VALUES (%s, %s)", (key, stored))
    session.execute("INSERT INTO t (id, data) VALUES (%s, %s)", (len(TINY_DOCUMENTS), b"{not it"))
    session.shutdown()
    statement = f"SELECT id, data FROM {ks}.t"
    run = ext(cassandra, tmp_path, "--output-format", "json", "-e", statement)
    assert run.returncode == 0, run.stderr
    rows = {row["id"]: row["data"] for row in map(json.loads, run.stdout.splitlines())}
    assert rows.pop(len(TINY_DOCUMENTS)) == "0x" + b"{not it".hex()  # no JSON: its bytes, as ever
    assert {k: (row["label"], row["payload"]) for k, row in rows.items()} == \
        {k: ("json", document) for k, document in enumerate(TINY_DOCUMENTS)}, rows
    table = ext(cassandra, tmp_path, "-e", statement).checked_stdout()
    assert "0x" + b"{not it".hex() in table and all(json.dumps(d, ensure_ascii=False) in table
                                                    for d in TINY_DOCUMENTS), table
