"""The encode package's declarations (found through the entry point group cqlsh_ext.features: the
registry imports this module, never its services): encode() in INSERT, UPDATE and BATCH, the shell's
alone, a statement that claims those among CQL's whose text calls encode() and rewrites each call into
the blob it makes before cqlsh sends the statement (any other goes to cqlsh as written)."""

from __future__ import annotations

from cqlsh_ext.features.feature import (
    WRITE,
    Argument,
    Feature,
    Reads,
    Service,
    Statement,
    Text,
    Writes,
    register,
)

register(Feature(
    "encode", "encode() in INSERT, UPDATE and BATCH",
    "INSERT, UPDATE or BATCH with encode('chain', 'text') where a blob goes: each call written as the "
    "blob its producer writes, checked by decoding it back before anything is sent.",
    (Argument("statement", "string", "the INSERT, UPDATE or BATCH that calls encode()", required=True),),
    Reads("nothing"), WRITE, {}, details="HELP ENCODE.", writes=Writes("statement", "statement"),
    shell_only=True,
    statement=Statement(
        ("INSERT",), "INSERT INTO ks.t (id, data) VALUES (1, encode('zstd', 'some text'));", json=False,
        aliases=(("UPDATE",), ("BEGIN",)), usage="| UPDATE | BEGIN BATCH ... encode('chain', 'text') ...",
        claims=Service("cqlsh_ext.encode.command", "intercept"),
        topics=(("encode", Text("cqlsh_ext.encode.help", "ENCODE_HELP")),),
        # An UPDATE that edits payload paths is the edit's, encode() in it then read by the edit.
        after=("edit",))))
