"""HELP EDIT and the lines HELP UPDATE and HELP DELETE add (the whole story: docs/edit.md)."""

UPDATE_SEE_ALSO = ("Fields inside blob or JSON text values (SET data.status = 'X'), previewed, "
                   "conditioned and undoable: HELP EDIT, cqlsh-ext docs edit.")
DELETE_SEE_ALSO = ("Removing fields inside blob or JSON text values (DELETE data.note FROM ...): "
                   "HELP EDIT, cqlsh-ext docs edit.")

EDIT_HELP = """
        EDIT [cqlsh-ext]: change fields inside stored payloads

          UPDATE ks.t SET data.status = 'CANCELLED', data.items[0].qty = 3
              WHERE id = 42 [CONFIRM];
          DELETE data.note, data.items[2] FROM ks.t
              WHERE day = '2024-05-01' AND data.status = 'FAILED'
              ALLOW FILTERING [CONFIRM];
          UNDO 'journal' | LAST [CUT] [UNSEALED] [CONFIRM [UNSEALED]]

          Paths as in payload queries (HELP QUERIES) into a blob or a text
          column holding JSON, a map of blobs' value (m['k'].status) or a
          UDT's blob field (u.payload.status); values: 'text', numbers, true,
          false, null, {'k': ...} and [...]. Each value is written back in its
          own chain (the same containers and framing, the same payload format;
          JSON keeps its key order, spacing and untouched numbers), decoded
          again and compared before anything is sent. A value that cannot be
          rewritten faithfully is refused with the reason.

          Without CONFIRM the statement previews: rows it would change, rows
          refused and why, the first rows' `path: old -> new`, and, last, how
          it writes. With CONFIRM each row is written at its cell's write time
          + 1 microsecond with its TTL kept, then read again: any write made
          after the read wins, and that row is left alone. Where the server
          takes no write timestamps (Amazon Keyspaces without client-side
          timestamps on the table) each row is written on the condition that
          it still holds the bytes read; caveat: a plain UPDATE another client
          makes meanwhile can then be lost (only writers that condition are
          safe). A WHERE that is not a full primary key scans: ALLOW
          FILTERING, as in payload queries. Ctrl-C stops between rows.

          Before each row is written, its key, its stored bytes, TTL and write
          time go to a journal (readable by you only; a `journal` directory
          beside the shell's history), each line sealed with your key
          (~/.cassandra/cqlsh-ext-journal.key). The closing line's `Undo:`
          names it by the id its file name ends with (UNDO '3fa9c2d1'
          CONFIRM); UNDO LAST is your newest edit's or rewrite's, named in
          the preview. UNDO reads only a journal that verifies, a file of
          yours nobody else can write, that no live run holds, and writes the
          old values back, expiring when they would have, where the rows
          still hold what the edit wrote at the write time it recorded (or
          an UNDO of your later journal put it back): any other later write,
          even of the same bytes, is left alone. A journal without its
          closing line (a kill, or cut) is said so; CUT writes back the rows
          it holds. A journal written before the seal can be anyone's: UNDO
          'f' UNSEALED previews every row it would write, and only CONFIRM
          UNSEALED writes them. A missing key is never made again by a
          write: `cqlsh-ext journal new-key` makes one. The guide:
          cqlsh-ext docs edit.
        """
