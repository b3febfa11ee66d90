"""COMPRESSION TRIAL, the one insight command that writes: sampled values re-compressed per codec,
written into scratch tables and read back, the cluster's latencies counted.

    run       the shell's side: what the statement asks for, the values, the cost asked first
    measure   the measuring: scratch tables, warm-up, rounds of writes and reads, retries, Ctrl-C
    report    the figures and the report (text and JSON)
    cli       `cqlsh-ext trial PATH --into KEYSPACE`: the same statement on values from files

The grammar and HELP text are declared with the other insight commands (insight/command.py).
"""
