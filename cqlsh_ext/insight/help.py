"""What HELP INSPECT and HELP COMPRESSION's forms say (HELP COMPRESSION STATS, ..., HELP TRIAL): the
prose after each statement's form, which features/help.py writes from the statement's declaration
and puts together with these (HELP COMPRESSION: every form's)."""

from __future__ import annotations

from cqlsh_ext.codecs.base import CODEC_EXAMPLES, CODEC_HEADERS, CODEC_TRIAL
from cqlsh_ext.common.text import fill
from cqlsh_ext.insight.declared import SETTINGS_ABOUT
from cqlsh_ext.insight.trial import DEFAULT_CONCURRENCY, DEFAULT_ROWS
from cqlsh_ext.payload.names import STREAM_MAGICS, title

#: The serialization stream INSPECT's help shows in its example chain.
_STREAM = next(iter(STREAM_MAGICS.values()))
#: What HELP INSPECT says after the statement's form (features/help.py: the form from its declaration).
INSPECT_ABOUT = fill(
    "Runs a SELECT and describes every blob value in its result: the nesting chain (e.g. "
    f"{CODEC_EXAMPLES[1]} > {_STREAM} > String), each layer's container, how it was found (by its "
    "signature, by a trial decode, or as named with -d) and its header fields "
    f"({', '.join(CODEC_HEADERS)}, ...), the checksums the format carries verified here (stored and "
    "computed values shown), the stored and decompressed sizes and ratio, and the payload's kind "
    f"(JSON, text, {title(_STREAM)} String, binary). Values that are not compressed or cannot be "
    "decoded say why.",
) + """

        INSPECT SELECT data FROM ks.t WHERE id = 42;
        INSPECT JSON SELECT data FROM ks.t LIMIT 10;

          JSON prints one JSON object per blob value (JSON Lines), as does
          OUTPUT FORMAT JSON. Without a server: cqlsh-ext inspect FILE|-|0x...
"""

#: What each form's HELP says after its form (features/help.py: the form from its declaration).
STATS_ABOUT = """          Opens with a verdict: what client-side compression saves in what you
          pay (Amazon Keyspaces: write and read units, then storage; Cassandra:
          storage). Pages through the result (a progress line on a terminal;
          Ctrl-C stops and still reports) and shows per blob column: values by
          codec and container, stored and decompressed bytes, overall and
          median ratio, the size distribution before (decompressed) and after
          (stored) in the Amazon Keyspaces compression article's buckets
          (<= 1 KB, 1-4 KB, 4-20 KB, 20-67 KB, 67 KB-1 MB, > 1 MB), and per
          row the Keyspaces write units (1 WCU per started KB), read units
          (1 RCU per started 4 KB) and rows near or over the 1 MB row quota.
          A text column (text, varchar, ascii) is reported too, as stored
          uncompressed (its UTF-8 bytes). A table named alone (COMPRESSION
          STATS ks.t) is a whole-table SELECT of its blob columns and its text
          columns outside the primary key.

          A whole-table SELECT (SELECT cols FROM t, nothing after the table
          name) of more than 64 MB is split into token ranges and scanned by
          one worker process per core; PARALLEL n sets the number of processes.
          Values whose container header declares their decompressed size are
          sized from it (the report says how many; for containers that decode a
          whole block to look inside, values of 256 KB or more); DECODE ALL
          decompresses every value instead. On Amazon Keyspaces, or for a table
          the server estimates at 1 GB or more, a full scan first shows its
          estimated rows, GB and read units and asks; from a script (-e, -f)
          it runs only with CONFIRM. Overload, throttling and timeouts are
          retried with backoff (at most 8 times per page) and named in the
          report.

          SAMPLE estimates the same figures for the whole table, each with a
          95 % interval, from random token-range slices read whole (every
          partition has the same chance, however wide). Unlike ADVISE and
          SETTINGS, whose SAMPLE n takes the first n values or rows, it reads
          from everywhere in the ring:
            SAMPLE n                   n rows: the first slices drawn that hold
                                       them, the last cut at the n-th
            SAMPLE p PERCENT           p % of the ring's slices
            SAMPLE UNTIL x PERCENT     until every figure shown is within +-x %
                                       (totals, ratios) or +-x points (shares)
            SAMPLE                     the same with x = 1
          followed by WITHIN s SECONDS (time limit, default 60) and SEED n (the
          same slices again, and unless the time limit stopped it, the same
          estimates). A table of 16 MB or less is read whole instead of
          sampled by SAMPLE and SAMPLE UNTIL: exact figures, said so.
"""
ADVISE_ABOUT = """          Takes the decompressed payloads of the first n values per blob or
          text column (default 300, in the result's order: not a random
          sample; a text value's payload is its UTF-8 bytes) and compresses
          them with every available codec at the levels producers use (each
          codec declares them; the report lists what ran and what is not
          installed), and with a dictionary trained on the other half of the
          sample where the codec takes one.
          Shows ratio, compress and decompress MB/s measured here (warm-up,
          then several runs; the spread is shown), the size buckets and
          capacity units each would give, a chart of ratio against speed, and
          opens with its verdict: the fast codec that saves the most of what
          you pay, what it saves and what it does not (a dictionary only where
          it saves 10 % more). A line on a terminal says which codec is
          measured; Ctrl-C there stops and reports the codecs measured so far.
          SAVE DICTIONARY '<file>' also writes the zstd dictionary trained on
          the whole sample (its ID inside; '<file>.<column>' for each column
          when there are several), loads it in this session and says how to
          use it: --dictionary <file>, encode('zstd:dict=<ID>', ...).
"""
SETTINGS_HELP_ABOUT = fill(SETTINGS_ABOUT) + """

          JSON (or OUTPUT FORMAT JSON) prints one JSON document instead.
"""
#: What HELP COMPRESSION says of TRIAL after its form (HELP TRIAL says all of TRIAL_ABOUT).
TRIAL_SUMMARY = """          Writes a sample of the column's values, re-compressed with each
          codec, into scratch tables and reads them back: latency, throughput
          and capacity units per codec on this cluster. More: HELP TRIAL.
"""

#: The codecs TRIAL_ABOUT shows in its examples (declared: codecs.base), so help names none itself.
_EXAMPLE, _OTHER = CODEC_EXAMPLES[0], CODEC_EXAMPLES[1]
TRIAL_ABOUT = """          What compressing a column with a codec does to latency, throughput
          and capacity units, measured on its own values and this cluster.

          Takes ROWS values (default """ + f"{DEFAULT_ROWS}" + """) with COMPRESSION STATS' sampler
          (random token-range slices), and for each variant re-compresses
          what is under each value's last compression layer, as a producer
          writes it.
          Each variant goes into a scratch table of its own in the keyspace
          named by INTO (never the column's table): written with prepared
          statements, CONCURRENCY requests in flight (default """ + f"{DEFAULT_CONCURRENCY}" + """), the
          variants taking turns in rounds after a warm-up that is not counted;
          then every row is read back by key in random order at the session's
          consistency level. The scratch tables are dropped at the end, also
          after an error or Ctrl-C (which stops and reports what was measured),
          unless KEEP.

""" + fill(f"Variants are encode() chains (HELP ENCODE): CODECS '{_EXAMPLE}:3', {_OTHER}. Two more names: "
           "stored (the values as they are stored) and uncompressed (the payload itself: the baseline of "
           "every change in per cent, always measured). Default: stored, uncompressed, "
           f"{', '.join(CODEC_TRIAL)}. Blob columns, and text columns (their text is the uncompressed "
           "payload). FROM '<path>' takes the values from a file (one value, or one 0x... hex value per "
           "line) or a directory (a value per file) instead; `cqlsh-ext trial` does the same from the "
           "command line.") + """

          Per variant, side by side: stored bytes (mean, total, ratio), write
          and read operations per second, latency median, p95, p99, p99.9 and
          max, the client's decode time per value, Amazon Keyspaces write and
          read units per row, each against uncompressed in per cent; operations
          that failed, timed out or were retried. JSON (or OUTPUT FORMAT JSON)
          prints one JSON document instead.

          On Amazon Keyspaces the estimated capacity units are shown first and
          asked for ([y/N]; from a script, add CONFIRM), and the scratch tables
          are used once system_schema_mcs.tables says they are ACTIVE.

          COMPRESSION TRIAL ks.orders.data INTO scratch;
          COMPRESSION TRIAL ks.orders.data CODECS '""" + _EXAMPLE + "', '" + _OTHER + """:9'
                            ROWS 5000 CONCURRENCY 32 INTO scratch JSON;
"""

