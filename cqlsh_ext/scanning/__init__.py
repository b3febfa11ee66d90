"""Reading a table for the insight commands, and for whatever else scans one (COMPRESSION STATS,
the coming payload queries): nothing here knows what is measured.

  scan      paging through a SELECT: prefetch, token-range streams, retries with backoff, progress,
            Ctrl-C, the server's size estimate
  consume   the scan-and-consume loop every command shares
  ring      the partitioner's token ring: ranges, slices, Amazon Keyspaces
  sample    random token-range slices read until a plan is met (SAMPLE n / p PERCENT / UNTIL x)
  estimate  totals and ratios over the slices read, with 95 % intervals
  workers   an exact scan over worker processes, each filling its own copy of an Aggregate

Nothing here is imported at shell start-up.
"""
