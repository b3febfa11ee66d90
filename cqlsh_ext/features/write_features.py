"""Every write feature, declared once (feature.Feature with `writes`): the shell's statements
(docs/edit.md, docs/rewrite.md, docs/load.md) and the Python API's methods of the same names (db.edit,
db.rewrite, db.resume, db.undo, db.write, which hand their requests to the services declared here),
tabulated in
docs/features.md. Never an MCP tool: MCP's propose_edit (features/reads.py) proposes the statement a
person runs. Each writes on a condition, journals every row and is undone by `undo`; a preview
unless `confirm`. Only cqlsh-ext declares write features (a package's is refused when it loads)."""

from __future__ import annotations

from cqlsh_ext.features import output_schemas
from cqlsh_ext.features.feature import FEATURES, WRITE, Argument, Feature, Reads, Service, Writes, register

_CONFIRM = Argument("confirm", "boolean", "true: write (journaled); else a preview that writes nothing")
_JOURNAL = Argument("journal", "string", "a journal: its path, the id its name ends with, or LAST; a "
                    "confirmed result stands for its journal", required=True)

register(Feature(
    "edit", "Edit paths inside payloads",
    "UPDATE ks.t SET data.status = 'PAID' WHERE ... or DELETE data.note FROM ks.t WHERE ...: fields "
    "inside the stored payloads changed in each value's own form (codec, record format).",
    (Argument("statement", "string", "the UPDATE or DELETE naming paths inside payloads", required=True),
     Argument("params", None, "the values of its ? markers (a list) or :name markers (a dict), bound as "
              "db.query binds them; the shell's statement holds its values"),
     _CONFIRM),
    Reads("nothing"), WRITE, output_schemas.EDIT_RESULT, Service("cqlsh_ext.edit.run", "run_edit"),
    details="The shell's statement as typed (CONFIRM at its end writes); the API's db.edit. Each row "
            "is written on the condition that it still holds the bytes read (a row changed since is "
            "left alone), its old value journaled first; undo writes them back.",
    writes=Writes("statement", "statement")))
register(Feature(
    "rewrite", "Re-encode a column",
    "COMPRESSION REWRITE ks.t.data AS 'zstd:3': each value of a blob column decoded and encoded again "
    "in the target chain, its payload unchanged.",
    (Argument("column", "string", "keyspace.table.column (a map's m['key'], a UDT's u.field)",
              required=True),
     Argument("spec", "string", "the target chain: 'zstd:3', 'gzip>json', 'none'", required=True),
     Argument("where", "string", "conditions as after WHERE (payload ones need allow_filtering)"),
     Argument("allow_filtering", "boolean", "true: a WHERE on payload paths or beyond the key"),
     Argument("pace", "integer", "write capacity units a second at most", keywords={"minimum": 1}),
     Argument("every_row", "boolean", "true: the preview reads every row (ALL), not a sample"),
     _CONFIRM),
    Reads("nothing"), WRITE, output_schemas.REWRITE_RESULT, Service("cqlsh_ext.rewrite.run", "rewrite"),
    details="A preview (rows to rewrite, already in the chain, refused; bytes before and after; write "
            "units; a big table's from a sample) unless confirmed; then each row is journaled and "
            "written on its condition, token range by token range, at the pace asked. Stopped part-way "
            "(Ctrl-C, a kill, a failure), resume goes on from its journal.",
    writes=Writes("column", "column")))
register(Feature(
    "resume", "Go on with a rewrite",
    "COMPRESSION REWRITE RESUME 'journal': a rewrite stopped part-way gone on with from its journal, "
    "the token ranges it has not finished.",
    (_JOURNAL, _CONFIRM),
    Reads("nothing"), WRITE, output_schemas.RESUME_RESULT, Service("cqlsh_ext.rewrite.resume", "resume"),
    details="The rewrite is rebuilt from the journal's sealed request; a journal another run holds, "
            "that is not sealed or not the user's is refused. Confirmed, the rows are appended to "
            "the same journal.",
    writes=Writes("journal", "journal")))
register(Feature(
    "undo", "Undo a write",
    "UNDO 'journal': an edit's, rewrite's or undo's old values written back where the rows still "
    "hold what was written.",
    (_JOURNAL,
     Argument("unsealed", "boolean", "true: a journal without its seal is taken (its lines unverified)"),
     _CONFIRM,
     Argument("cut", "boolean", "true: a journal without its closing line is taken (the rows it holds)")),
    Reads("nothing"), WRITE, output_schemas.UNDO_RESULT, Service("cqlsh_ext.writing.undo", "run_undo"),
    details="A row written again since (by anyone but a chain of this journal's edits and undos) is "
            "left alone and counted; an undo journals what it writes, so it is undone in turn. A "
            "journal a live run holds, tampered with, or cut without CUT is refused.",
    writes=Writes("journal", "journal")))

register(Feature(
    "write", "Load documents into a table",
    "COPY ks.t (pk, ck, data) FROM 'file.jsonl' or db.write('ks.t', frame): rows loaded, each blob value "
    "encoded as its producers encode it (its ENCODE chain, its export's label, its column's DECODE).",
    (Argument("table", "string", "keyspace.table (or a table of the connection's keyspace)", required=True),
     Argument("data", None, "the rows: an Arrow table or RecordBatchReader, a pandas or a polars DataFrame; "
              "the shell's COPY ... FROM reads a JSON Lines, Parquet or CSV file", required=True),
     Argument("encode", "object", "each blob column's chain: {'data': 'snappy>json'}"),
     Argument("ttl", "integer", "seconds every cell written lives (default: the table's)",
              keywords={"minimum": 0}),
     Argument("pace", "integer", "write capacity units a second at most", keywords={"minimum": 1}),
     _CONFIRM,
     Argument("resume", "string", "the journal of a load stopped part-way: its rows already written are "
              "not written again")),
    Reads("nothing"), WRITE, output_schemas.LOAD_RESULT, Service("cqlsh_ext.load.run", "load"),
    details="A preview (rows new, overwritten, already as loaded, refused by reason; the chains written; "
            "bytes before and after; write units) unless confirmed; each value encoded and decoded back "
            "by the display's reading and compared first (a row whose value does not come back equal is "
            "refused, nothing of it written); then each row journaled (what it held) and written at its "
            "timestamp, a partition's rows a request, at the pace asked. undo puts the old values back "
            "and leaves no row that was new.",
    writes=Writes("table", "table")))

#: The write features declared here.
OWN = tuple(name for name, feature in FEATURES.items() if feature.writes is not None)
