"""Compression insight: INSPECT, COMPRESSION STATS / ADVISE / SETTINGS / TRIAL, `cqlsh-ext inspect`
and `cqlsh-ext trial`.

By job, from the bottom up:
  per value       measure (peel a value down to its payload: the display's own walk), checksums,
                  isolate, inspect (the per-value report)
  aggregates and  stats (+ median, stats_report), sampled (a sample's estimates), advise,
  reports         table_settings (a table's SSTable options next to its data), report (plain text)
  commands        command.py declares INSPECT and COMPRESSION (grammar, HELP, usage) and prints
                  the answers; each form runs in run_inspect / run_stats / run_advise /
                  run_settings (a context and a typed request), with shellside (what the form
                  names); cli: `cqlsh-ext inspect FILE|-`
  TRIAL           trial/, a room of its own (the one command that writes): run, measure,
                  report, cli (`cqlsh-ext trial`)

Reading a table (pages, token ranges, samples, worker processes, retries, the cost asked first)
and Keyspaces' capacity arithmetic are cqlsh_ext.scanning's, below every command that reads one.

Only command.py is imported at shell start-up; the handlers import the rest on first use.
"""
