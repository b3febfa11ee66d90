"""What every write to stored values shares (docs/architecture.md, "The writing layer"): an edit
(edit/), COMPRESSION REWRITE and RESUME (rewrite/, spark/rewrite_job.py) and UNDO are front ends on
it. The target and its system-keyspace refusal (target), the write requests (requests), the one
write mechanism (mechanism) and cell writer (cells), exact TTLs (ttl), the pace in write units
(pace), the rows read for writing (rows), the sealed journal (seal, journal, journal_read), the row
loop (loop), UNDO's plan and run (undo) and the paced run over token ranges (ranges). It takes a
context (context.WriteContext, a reading.context.ReadContext with the journal directory), never
the shell."""
