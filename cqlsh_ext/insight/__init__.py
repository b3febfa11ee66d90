"""Compression insight: INSPECT, COMPRESSION STATS / ADVISE / SETTINGS and `cqlsh-ext inspect`.

By job, from the bottom up:
  per value       measure (peel a value down to its payload: the display's own walk), checksums,
                  isolate, inspect (the per-value report)
  aggregates and  stats (+ median, stats_report), sampled (a sample's estimates), advise,
  reports         table_settings (a table's SSTable options next to its data), report (plain text)
  commands        commands.py declares INSPECT and COMPRESSION (grammar, HELP, usage); each form
                  runs in run_inspect / run_stats / run_advise / run_settings, with shellside
                  (what the form names, where its report goes); cli: `cqlsh-ext inspect FILE|-`

Reading a table (pages, token ranges, samples, worker processes, retries, the cost asked first)
and Keyspaces' capacity arithmetic are cqlsh_ext.scanning's, below every command that reads one.

Only commands.py is imported at shell start-up; the handlers import the rest on first use.
"""
