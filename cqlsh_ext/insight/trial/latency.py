"""COMPRESSION TRIAL's measurement: sampled values re-compressed per variant, written into scratch
tables and read back, the cluster's latencies counted in histograms (insight.trial.report).

    variants = build_variants(names, values, cap)          # encode()'s writers, verified
    Trial(session, keyspace, variants, ...).run(report)    # tables, warm-up, rounds, reads, drop

Each variant gets a scratch table of its own (`cqlshext_trial_<token>_<variant>`, id int PRIMARY KEY,
v blob) in the keyspace the user named. The writes go in rounds: every variant writes its share of
the round's keys before the next round starts, the variants' order turning from round to round,
so all of them meet the cluster in the same conditions; a warm-up (prepared statements, the
connection pool, the server's caches) writes and reads other keys first and is not counted. Then
every key is read back in one random order, in rounds the same way, and compared with what was
written. Requests go `concurrency` at a time; overload, throttling and timeouts are retried with
backoff and counted; any other error stops the trial. The tables are dropped at the end, whatever
happened (also after Ctrl-C), unless kept.
"""

from __future__ import annotations

import heapq
import queue
import random
import secrets
import statistics
import threading
import time
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from cqlsh_ext.common import retry
from cqlsh_ext.common.interrupt import CtrlC, shielded
from cqlsh_ext.insight.trial.report import BASELINE, STORED, Phase, TrialReport

if TYPE_CHECKING:
    from cqlsh_ext.codecs.base import Container
    from cqlsh_ext.payload.engine import ValueEngine

#: Payload bytes the values may hold together: every variant keeps its own copy of them in memory.
SAMPLE_BYTES = 256 << 20
#: Rows per variant written and read before counting starts (at most ROWS).
WARMUP_ROWS = 50
#: Rounds at most; fewer when a variant's turn would be under 4 requests per connection slot.
MAX_ROUNDS = 10
#: DDL may take longer than a request (schema agreement on Cassandra).
DDL_TIMEOUT = 60.0
TABLE_PREFIX = "cqlshext_trial_"
#: Keyspaces allows table names of 48 characters.
MAX_TABLE_NAME = 48
#: Decode timing: a warm-up pass, then passes until this budget (seconds) or DECODE_PASSES.
DECODE_BUDGET, DECODE_PASSES = 0.25, 5
#: Why a sampled value is left out.
NOT_DECODABLE, OVER_CAP = "not decodable", "over the output cap"


class TrialRefused(ValueError):
    """The trial cannot run as asked; str() is the one-line reason."""


def column_kind(cql_type: str) -> str | None:
    """'blob' or 'text' for a column type TRIAL measures, None for any other: blobs, and text
    (text, varchar, ascii) as a payload stored uncompressed. The one place that says which."""
    from cqlsh_ext.cql.types import TypeTextError, parse

    try:
        column = parse(cql_type)
    except TypeTextError:
        return None
    if column.is_blob:
        return "blob"
    return "text" if column.is_text else None


# ------------------------------------------------------------------------------------- values


@dataclass(slots=True)
class Value:
    """One sampled value: as stored, the bytes under its last compression layer (what every variant
    re-compresses), and its compression layers outer first (what decoding it takes)."""

    stored: bytes
    payload: bytes
    layers: tuple[Container, ...] = ()


def take_value(stored: bytes | str, engine: ValueEngine) -> Value | str:
    """The value decoded by the column's value engine as the display decodes it, or why it is left
    out: a value that does not decode, or whose payload the output cap cuts, cannot be
    re-compressed."""
    if isinstance(stored, str):  # a text column: its UTF-8 bytes are the payload, stored as is
        data = stored.encode("utf-8")
        return Value(data, data)
    from cqlsh_ext.payload.view import FAILED, UNKNOWN

    view = engine.view(stored)
    if view.kind == FAILED:
        return NOT_DECODABLE
    if view.kind == UNKNOWN:
        return Value(stored, stored)
    if view.cut:
        return OVER_CAP
    layers = tuple(layer.fmt for layer in view.layers if layer.fmt is not None)
    return Value(stored, view.data, layers) if layers else Value(stored, stored)


# ------------------------------------------------------------------------------------- variants


@dataclass
class Variant:
    """The values as one variant writes them, and each one's compression layers (outer first)."""

    name: str
    values: list[bytes]
    layers: list[tuple[Container, ...]]


_PROBE = b"COMPRESSION TRIAL checks that this variant is written here. " * 4


def variant_names(given: Sequence[str] | None, stored_compressed: bool) -> list[str]:
    """The variants to measure: those given (uncompressed added first when missing: every change
    is against it), or the default: stored (when any value is stored compressed: otherwise it is
    the uncompressed variant), uncompressed and the codecs the codec modules declare for it."""
    from cqlsh_ext.codecs.base import CODEC_TRIAL

    if given is None:
        names = ([STORED] if stored_compressed else []) + [BASELINE, *CODEC_TRIAL]
    else:
        names = []
        for raw in given:
            name = raw.strip()
            name = name.lower() if name.lower() in (STORED, BASELINE) else name
            if name not in names:
                names.append(name)
        if BASELINE not in names:
            names.insert(0, BASELINE)
    for name in names:
        check_variant(name)
    return names


def check_variant(name: str) -> None:
    """TrialRefused when encode() does not write `name` (a chain of codecs, each written here)."""
    if name in (STORED, BASELINE):
        return
    from cqlsh_ext.codecs.base import DEFAULT_CAP
    from cqlsh_ext.encode.chain import EncodeRefused, encode, spec_of

    try:
        spec = spec_of(name)
    except EncodeRefused as err:
        hint = ""
        if " " in name.strip() or "+" in name:
            hint = (" (COMPRESSION ADVISE's names are not chains: a level is written <codec>:N, "
                    "and a dictionary cannot be written)")
        raise TrialRefused(f"variant {name!r}: {err}{hint}") from None
    if not spec.codecs or spec.payload is not None:
        raise TrialRefused(f"variant {name!r}: a variant is a chain of codecs only (the payload is the "
                           f"column's own), or {STORED} or {BASELINE}")
    try:
        encode(name, _PROBE, DEFAULT_CAP)
    except EncodeRefused as err:
        raise TrialRefused(f"variant {name!r}: {err}") from None


def chain_layers(name: str) -> tuple[Container, ...]:
    """The formats a chain writes, outer first (the order decoding takes them)."""
    from cqlsh_ext.codecs import registry
    from cqlsh_ext.encode.chain import spec_of

    spec = spec_of(name)
    named = spec.variants or (None,) * len(spec.codecs)
    found = [registry.by_label(label) if label else registry.written_by(codec)
             for codec, label in zip(spec.codecs, named, strict=True)]
    return tuple(fmt for fmt in found if fmt is not None)


def build_variants(names: Sequence[str], values: Sequence[Value], cap: int) -> list[Variant]:
    """Each variant's bytes for `values`: the stored ones, the payloads, or the payloads written by
    encode() (verified by reading them back as the display does); TrialRefused when one is not."""
    from cqlsh_ext.encode.chain import EncodeRefused, encode

    variants = []
    for name in names:
        if name == STORED:
            variants.append(Variant(name, [v.stored for v in values], [v.layers for v in values]))
        elif name == BASELINE:
            variants.append(Variant(name, [v.payload for v in values], [()] * len(values)))
        else:
            layers = chain_layers(name)
            written = []
            for value in values:
                try:
                    written.append(encode(name, value.payload, cap).value)
                except EncodeRefused as err:
                    raise TrialRefused(f"variant {name!r}: a value of {len(value.payload):,} bytes: "
                                       f"{err}") from None
            variants.append(Variant(name, written, [layers] * len(values)))
    return variants


def units(values: Sequence[bytes]) -> tuple[int, int]:
    """(write units, read units at LOCAL_QUORUM) for writing and reading each value as one row (a
    Pricing prices the reads at the session's consistency: scanning.capacity)."""
    from cqlsh_ext.scanning.capacity import rcu, wcu

    return sum(wcu(len(v)) for v in values), sum(rcu(len(v)) for v in values)


def decode_micros(variant: Variant, cap: int) -> float | None:
    """Mean time to decode one of the variant's values here, in microseconds (every layer through
    its format's own decoder, as a reader that knows the chain does); None with nothing to decode."""
    pairs = [(value, layers) for value, layers in zip(variant.values, variant.layers, strict=True) if layers]
    if not pairs or not variant.values:
        return None

    def one_pass() -> float:
        start = time.perf_counter()
        for value, layers in pairs:
            data = value
            for fmt in layers:
                data = fmt.decode(data, cap).data
        return time.perf_counter() - start

    one_pass()  # warm-up: libraries loaded, caches warm
    times: list[float] = []
    while len(times) < DECODE_PASSES and sum(times) < DECODE_BUDGET:
        times.append(one_pass())
    return statistics.median(times) / len(variant.values) * 1e6


def table_name(token: str, variant: str, taken: set[str]) -> str:
    """A scratch table's name: the prefix, the run's token and the variant in letters and digits
    (unique within the run, at most MAX_TABLE_NAME characters)."""
    slug = "".join(c if c.isalnum() else "_" for c in variant.lower()).strip("_") or "variant"
    base = f"{TABLE_PREFIX}{token}_"
    name = (base + slug)[:MAX_TABLE_NAME]
    n = 2
    while name in taken:
        suffix = f"_{n}"
        name = (base + slug)[: MAX_TABLE_NAME - len(suffix)] + suffix
        n += 1
    taken.add(name)
    return name


# ------------------------------------------------------------------------------------- the run


class _Stopped(Exception):
    """A request failed in a way retrying cannot help: the trial stops (Trial.error says why)."""


@dataclass
class Trial:
    session: Any
    keyspace: str
    variants: list[Variant]
    concurrency: int
    #: The driver's consistency level (an int).
    consistency: int
    timeout: float | None
    keyspaces: bool = False
    keep: bool = False
    cap: int = 0
    progress: Any = None
    seed: int | None = None
    #: Set by Ctrl-C: nothing more is sent, what was measured is reported.
    stop: threading.Event = field(default_factory=threading.Event)
    error: BaseException | None = None
    created: list[str] = field(default_factory=list)
    done: int = 0
    total: int = 0
    phase: str = ""

    def run(self, report: TrialReport) -> None:
        """Create the tables, measure into `report`, drop the tables (unless kept)."""
        from cqlsh_ext.scanning.scan import error_text

        started = time.monotonic()
        # The first Ctrl-C stops sending and keeps what was measured; a second one stops at once.
        ctrl_c = CtrlC(self.stop)
        rows = report.rows
        report.warmup_rows = min(WARMUP_ROWS, rows)
        report.rounds = max(1, min(MAX_ROUNDS, rows // (4 * self.concurrency)))
        self.total = len(self.variants) * 2 * (rows + report.warmup_rows)
        if self.progress is not None:
            self.progress.detail = lambda: self.phase
        try:
            ctrl_c.__enter__()  # inside the try: a press right after it still restores
            try:
                self._create_tables(report)
                if self.keyspaces and not self.stop.is_set():
                    from cqlsh_ext.keyspaces.tables import wait_until_active

                    self.phase = "waiting for the tables to be ACTIVE"
                    report.active_wait = wait_until_active(self.session, self.keyspace, self.created,
                                                           self.stop.is_set, wait=self.timeout).to_json()
                if not self.stop.is_set():
                    self._measure(report)
            except KeyboardInterrupt:
                self.stop.set()
            except _Stopped:
                pass
            except Exception as err:  # a driver error outside a request (CREATE TABLE, prepare, status)
                self.error = self.error or err
            if self.error is not None:
                report.error = error_text(self.error)
            report.interrupted = self.stop.is_set()
            if not report.interrupted:
                self.phase = "decoding"
                for variant, result in zip(self.variants, report.variants, strict=True):
                    result.decode_us = decode_micros(variant, self.cap)
        finally:
            ctrl_c.restore()
            if self.progress is not None:
                self.progress.close()
            report.kept = self.keep and bool(self.created)
            if not self.keep:
                self._drop_tables(report)
            report.elapsed = time.monotonic() - started

    # --------------------------------------------------------------------------- tables
    def _create_tables(self, report: TrialReport) -> None:
        from cassandra.metadata import protect_name

        token = secrets.token_hex(3)
        taken: set[str] = set()
        self.phase = "creating the scratch tables"
        self._tick()
        for result in report.variants:
            name = table_name(token, result.name, taken)
            result.table = name
            self.created.append(name)
            self.session.execute(f"CREATE TABLE {protect_name(self.keyspace)}.{name} "
                                 "(id int PRIMARY KEY, v blob)", timeout=DDL_TIMEOUT)
            if self.stop.is_set():
                return

    def _drop_tables(self, report: TrialReport) -> None:
        from cassandra.metadata import protect_name

        from cqlsh_ext.scanning.scan import error_text

        with shielded():
            for name in self.created:
                try:
                    self.session.execute(f"DROP TABLE IF EXISTS {protect_name(self.keyspace)}.{name}",
                                         timeout=DDL_TIMEOUT)
                except Exception as err:
                    report.notes.append(f"could not drop {self.keyspace}.{name} ({error_text(err)}): "
                                        "drop it yourself")

    # --------------------------------------------------------------------------- measuring
    def _measure(self, report: TrialReport) -> None:
        from cassandra.metadata import protect_name

        ks = protect_name(self.keyspace)
        inserts, selects = [], []
        for result in report.variants:
            insert = self.session.prepare(f"INSERT INTO {ks}.{result.table} (id, v) VALUES (?, ?)")
            select = self.session.prepare(f"SELECT v FROM {ks}.{result.table} WHERE id = ?")
            insert.consistency_level = select.consistency_level = self.consistency
            inserts.append(insert)
            selects.append(select)
        n, warm, rounds = report.rows, report.warmup_rows, report.rounds
        count = len(self.variants)
        for j, variant in enumerate(self.variants):
            self.phase = f"warm-up, {variant.name}"
            self._run(inserts[j], [(n + i, variant.values[i]) for i in range(warm)], None, None)
            self._run(selects[j], [(n + i,) for i in range(warm)], variant.values[:warm], None)
            if self.stop.is_set():
                return
        bounds = [n * r // rounds for r in range(rounds + 1)]
        written: list[set[int]] = [set() for _ in range(count)]
        for r in range(rounds):
            for j in _turns(count, r):
                self.phase = f"writes, round {r + 1} of {rounds}"
                keys = range(bounds[r], bounds[r + 1])
                variant = self.variants[j]
                report.variants[j].writes.start_round(r)
                ok = self._run(inserts[j], [(k, variant.values[k]) for k in keys], None,
                               report.variants[j].writes)
                written[j].update(keys[i] for i in ok)
                if self.stop.is_set():
                    return
        order = list(range(n))
        random.Random(self.seed).shuffle(order)
        for r in range(rounds):
            for j in _turns(count, r):
                self.phase = f"reads, round {r + 1} of {rounds}"
                variant = self.variants[j]
                readable = [k for k in order[bounds[r]:bounds[r + 1]] if k in written[j]]
                self.done += bounds[r + 1] - bounds[r] - len(readable)  # never written: nothing to read
                report.variants[j].reads.start_round(r)
                self._run(selects[j], [(k,) for k in readable], [variant.values[k] for k in readable],
                          report.variants[j].reads)
                if self.stop.is_set():
                    return

    def _run(self, prepared: Any, params: list[tuple[Any, ...]], expect: list[bytes] | None,
             phase: Phase | None) -> list[int]:
        """Each `params` through `prepared`, `concurrency` at a time, retrying what is worth it;
        the indexes that succeeded. Latencies and failures go to `phase` (None: a warm-up)."""
        from cqlsh_ext.scanning.scan import retry_reason

        answers: queue.SimpleQueue[tuple[int, float, float, Any, BaseException | None]] = queue.SimpleQueue()
        pending = deque(range(len(params)))
        backoff: list[tuple[float, int, str]] = []
        attempts = [0] * len(params)
        in_flight = 0
        succeeded: list[int] = []
        started = time.perf_counter()
        try:
            while True:
                now = time.monotonic()
                halted = self.stop.is_set() or self.error is not None
                # An operation waiting to be retried keeps its place among the `concurrency`, as it
                # would in a client whose driver retries: new ones start only in free places.
                while backoff and backoff[0][0] <= now and not halted:
                    _, i, why = heapq.heappop(backoff)
                    if phase is not None:
                        phase.retry(why)  # counted when sent again: a stop abandons the rest
                    self._launch(prepared, params[i], i, answers)
                    in_flight += 1
                while pending and in_flight + len(backoff) < self.concurrency and not halted:
                    i = pending.popleft()
                    self._launch(prepared, params[i], i, answers)
                    in_flight += 1
                if not in_flight and (halted or not (pending or backoff)):
                    break
                wait = 0.1 if in_flight or not backoff else min(0.1, max(0.0, backoff[0][0] - now))
                try:
                    i, sent, answered, rows, err = answers.get(timeout=wait)
                except queue.Empty:
                    self._tick()
                    continue
                in_flight -= 1
                if err is None:
                    self.done += 1
                    self._tick()
                    if expect is not None:
                        got = _first_value(rows)
                        if got != expect[i]:
                            if phase is not None:
                                phase.fail("read back nothing" if got is None else "read back other bytes")
                            continue
                    if phase is not None:
                        phase.record(round((answered - sent) * 1e6))
                    succeeded.append(i)
                    continue
                reason = _retry_reason(err, retry_reason)
                if reason is None:
                    self.error = self.error or err
                    continue
                if retry.exhausted(attempts[i]):
                    self.done += 1
                    if phase is not None:
                        if _timed_out(err):
                            phase.timed_out += 1
                        else:
                            phase.fail(f"{reason} ({retry.ATTEMPTS + 1} tries)")
                    continue
                attempts[i] += 1
                heapq.heappush(backoff, (time.monotonic() + retry.delay(attempts[i]), i, reason))
        finally:
            if phase is not None:
                phase.add_seconds(time.perf_counter() - started)
        if self.error is not None:
            raise _Stopped()
        return succeeded

    def _launch(self, prepared: Any, params: tuple[Any, ...], i: int,
                answers: queue.SimpleQueue[tuple[int, float, float, Any, BaseException | None]]) -> None:
        bound = prepared.bind(params)
        sent = time.perf_counter()
        future = self.session.execute_async(bound, timeout=self.timeout)
        future.add_callbacks(lambda rows: answers.put((i, sent, time.perf_counter(), rows, None)),
                             errback=lambda err: answers.put((i, sent, time.perf_counter(), None, err)))

    def _tick(self) -> None:
        if self.progress is not None:
            self.progress.update(self.done, self.done / self.total if self.total else None)


def _turns(count: int, round_index: int) -> list[int]:
    """The variants' order in one round: turned by one each round, so none always goes first."""
    start = round_index % count
    return [*range(start, count), *range(start)]


def _first_value(rows: Any) -> bytes | None:
    if not rows:
        return None
    row = rows[0]
    value = row.get("v") if isinstance(row, dict) else row[0]
    return bytes(value) if value is not None else None


def _retry_reason(err: BaseException, reads: Callable[[BaseException], str | None]) -> str | None:
    """Worth retrying: what a read scan retries (scanning.scan.retry_reason), and a write
    timeout (the writes are idempotent: the same value under the same key)."""
    from cassandra import WriteTimeout

    if isinstance(err, WriteTimeout):
        return "write timeout (Keyspaces: throttling)"
    return reads(err)


def _timed_out(err: BaseException) -> bool:
    from cassandra import OperationTimedOut, ReadTimeout, WriteTimeout

    return isinstance(err, OperationTimedOut | ReadTimeout | WriteTimeout)
