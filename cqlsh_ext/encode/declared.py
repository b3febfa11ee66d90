"""The encode package's declarations (found through the entry point group cqlsh_ext.features: the
registry imports this module, never its services): encode() in INSERT, UPDATE and BATCH, a statement
intercept that rewrites each call into the blob it makes before cqlsh sends the statement."""

from __future__ import annotations

from cqlsh_ext.features.commands import StatementIntercept, register_intercept
from cqlsh_ext.features.feature import Service, Text

register_intercept(StatementIntercept(
    "encode() in INSERT, UPDATE and BATCH", frozenset({"insert", "update", "begin"}),
    Service("cqlsh_ext.encode.command", "intercept"), reads_only=False,
    topics=(("encode", Text("cqlsh_ext.encode.help", "ENCODE_HELP")),),
    # An UPDATE that edits payload paths is the edit's, encode() in it then read by the edit.
    after=("UPDATE and DELETE of payload paths",)))
