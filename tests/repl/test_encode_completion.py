"""encode() in the interactive shell: the chain's steps complete inside encode(', and a statement
typed at the prompt is written and said like one from -e."""

from __future__ import annotations


def test_chain_steps_complete_and_the_value_is_written(term, repl_ks, cassandra):
    s = cassandra.session(repl_ks)
    s.execute("CREATE TABLE IF NOT EXISTS encoded (id int PRIMARY KEY, data blob)")
    s.shutdown()
    t = term()
    t.prompt()
    t.type(f"INSERT INTO {repl_ks}.encoded (id, data) VALUES (1, encode('zstd>msgp\t")
    t.type("', '{\"a\": 1}'));")
    t.enter()
    t.expect(rf"encode: {repl_ks}\.encoded\.data as zstd>msgpack")
    assert "encode('zstd>msgpack', '{\"a\": 1}')" in t.text
    s = cassandra.session(repl_ks)
    stored = s.execute("SELECT data FROM encoded WHERE id = 1").one().data
    s.shutdown()
    import msgpack
    import zstandard

    assert msgpack.unpackb(zstandard.ZstdDecompressor().decompress(stored)) == {"a": 1}
