"""COMPRESSION TRIAL, the one insight command that writes: sampled values re-compressed per codec,
written into scratch tables and read back, the cluster's latencies counted.

    run       the shell's side: what the statement asks for, the values, the cost asked first
    measure   the measuring: scratch tables, warm-up, rounds of writes and reads, retries, Ctrl-C
    report    the figures and the report (text and JSON)
    cli       `cqlsh-ext trial PATH --into KEYSPACE`: the same statement on values from files

The statement is declared with its feature (insight/declared.py: compression_trial), read by
the shell from that declaration into a `run.TrialRequest`; its HELP is insight/help.py's.
"""

#: A trial's values and requests in flight by default, and their bounds: what the statement's
#: declaration says of ROWS and CONCURRENCY, and what run.py checks (light: the shell reads it at start).
DEFAULT_ROWS = 1000
DEFAULT_CONCURRENCY = 16
#: Fewer values than this measure nothing worth a report.
MIN_VALUES = 20
MAX_CONCURRENCY = 1024
