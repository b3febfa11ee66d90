"""HELP REWRITE, and COMPRESSION REWRITE's part of HELP COMPRESSION (the whole story: docs/rewrite.md)."""

#: The lines HELP COMPRESSION gives it.
REWRITE_SUMMARY = """
        COMPRESSION REWRITE [keyspace.]table.column AS 'SPEC' [WHERE ...]
                            [ALLOW FILTERING] [PACE n] [ALL] [CONFIRM]
        COMPRESSION REWRITE RESUME 'journal' [CONFIRM]

          Re-encodes a blob column's values in place in another chain (SPEC:
          'zstd', 'zstd:3', 'zstd:dict=ID', 'gzip:6', ..., or 'none'), each
          payload kept byte for byte, paced, journaled, resumable and
          undoable. Without CONFIRM it previews. More: HELP REWRITE.
"""

REWRITE_HELP = """
        COMPRESSION REWRITE [cqlsh-ext]

        COMPRESSION REWRITE [keyspace.]table.column AS 'SPEC' [WHERE ...]
                            [ALLOW FILTERING] [PACE n] [ALL] [CONFIRM]
        COMPRESSION REWRITE RESUME 'journal' [CONFIRM]
        COMPRESSION REWRITE RESUME LAST [CONFIRM]
        UNDO 'journal' | LAST [CUT] [CONFIRM]

          Acts on COMPRESSION ADVISE: every value of a blob column (a map of
          blobs' m['k'], a UDT's u.field) written again in the chain SPEC
          names: an encode() chain of compression layers ('zstd', 'zstd:3',
          'zstd:dict=ID' with a dictionary SAVE DICTIONARY wrote, 'lz4',
          'gzip:6', ...) or 'none' (the payload stored uncompressed). The
          payload under the old layers (JSON text, a MessagePack record, ...)
          is kept byte for byte: each new value is decoded again and compared
          before it is sent. Values that do not decode, in no known format,
          already in the target chain and dictionary, or holding bytes besides
          their frames are never written, and are counted by reason.

          Without CONFIRM it previews (a sample of a big table; ALL reads
          every row): rows read, would change, already in the target, refused
          by reason, stored bytes before and after, write units the rewrite
          costs and saves, rows over 1 MB, the time at the PACE, and how the
          rows are written; at the prompt it then asks [y/N], as UPDATE and
          UNDO do (yes: as CONFIRM). WHERE narrows the rows as in payload
          queries (conditions on paths need ALLOW FILTERING).

          With CONFIRM each row is written as edits write (HELP EDIT): at its
          cell's write time + 1 with its TTL kept, then read again, so a write
          made meanwhile wins; or, on Amazon Keyspaces without client-side
          timestamps, on the condition that it holds the bytes read (with
          that condition's caveat). PACE n: at most n write capacity units a
          second (1 per started KB of the row, as Amazon Keyspaces prices a
          write); writes run concurrently up to it, slow down by half on
          throttling, timeouts or overload and climb back. A progress line
          shows rows, rate, units, bytes saved and the time left; Ctrl-C
          stops after the writes in flight.

          The journal (printed as Journal: PATH, readable by you only, each
          line sealed with your key) holds every row's key, old bytes, TTL
          and write time, fsync'd before its write, the request and the token
          ranges finished: RESUME goes on after a stop or a kill, from the
          sealed request, without rewriting what is done; UNDO ... CONFIRM
          writes the old values back where rows still hold the rewrite's, as
          it wrote them. The closing lines name the journal by the id its
          file name ends with (RESUME '3fa9c2d1' CONFIRM); LAST is your
          newest rewrite's. One run holds a journal at a time: a RESUME or
          an UNDO beside a live run is refused, naming it.
          cqlsh-ext spark runs it from Spark's executors. The guide:
          cqlsh-ext docs rewrite.
"""

RESUME_HELP = """
        COMPRESSION REWRITE RESUME [cqlsh-ext]

        COMPRESSION REWRITE RESUME 'journal' [CONFIRM]

          Goes on with a COMPRESSION REWRITE that stopped (Ctrl-C, a kill, a
          lost connection) from its journal, the file its Journal: line named:
          the request (table, column, SPEC, WHERE, PACE) and the token ranges
          come from the journal's sealed first line, never from a statement
          typed again. It says the ranges finished, looks up the rows whose
          writes were in flight at the stop, and previews the rest; with
          CONFIRM it rewrites the ranges not finished, appending to the same
          journal: no row is written twice, none is missed. UNDO 'journal'
          CONFIRM writes the old values back instead (HELP UNDO). More: HELP
          REWRITE, cqlsh-ext docs rewrite.
"""
