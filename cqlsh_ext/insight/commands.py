"""The shell side of the insight commands: grammar, HELP text and handlers.

    INSPECT [JSON] <SELECT statement>
    COMPRESSION STATS [JSON] [SAMPLE ...] [PARALLEL <n>] [DECODE ALL] [CONFIRM]
                      <SELECT statement> | [<keyspace>.]<table>
    COMPRESSION ADVISE [JSON] [SAMPLE <n>] <SELECT statement> | [<keyspace>.]<table>
    COMPRESSION SETTINGS [JSON] [SAMPLE <n>] [<keyspace>.]<table>

This module is imported when the shell starts (cqlsh_ext.commands: the grammar must be
registered before cqlsh builds its rule set), so it imports nothing heavy at module level: the
handlers import the report modules on first use. JSON is printed when the command says JSON or
the shell's output format is JSON (--output-format json / OUTPUT FORMAT JSON); reports go to the
query output (CAPTURE applies), progress to stderr on a terminal only.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Iterable, Sequence
from functools import partial
from typing import Any

from cqlsh_ext.commands import shell_command

INSPECT_GRAMMAR = r"""
<inspectCommand> ::= "INSPECT" ( asjson="JSON" )? <selectStatement>
                   ;
"""
COMPRESSION_GRAMMAR = r"""
<compressionCommand> ::= "COMPRESSION"
      ( action="STATS" ( asjson="JSON" )? <statsSample>? ( "PARALLEL" parallel=<wholenumber> )?
        ( decode_all="DECODE" "ALL" )? ( confirm="CONFIRM" )? <insightTarget>
      | action="ADVISE" ( asjson="JSON" )? ( "SAMPLE" sample=<wholenumber> )? <insightTarget>
      | action="SETTINGS" ( asjson="JSON" )? ( "SAMPLE" sample=<wholenumber> )? <columnFamilyName>
      )
    ;
<insightTarget> ::= <selectStatement> | <columnFamilyName>
    ;
<statsSample> ::= sample_mode="SAMPLE"
      ( "UNTIL" ( precision=<wholenumber> | precision=<float> ) "PERCENT"
      | sample=<wholenumber> ( percent="PERCENT" )?
      )?
      ( "WITHIN" seconds=<wholenumber> "SECONDS" )? ( "SEED" seed=<wholenumber> )?
    ;
"""

#: Worker processes for an exact whole-table COMPRESSION STATS when PARALLEL is not given: one per
#: core (bench/scale.py). A table under WORKERS_FROM_BYTES (by the server's estimate) is scanned in
#: the shell's own process: starting workers costs more than it saves there.
MAX_PARALLEL = 32
WORKERS_FROM_BYTES = 64 << 20
#: A full scan asks first on Amazon Keyspaces (billed per read) and above this estimated size.
CONFIRM_FROM_BYTES = 1 << 30
#: COMPRESSION SETTINGS reads at most this many bytes of rows.
SETTINGS_SAMPLE_BYTES = 64 << 20

INSPECT_HELP = """
        INSPECT [cqlsh-ext]

          Runs a SELECT and describes every blob value in its result: the nesting
          chain (e.g. gzip > java > String), each layer's container and header
          fields (zstd frame header, LZ4 FLG/BD, gzip FLG/MTIME/OS/ISIZE, xerial
          version, snappy framed chunks, LZ4Block blocks, ...), the checksums the
          format carries verified here (stored and computed values shown), the
          stored and decompressed sizes and ratio, and the payload's kind (JSON,
          text, Java String, binary). Values that are not compressed or cannot be
          decoded say why.

        INSPECT SELECT data FROM ks.t WHERE id = 42;
        INSPECT JSON SELECT data FROM ks.t LIMIT 10;

          JSON prints one JSON object per blob value (JSON Lines), as does
          OUTPUT FORMAT JSON. Without a server: cqlsh-ext inspect FILE|-|0x...
        """

COMPRESSION_HELP = """
        COMPRESSION STATS | ADVISE | SETTINGS [cqlsh-ext]

        COMPRESSION STATS [JSON] [SAMPLE ...] [PARALLEL n] [DECODE ALL] [CONFIRM]
                          <SELECT statement> | [<keyspace>.]<table>

          Pages through the result (a progress line on a terminal; Ctrl-C stops
          and still reports) and shows per blob column: values by codec and
          container, stored and decompressed bytes, overall and median ratio,
          the size distribution before (decompressed) and after (stored) in the
          Amazon Keyspaces compression article's buckets (<= 1 KB, 1-4 KB,
          4-20 KB, 20-67 KB, 67 KB-1 MB, > 1 MB), and per row the Keyspaces
          write units (1 WCU per started KB), read units (1 RCU per started
          4 KB) and rows near or over the 1 MB row quota. A table named alone
          (COMPRESSION STATS ks.t) is a whole-table SELECT of its blob columns.

          A whole-table SELECT (SELECT cols FROM t, nothing after the table
          name) of more than 64 MB is split into token ranges and scanned by
          one worker process per core; PARALLEL n sets the number of processes.
          gzip values, and zstd and LZ4 frames of 256 KB or more, are sized from
          the size their header declares (the report says how many); DECODE ALL
          decompresses every value instead. On Amazon Keyspaces, or for a table
          the server estimates at 1 GB or more, a full scan first shows its
          estimated rows, GB and read units and asks; from a script (-e, -f)
          it runs only with CONFIRM. Overload, throttling and timeouts are
          retried with backoff (at most 8 times per page) and named in the report.

          SAMPLE estimates the same figures for the whole table, each with a
          95 % interval, from random token-range slices read whole (every
          partition has the same chance, however wide). Unlike ADVISE and
          SETTINGS, whose SAMPLE n takes the first n values or rows, it reads
          from everywhere in the ring:
            SAMPLE n                   about n rows
            SAMPLE p PERCENT           p % of the ring's slices
            SAMPLE UNTIL x PERCENT     until the ratio's interval is within
                                       +-x % (relative)
            SAMPLE                     the same with x = 1
          followed by WITHIN s SECONDS (time limit, default 60) and SEED n (the
          same slices again).

        COMPRESSION ADVISE [JSON] [SAMPLE n] <SELECT statement> | [<keyspace>.]<table>

          Takes the decompressed payloads of the first n values per blob column
          (default 300, in the result's order: not a random sample) and
          compresses them with every available codec: snappy, LZ4, LZ4 HC,
          zstd -1/1/3/9/19, zstd 3 with a dictionary trained on the other half
          of the sample, gzip 1/6/9, brotli 1/6/11 when installed.
          Shows ratio, compress and decompress MB/s measured here (warm-up, then
          several runs; the spread is shown), the size buckets and capacity
          units each would give, and a one-line recommendation.

        COMPRESSION SETTINGS [JSON] [SAMPLE n] [<keyspace>.]<table>

          The table's SSTable compression options (class, chunk_length_in_kb,
          ...) next to measurements on a sample of its rows (default 1000): row
          and partition sizes, client-side compression of its blobs, the ratio
          the table's compressor gets on them, and advice where the numbers
          support it (e.g. a smaller chunk_length_in_kb for small partitions).

          JSON (or OUTPUT FORMAT JSON) prints one JSON document instead.
        """


# ------------------------------------------------------------------------------------- helpers

#: What each form expects, and an example: shown when a command does not parse.
_FORMS = {
    "INSPECT": ("INSPECT [JSON] <SELECT statement>", "INSPECT SELECT data FROM ks.t WHERE id = 42;"),
    "STATS": ("COMPRESSION STATS [JSON] [SAMPLE ...] [PARALLEL n] [DECODE ALL] [CONFIRM] "
              "<SELECT statement> | [keyspace.]table",
              "COMPRESSION STATS ks.t;  or  COMPRESSION STATS SAMPLE SELECT data FROM ks.t;"),
    "ADVISE": ("COMPRESSION ADVISE [JSON] [SAMPLE n] <SELECT statement> | [keyspace.]table",
               "COMPRESSION ADVISE ks.t;  or  COMPRESSION ADVISE SELECT data FROM ks.t LIMIT 500;"),
    "SETTINGS": ("COMPRESSION SETTINGS [JSON] [SAMPLE n] [keyspace.]table", "COMPRESSION SETTINGS ks.t;"),
}


def _usage(forms: list[str], word: str) -> str:
    expected = "\n".join(f"  {_FORMS[form][0]}" for form in forms)
    examples = "\n".join(f"  {_FORMS[form][1]}" for form in forms)
    return f"Expected:\n{expected}\nFor example:\n{examples}\nMore: HELP {word}"


def _inspect_usage(words: list[str]) -> str:
    return _usage(["INSPECT"], "INSPECT")


def _compression_usage(words: list[str]) -> str:
    """The form the command started as, or all three when its second word is none of them."""
    action = words[1] if len(words) > 1 and words[1] in _FORMS and words[1] != "INSPECT" else None
    return _usage([action] if action else ["STATS", "ADVISE", "SETTINGS"], "COMPRESSION")


def _select_text(parsed: Any) -> str:
    """The SELECT statement inside the command, as the user typed it."""
    tokens = list(parsed.matched)
    start = next(i for i, tok in enumerate(tokens) if tok[1].upper() == "SELECT")
    end = len(tokens)
    while end > start and tokens[end - 1][0] == "endtoken":
        end -= 1
    return parsed.extract_orig(tokens[start:end])


def _whole_table(parsed: Any) -> bool:
    """SELECT <plain columns or *> FROM <table> and nothing else: may be split into token ranges."""
    tokens = [tok for tok in parsed.matched if tok[0] != "endtoken"]
    start = next(i for i, tok in enumerate(tokens) if tok[1].upper() == "SELECT")
    words = {tok[1].upper() for tok in tokens[start:]}
    if words & {"WHERE", "LIMIT", "GROUP", "ORDER", "PER", "ALLOW", "DISTINCT", "JSON", "("}:
        return False
    return parsed.get_binding("mv") is None


def _names_select(parsed: Any) -> bool:
    return any(tok[1].upper() == "SELECT" for tok in parsed.matched)


def _target(shell: Any, parsed: Any, action: str) -> tuple[str, bool, int | None] | None:
    """(the SELECT, whether it reads the whole table, its LIMIT) for STATS and ADVISE: the statement
    given, or for a table named alone a whole-table SELECT of its blob columns. None (said why)
    when the table is unknown or has no blob column."""
    if _names_select(parsed):
        return _select_text(parsed), _whole_table(parsed), _limit(parsed)
    ks, table, meta = _table(shell, parsed)
    if not ks or not table:
        shell.printerr(f"COMPRESSION {action}: name a table as keyspace.table (or USE a keyspace first), "
                       f"e.g. COMPRESSION {action} ks.t;")
        return None
    if meta is None:
        shell.printerr(f"COMPRESSION {action}: table {ks}.{table} not found")
        return None
    from cassandra.metadata import protect_name

    columns = [name for name, column in meta.columns.items()
               if _type_holds_blob(column.cql_type, shell.conn.metadata.keyspaces.get(ks))]
    if not columns:
        shell.printerr(f"COMPRESSION {action}: {ks}.{table} has no blob column")
        return None
    query = f"SELECT {', '.join(map(protect_name, columns))} FROM {protect_name(ks)}.{protect_name(table)}"
    return query, True, None


def _type_holds_blob(cql_type: str, keyspace: Any, depth: int = 0) -> bool:
    """Whether a column type (its CQL text: 'frozen<map<text, blob>>', a UDT's name) holds a blob."""
    import re

    for word in re.findall(r'"[^"]+"|\w+', cql_type):
        if word == "blob":
            return True
        udt = (getattr(keyspace, "user_types", None) or {}).get(word.strip('"'))
        if udt is not None and depth < 8 and any(
                _type_holds_blob(field, keyspace, depth + 1) for field in udt.field_types):
            return True
    return False


def _name(shell: Any, raw: str | None) -> str | None:
    if raw is None:
        return None
    return shell.cql_unprotect_name(raw) if raw.startswith('"') else raw.lower()


def _table(shell: Any, parsed: Any) -> tuple[str | None, str | None, Any]:
    """(keyspace, table, table metadata or None) named by the statement."""
    ks = _name(shell, parsed.get_binding("ksname")) or shell.current_keyspace
    table = _name(shell, parsed.get_binding("cfname"))
    meta = None
    if ks and table:
        try:
            meta = shell.conn.metadata.keyspaces[ks].tables.get(table)
        except (KeyError, AttributeError):
            meta = None
    return ks, table, meta


def _wants_json(shell: Any, parsed: Any) -> bool:
    return parsed.get_binding("asjson") is not None or shell.settings.display.output_format == "json"


def _write(shell: Any, lines: Iterable[str]) -> None:
    out = shell.query_out
    for line in lines:
        out.write(line + "\n")
    out.flush()


def _report(shell: Any, lines: list[str]) -> list[str]:
    """A text report's lines laid out for the screen (the interactive shell), else as they are."""
    from cqlsh_ext.insight.report import fit

    return list(fit(lines, shell.results.screen_width()))


def _mode_cap(shell: Any) -> tuple[str, int]:
    from cqlsh_ext.insight.measure import effective_mode

    settings = shell.settings.display
    return effective_mode(settings.mode), settings.cap


def _scanner(shell: Any, spec: Any, progress: Any = None) -> Any:
    from cqlsh_ext.insight.scanning.scan import Scanner

    return Scanner(
        shell.session,
        spec,
        consistency=shell.consistency_level,
        serial_consistency=shell.serial_consistency_level,
        timeout=shell.session.default_timeout,
        progress=progress,
    )


def _plural(n: int, word: str) -> str:
    return f"{n:,} {word}" if n == 1 else f"{n:,} {word}s"


def _limit(parsed: Any) -> int | None:
    limit = parsed.get_binding("limit")
    return int(limit) if limit is not None else None


def _failed(shell: Any, err: BaseException) -> None:
    from cqlsh_ext.insight.scanning.scan import error_text

    shell.printerr(error_text(err))


# ------------------------------------------------------------------------------------- INSPECT


@shell_command("INSPECT", "<inspectCommand>", INSPECT_GRAMMAR, INSPECT_HELP, usage=_inspect_usage)
def do_inspect(shell: Any, parsed: Any) -> None:
    from cqlsh_ext import jsonenc as jsonout
    from cqlsh_ext.blobs import blob_columns, extractor
    from cqlsh_ext.codecs._common import reason
    from cqlsh_ext.insight.inspect import inspect_value, unreadable
    from cqlsh_ext.insight.scanning.consume import consume
    from cqlsh_ext.insight.scanning.scan import ScanSpec

    query = _select_text(parsed)
    as_json = _wants_json(shell, parsed)
    mode, cap = _mode_cap(shell)
    _ks, _table_name, meta = _table(shell, parsed)
    keys = [c.name for c in meta.primary_key] if meta is not None else None
    scanner = _scanner(shell, ScanSpec(query, limit=_limit(parsed)))
    row_no = values = nulls = 0
    extract: list[tuple[int, Any]] = []
    key_idx: list[int] = []

    def start(names: Sequence[str], types: Sequence[Any]) -> bool:
        cols = blob_columns(names, types)
        if not cols:
            shell.printerr("INSPECT: the result has no blob column")
            return False
        blob_idx = {i for i, _, _ in cols}
        key_idx.extend([i for i, n in enumerate(names) if (n in keys if keys else i not in blob_idx)][:6])
        extract.extend((i, extractor(n, t)) for i, n, t in cols)
        return True

    def take(names: Sequence[str], _types: Sequence[Any], rows: list[Any]) -> None:
        nonlocal row_no, values, nulls
        for row in rows:
            row_no += 1
            key = {names[i]: row[i] for i in key_idx}
            for i, ex in extract:
                if row[i] is None:
                    nulls += 1
                    continue
                for path, _schema, value in ex(row[i]):
                    values += 1
                    where = {"row": row_no, "column": path, "key": key}
                    rep = inspect_value(value, where, mode, cap)
                    try:
                        lines = [jsonout.dumps(rep.to_json())] if as_json else [*rep.render(), ""]
                    except Exception as err:  # one value's report, never the command
                        rep = unreadable(value, where, f"could not be inspected: {reason(err)}")
                        lines = [jsonout.dumps(rep.to_json())] if as_json else [*rep.render(), ""]
                    _write(shell, lines if as_json else _report(shell, lines))

    if consume(scanner, start, take) is None:
        return
    if scanner.error is not None:
        _failed(shell, scanner.error)
        return
    if not as_json:
        note = " (interrupted)" if scanner.interrupted else ""
        null_note = f", {nulls} null" if nulls else ""
        _write(shell, [f"({_plural(values, 'blob value')} in {_plural(row_no, 'row')}{null_note}){note}"])
    elif scanner.interrupted:
        print("INSPECT interrupted", file=sys.stderr)


# ------------------------------------------------------------------------------------- COMPRESSION


@shell_command("COMPRESSION", "<compressionCommand>", COMPRESSION_GRAMMAR, COMPRESSION_HELP,
               usage=_compression_usage)
def do_compression(shell: Any, parsed: Any) -> None:
    action = (parsed.get_binding("action") or "").upper()
    if action == "STATS":
        _stats(shell, parsed)
    elif action == "ADVISE":
        _advise(shell, parsed)
    elif action == "SETTINGS":
        _settings(shell, parsed)


def _stats(shell: Any, parsed: Any) -> None:
    from cqlsh_ext import jsonenc as jsonout
    from cqlsh_ext.insight.scanning.consume import consume
    from cqlsh_ext.insight.scanning.ring import RingError, ring_for, server_partitioner
    from cqlsh_ext.insight.scanning.scan import ScanSpec, error_text, progress_for, table_size
    from cqlsh_ext.insight.stats import Stats

    target = _target(shell, parsed, "STATS")
    if target is None:
        return
    query, whole_table, limit = target
    mode, cap = _mode_cap(shell)
    stats = Stats(query, mode, cap, from_headers=parsed.get_binding("decode_all") is None)
    ks, table, meta = _table(shell, parsed)
    whole = meta is not None and whole_table
    partition_key = [c.name for c in meta.partition_key] if meta is not None else []
    plan = _sample_plan(parsed)
    ring = None
    partitioner = ""
    if whole:
        partitioner = server_partitioner(shell.session)
        try:
            ring = ring_for(partitioner)
        except RingError as err:
            if plan is not None:
                shell.printerr(f"COMPRESSION STATS: cannot sample: {err}")
                return
    if plan is not None:
        if not whole or ring is None or not ks or not table:
            shell.printerr("COMPRESSION STATS: SAMPLE needs a whole-table SELECT (SELECT columns FROM table, "
                           "nothing after the table name)")
            return
        _sampled_stats(shell, parsed, stats, plan, ring, ks, table, partition_key)
        return
    size = None
    if whole and ks and table:
        size = table_size(shell.session, ks, table, ring.span if ring else None)
    if whole and ks and table and not _cost_accepted(shell, parsed, ks, table, size, partitioner):
        return
    parallel = parsed.get_binding("parallel")
    workers = min(int(parallel), MAX_PARALLEL) if parallel is not None else _default_workers(size)
    progress = progress_for(f"COMPRESSION STATS {ks}.{table}" if table else "COMPRESSION STATS", True)
    if progress is not None and size is not None:
        progress.estimate = size.partitions  # for a percentage (one row per partition is the usual case)
    retried: dict[str, int] = {}
    if whole and ring is not None and workers > 1:
        from cqlsh_ext.insight.scanning import workers as worker_pool

        stats, retried = worker_pool.scan(shell, stats, ks, partition_key, ring, workers, progress)
        if stats.rows == 0 and stats.error:
            shell.printerr(f"COMPRESSION STATS: {stats.error}")
            return
        if not stats.columns and not stats.error and not stats.interrupted:
            shell.printerr("COMPRESSION STATS: the result has no blob column")
            return
    else:
        scanner = _scanner(shell, ScanSpec(query, limit=limit), progress)
        pages = consume(scanner, partial(_stats_columns, shell, stats),
                        lambda _names, _types, rows: stats.add_rows(rows))
        if pages is None:
            return
        stats.interrupted = stats.interrupted or scanner.interrupted
        stats.scan = scanner.description
        retried = scanner.retried
        if scanner.error is not None:
            if not pages:
                _failed(shell, scanner.error)
                return
            stats.error = error_text(scanner.error)
    stats.retried = retried
    stats.finish()
    as_json = _wants_json(shell, parsed)
    _write(shell, [jsonout.dumps(stats.to_json())] if as_json else _report(shell, stats.render()))


def _stats_columns(shell: Any, stats: Any, names: Sequence[str], types: Sequence[Any]) -> bool:
    stats.set_columns(names, types)
    if not stats.has_blobs:
        shell.printerr("COMPRESSION STATS: the result has no blob column")
        return False
    return True


def _sample_plan(parsed: Any) -> Any:
    """The SAMPLE clause as a SamplePlan, or None for an exact scan."""
    if parsed.get_binding("sample_mode") is None:
        return None
    from cqlsh_ext.insight.scanning.sample import DEFAULT_SECONDS, SamplePlan

    sample, precision = parsed.get_binding("sample"), parsed.get_binding("precision")
    seconds, seed = parsed.get_binding("seconds"), parsed.get_binding("seed")
    plan = SamplePlan(seconds=float(seconds) if seconds else DEFAULT_SECONDS,
                      seed=int(seed) if seed is not None else None)
    if sample is not None and parsed.get_binding("percent") is not None:
        plan.percent = min(100.0, float(sample))
    elif sample is not None:
        plan.rows = int(sample)
    elif precision is not None:
        plan.precision = float(precision) / 100
    return plan


def _sampled_stats(shell: Any, parsed: Any, stats: Any, plan: Any, ring: Any, ks: str, table: str,
                   partition_key: list[str]) -> None:
    from cqlsh_ext import jsonenc as jsonout
    from cqlsh_ext.insight.sampled import SampledStats
    from cqlsh_ext.insight.scanning.consume import consume
    from cqlsh_ext.insight.scanning.sample import SAMPLE_STREAMS, probe_partitions, slice_count
    from cqlsh_ext.insight.scanning.scan import ScanSpec, error_text, progress_for, table_size

    size = table_size(shell.session, ks, table, ring.span)
    sampler = SampledStats(stats, ring, 1, plan, None, "")
    partitions: int | None
    if size is not None:
        partitions, basis = size.partitions, "system.size_estimates"
    else:
        partitions = probe_partitions(shell.session, ring, ks, table, partition_key, sampler.rng,
                                      shell.session.default_timeout)
        basis = "DISTINCT partition keys after random tokens"
    sampler.slices = slice_count(partitions)
    sampler.server_partitions, sampler.partitions_basis = partitions, basis
    progress = progress_for(f"COMPRESSION STATS SAMPLE {ks}.{table}", True)
    if progress is not None:
        progress.detail = sampler.progress_detail
    spec = ScanSpec(stats.query, partition_key=partition_key, ranges=sampler.ranges(), streams=SAMPLE_STREAMS)
    scanner = _scanner(shell, spec, progress)
    taken = consume(scanner, partial(_stats_columns, shell, stats),
                    lambda _n, _t, rows: sampler.add_page(scanner.page_range, rows, scanner.range_finished))
    if taken is None:
        return
    stats.interrupted = stats.interrupted or scanner.interrupted
    stats.scan = f"sample, {spec.streams} token-range streams"
    stats.retried = scanner.retried
    if scanner.error is not None:
        if not sampler.done:
            _failed(shell, scanner.error)
            return
        stats.error = error_text(scanner.error)
    stats.finish()
    as_json = _wants_json(shell, parsed)
    _write(shell, [jsonout.dumps(sampler.to_json())] if as_json else _report(shell, sampler.render()))


def _default_workers(size: Any) -> int:
    import os

    if size is None or size.bytes < WORKERS_FROM_BYTES:
        return 1
    return max(1, min(MAX_PARALLEL, os.cpu_count() or 1))


def _cost_accepted(shell: Any, parsed: Any, ks: str, table: str, size: Any, partitioner: str) -> bool:
    """Before a full scan on Keyspaces or of an estimated 1 GB or more: the cost, and a question on a
    terminal; a script goes ahead only with CONFIRM."""
    from cqlsh_ext.insight import capacity, report
    from cqlsh_ext.insight.scanning.ring import is_keyspaces

    opts = shell.settings.keyspaces
    keyspaces = is_keyspaces(partitioner, shell.hostname,
                             opts.keyspaces or opts.wants_sigv4 or opts.stock_sigv4_provider)
    if not keyspaces and (size is None or size.bytes < CONFIRM_FROM_BYTES):
        return True
    if parsed.get_binding("confirm") is not None:
        return True
    if size is not None:
        per_row = -(-size.mean_partition_bytes // (4 * capacity.KB)) or 1
        cost = (f"about {report.count(size.partitions)} partitions, {size.bytes / 1e9:.2f} GB, "
                f"~{report.count(size.partitions * per_row)} read units at LOCAL_QUORUM (estimate)")
    else:
        cost = "an unknown number of rows (the server gives no size estimate)"
    where = "Amazon Keyspaces bills every row read" if keyspaces else "a large table"
    what = f"COMPRESSION STATS: a full scan of {ks}.{table} reads {cost}; {where}."
    if not (sys.stdin.isatty() and getattr(shell, "tty", True)):
        shell.printerr(f"{what} Add CONFIRM to run it from a script (COMPRESSION STATS CONFIRM SELECT ...), "
                       "or estimate from a sample (COMPRESSION STATS SAMPLE SELECT ...).")
        return False
    print(what, file=sys.stderr)
    try:
        answer = input("Scan the whole table? (a sample costs far less: COMPRESSION STATS SAMPLE ...) [y/N] ")
    except (EOFError, KeyboardInterrupt):
        answer = ""
    if answer.strip().lower() in ("y", "yes"):
        return True
    print("COMPRESSION STATS: not scanned.", file=sys.stderr)
    return False


def _advise(shell: Any, parsed: Any) -> None:
    from cqlsh_ext import jsonenc as jsonout
    from cqlsh_ext.blobs import blob_columns, extractor
    from cqlsh_ext.insight.advise import Advice, Sample
    from cqlsh_ext.insight.scanning.consume import consume
    from cqlsh_ext.insight.scanning.scan import ScanSpec, error_text, progress_for

    target = _target(shell, parsed, "ADVISE")
    if target is None:
        return
    query, _whole, limit = target
    mode, cap = _mode_cap(shell)
    started = time.perf_counter()
    scanner = _scanner(
        shell,
        ScanSpec(query, limit=limit),
        progress_for("COMPRESSION ADVISE (reading the sample)", True),
    )
    from cqlsh_ext.insight.advise import ADVISE_SAMPLE_VALUES

    sample = Sample(int(parsed.get_binding("sample") or ADVISE_SAMPLE_VALUES), mode, cap)
    layout: list[tuple[int, Any]] = []
    rows_read = 0

    def start(names: Sequence[str], types: Sequence[Any]) -> bool:
        layout.extend((i, extractor(n, t)) for i, n, t in blob_columns(names, types))
        if not layout:
            shell.printerr("COMPRESSION ADVISE: the result has no blob column")
            return False
        return True

    def take(_names: Sequence[str], _types: Sequence[Any], rows: list[Any]) -> bool:
        nonlocal rows_read
        for row in rows:
            if sample.full:
                break
            rows_read += 1
            for i, ex in layout:
                for _path, schema, value in ex(row[i]):
                    sample.add(schema, value)
        return not sample.full

    if consume(scanner, start, take) is None:
        return
    if scanner.error is not None and not rows_read:
        _failed(shell, scanner.error)
        return
    advice = Advice(query, sample.advise(), rows_read, interrupted=scanner.interrupted)
    if scanner.error is not None:
        advice.error = error_text(scanner.error)
    advice.elapsed = time.perf_counter() - started
    as_json = _wants_json(shell, parsed)
    _write(shell, [jsonout.dumps(advice.to_json())] if as_json else _report(shell, advice.render()))


def _settings(shell: Any, parsed: Any) -> None:
    from cqlsh_ext import jsonenc as jsonout
    from cqlsh_ext.insight import settings as tsettings
    from cqlsh_ext.insight.scanning.consume import consume
    from cqlsh_ext.insight.scanning.scan import ScanSpec

    ks, table, meta = _table(shell, parsed)
    if not ks or not table:
        shell.printerr("COMPRESSION SETTINGS: name a table as keyspace.table (or USE a keyspace first), "
                       "e.g. COMPRESSION SETTINGS ks.t;")
        return
    try:
        found = list(
            shell.session.execute(
                "SELECT compression, compaction FROM system_schema.tables "
                "WHERE keyspace_name = %s AND table_name = %s",
                (ks, table),
            )
        )
    except Exception as err:
        _failed(shell, err)
        return
    if not found:
        shell.printerr(f"COMPRESSION SETTINGS: table {ks}.{table} not found")
        return
    row = found[0]
    get = (lambda k: row[k]) if isinstance(row, dict) else (lambda k: getattr(row, k))
    result = tsettings.TableSettings(ks, table, dict(get("compression") or {}), dict(get("compaction") or {}))
    sample = int(parsed.get_binding("sample") or tsettings.SETTINGS_SAMPLE_ROWS)
    from cassandra.metadata import protect_name

    query = f"SELECT * FROM {protect_name(ks)}.{protect_name(table)} LIMIT {sample}"
    mode, cap = _mode_cap(shell)
    pk = [c.name for c in meta.partition_key] if meta is not None else []
    protocol = shell.conn.protocol_version
    scanner = _scanner(shell, ScanSpec(query, limit=sample))
    stored_rows: list[bytes] = []
    plain_rows: list[bytes] = []

    def take(names: Sequence[str], types: Sequence[Any], rows: list[Any]) -> bool:
        st, pl = tsettings.collect(result, names, types, rows, pk, protocol, mode, cap)
        stored_rows.extend(st)
        plain_rows.extend(pl)
        if sum(map(len, stored_rows)) > SETTINGS_SAMPLE_BYTES:
            result.notes.append(f"the sample stopped at {SETTINGS_SAMPLE_BYTES >> 20} MiB")
            return False
        return True

    consume(scanner, None, take)
    if scanner.interrupted:
        result.notes.append("sample interrupted by Ctrl-C")
    if scanner.error is not None:
        _failed(shell, scanner.error)
        return
    if result.sample_rows >= sample:
        tsettings.drop_partial_partition(result)
    result.estimate = tsettings.size_estimate(shell.session, ks, table)
    tsettings.measure_ratios(result, stored_rows, plain_rows)
    tsettings.advise(result)
    as_json = _wants_json(shell, parsed)
    _write(shell, [jsonout.dumps(result.to_json())] if as_json else _report(shell, result.render()))
