"""Reading rows of a table or a statement, for whatever reads one (INSPECT, COMPRESSION, payload
queries, key completion, Spark mode's partitioner check): nothing here knows what is measured or
evaluated.

  plan      the one whole-table read plan (partitioner, ring, size estimate, the cost asked
            first, worker processes or token-range streams) and the one worker policy; a
            reading into an Aggregate, in the shell's process or over workers
  aggregate what a reading fills (insight.stats.Stats, reading.select.ScanAnswer)
  scan      paging through a SELECT: prefetch, token-range streams, retries with backoff, progress,
            Ctrl-C, the server's size estimate; one page (key completion's sample)
  consume   the scan-and-consume loop of the commands that read a statement's rows themselves
  workers   a whole-table read over worker processes, each filling its own copy of an Aggregate
  ring      the partitioner's token ring: ranges, slices, Amazon Keyspaces
  sample    random token-range slices read until a plan is met (SAMPLE n / p PERCENT / UNTIL x)
  estimate  totals and ratios over the slices read, with 95 % intervals
  cost      the cost of a full scan, said (and asked) before it starts
  capacity  Amazon Keyspaces arithmetic: capacity units, the row quota, the size buckets

Nothing here is imported at shell start-up.
"""
