"""HELP LOAD: the load's statements in a screenful (the whole story: docs/load.md). The formats
are common.file_formats'."""

from cqlsh_ext.common.file_formats import FILE_FORMATS, listed
from cqlsh_ext.common.text import fill

#: The formats cqlsh's own COPY FROM reads (stored bytes), and the others.
_CQLSH = listed(f.title for f in FILE_FORMATS if f.cqlsh_copy)
_OURS = listed(f.title for f in FILE_FORMATS if not f.cqlsh_copy)

LOAD_HELP = f"""
        COPY ... FROM decoded documents [cqlsh-ext]

        COPY [keyspace.]table [(column, ...)]
             FROM {" | ".join(f"'file{f.suffixes[0]}'" for f in FILE_FORMATS)}
             [WITH ENCODE column = 'chain' [AND ENCODE ...]
              [AND TTL = seconds]] [PACE n] [CONFIRM]
        COPY ks.t (pk, ck, data) FROM 'file.csv'
             WITH ENCODE data = 'snappy>json'
        COPY RESUME 'journal' | LAST [CONFIRM]
        UNDO 'journal' | LAST [CUT] [CONFIRM]

          The way back from COPY (SELECT ...) TO: documents loaded into a
          table, each blob value encoded as its producers encode it (the
          chains of encode(), HELP ENCODE), decoded again by the display's own
          reading and compared with the document before anything is sent. A
          value that does not come back equal refuses its row, named, and
          nothing of that row is written; so does a row that cannot be read
          (a line not UTF-8 or not JSON, a key out of its type's range, a
          line past twice the per-value budget), named by its line: the
          others go on. Only regular files are read (not a FIFO, a device).

          Each blob value is written in the chain, the first of: the column's
          ENCODE; the value's own label, where the file holds the object the
          exports write ({{"label": "zstd>msgpack", "payload": ...}} in JSON
          Lines, data:label in Parquet); the column's DECODE setting. Bytes
          given without a label (0x...) are written as they are.

          What a file spells otherwise than the stored document (a null field
          for a key absent, 2.0 for 2, a record's NaN by name) is read
          against it: an export loaded back untouched writes nothing, a fix
          of one field changes that field only. A column that is not the
          table's, a key not exactly its type (1_000, 1e3 for an int) or a
          key given twice in a JSON object is refused, in one line.

          Without CONFIRM it previews: rows new, overwritten, already as
          loaded and refused by reason, the chains written, stored bytes
          before and after, write units; at the prompt it then asks [y/N].
          Rows are written as UPDATE writes cells, at the moment each row was
          read (or its cells' latest write time + 1): a write anyone makes
          after the read wins. A partition's rows go in one request; PACE
          holds the write units a second. Each row is journaled first (what it
          held, what is written): UNDO puts back the old values and the rows
          that were new are gone; COPY RESUME goes on after a kill.

{fill(f"A COPY FROM of a {_CQLSH} file without ENCODE, PACE or CONFIRM is cqlsh's own (stored "
      "bytes), unchanged.")}
"""

#: Said after cqlsh's own HELP COPY.
LOAD_SEE_ALSO = (f"COPY ... FROM a {_OURS} file (or a {_CQLSH} file WITH ENCODE) loads decoded "
                 "documents, each value encoded as its producers encode it: HELP LOAD")
