"""Compression insight: INSPECT, COMPRESSION STATS / ADVISE / SETTINGS and `cqlsh-ext inspect`.

One module per concern:
  measure   peel one stored value down to its payload (the same chain the display shows)
  checksums verify the checksums a container carries, with our own code
  inspect   the per-value report (layers, header fields, checksums, sizes, payload kind)
  capacity  the Keyspaces size buckets, capacity units and row quota
  stats     streaming aggregation over a result (flat memory)
  scan      paging through a SELECT: prefetch, token-range parallelism, progress, Ctrl-C
  advise    re-compressing a sample with every available codec, measured here
  settings  a table's SSTable compression options next to its measured data
  report    plain-text tables and bar charts (JSON: cqlsh_ext.jsonenc, shared with query output)
  commands  the shell grammar and handlers; cli: `cqlsh-ext inspect FILE|-`

Nothing here is imported at shell start-up: the handlers import these modules on first use.
"""
