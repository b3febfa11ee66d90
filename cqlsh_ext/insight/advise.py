"""COMPRESSION ADVISE: re-compress a sample's payloads with every available codec, measured here.

For each codec and level: the compressed sizes (so the ratio, the bucket distribution and the
Keyspaces capacity units it would give), and compress / decompress speed in MB/s (10^6 bytes of
decompressed data per second) on this machine. The measurement is one untimed warm-up pass (which
also checks the round trip) and then several timed passes over the whole sample; the median is
reported with the spread (max - min) / median, so the machine's noise is visible. Slow codecs get
fewer passes (a time budget per codec), never fewer than one.

The candidates are the compressors the codec modules declare (Container.compressors, in
advise_priority order). A format with dictionaries (Container.dictionary_level) is also measured with
one, trained by two-fold cross-fitting: the dictionary that compresses a value was trained on the
other half of the sample, never on the value itself.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from cqlsh_ext.insight import isolate, report
from cqlsh_ext.insight.measure import COMPRESSED, PLAIN, UNDECODABLE, measured, payload_of
from cqlsh_ext.insight.recompress import (
    BUDGET_S,
    REPETITIONS,
    Result,
    available_codecs,
    dictionary_formats,
    measure,
    with_dictionary,
)
from cqlsh_ext.payload.unwrap import TEXT_LABEL
from cqlsh_ext.scanning import capacity

#: Skip the slowest settings when the sample is bigger than this (they would take minutes).
SLOW_LIMIT = 8 << 20
#: Payload bytes a sample holds at most.
#: COMPRESSION ADVISE: values per blob column when SAMPLE is not given, and bytes at most.
ADVISE_SAMPLE_VALUES = 300
ADVISE_SAMPLE_BYTES = 64 << 20
#: Candidates for the recommendation must reach these speeds (MB/s) here: compressing must not
#: dominate a write path, nor decompressing a read path.
FAST_COMPRESS, FAST_DECOMPRESS = 50.0, 200.0

#: Told what is measured next: (what, share of the measuring done so far); a progress line.
Step = Callable[[str, float], None]


@dataclass
class ColumnAdvice:
    """ADVISE for one blob column: the sample's sizes (per value) and every codec's result."""

    column: str
    payloads: int
    payload_bytes: int
    #: Per value of the sample: decompressed payload size, and size as stored now.
    payload_sizes: list[int]
    stored_sizes: list[int]
    #: Values per chain as stored now; values left out of the sample and why.
    current: dict[str, int]
    skipped: dict[str, int]
    results: list[Result] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    recommendation: str = ""
    recommended: str | None = None
    #: Ctrl-C while measuring: the settings measured before it are the results.
    interrupted: bool = False

    def _rows(self) -> list[tuple[str, str, list[int]]]:
        """(name, family, sizes) of the reference rows and every codec."""
        base = [("uncompressed", "", self.payload_sizes), ("stored now", "", self.stored_sizes)]
        return base + [(r.name, r.family, r.sizes) for r in self.results]

    def to_json(self) -> dict[str, object]:
        unc = _capacity(self.payload_sizes)
        now = _capacity(self.stored_sizes)
        codecs = []
        for r in self.results:
            cap = _capacity(r.sizes)
            codecs.append(
                {
                    "codec": r.name,
                    "family": r.family,
                    "compressed_bytes": r.total,
                    "ratio": round(self.payload_bytes / r.total, 4) if r.total else None,
                    "compress_mb_s": r.compress.to_json(),
                    "decompress_mb_s": r.decompress.to_json(),
                    "buckets": _buckets(r.sizes).to_json(),
                    "keyspaces": cap.to_json(),
                    "wcu_saving_vs_uncompressed": capacity.saving(unc.wcu, cap.wcu),
                    "wcu_saving_vs_stored": capacity.saving(now.wcu, cap.wcu),
                    "rcu_saving_vs_uncompressed": capacity.saving(unc.rcu, cap.rcu),
                    "note": r.note,
                }
            )
        stored = sum(self.stored_sizes)
        return {
            "column": self.column,
            "measured_all": not self.interrupted,
            "values": self.payloads,
            "payload_bytes": self.payload_bytes,
            "stored_bytes": stored,
            "stored_ratio": round(self.payload_bytes / stored, 4) if stored else None,
            "current": self.current,
            "skipped": self.skipped,
            "uncompressed": {"buckets": _buckets(self.payload_sizes).to_json(), "keyspaces": unc.to_json()},
            "stored_now": {"buckets": _buckets(self.stored_sizes).to_json(), "keyspaces": now.to_json()},
            "codecs": codecs,
            "notes": self.notes,
            "recommendation": {"codec": self.recommended, "text": self.recommendation},
        }

    def render(self) -> list[str]:
        current = ", ".join(f"{k} {report.count(v)}" for k, v in self.current.items())
        lines = [
            f"Column {self.column}: {report.count(self.payloads)} values, "
            f"{report.sized(self.payload_bytes)} decompressed, {report.sized(sum(self.stored_sizes))} "
            f"stored now ({current})"
        ]
        for why, n in self.skipped.items():
            lines.append(f"  skipped {report.count(n)} values: {why}")
        unc = _capacity(self.payload_sizes)
        rows = []
        for name, _family, sizes in self._rows():
            total = sum(sizes)
            cap = _capacity(sizes)
            res = next((r for r in self.results if r.name == name), None)
            rows.append(
                [
                    name,
                    report.ratio(self.payload_bytes / total if total else None),
                    report.sized(total),
                    res.compress.text() if res else "-",
                    res.decompress.text() if res else "-",
                    report.count(cap.wcu),
                    report.count(cap.rcu),
                    _pct_saving(unc.wcu, cap.wcu) if name != "uncompressed" else "",
                    report.count(cap.over_quota),
                ]
            )
        lines.extend(
            report.table(
                rows,
                [
                    "codec",
                    "ratio",
                    "size",
                    "compress MB/s",
                    "decompress MB/s",
                    "WCU",
                    "RCU",
                    "WCU saved",
                    "> 1 MB",
                ],
                right=(1, 2, 3, 4, 5, 6, 7, 8),
            )
        )
        lines.append("")
        lines.append("  values per size bucket:")
        brows = [
            [name, *(report.count(n) for n in _buckets(sizes).counts)] for name, _f, sizes in self._rows()
        ]
        lines.extend(
            report.table(brows, ["codec", *capacity.BUCKET_LABELS], right=tuple(range(1, 7)), indent=4)
        )
        for note in self.notes:
            lines.append(f"  note: {note}")
        lines.append("")
        lines.append(f"  Recommendation: {self.recommendation}")
        return lines


def _buckets(sizes: Sequence[int]) -> capacity.Buckets:
    b = capacity.Buckets()
    for s in sizes:
        b.add(s)
    return b


def _capacity(sizes: Sequence[int]) -> capacity.Capacity:
    c = capacity.Capacity()
    for s in sizes:
        c.add(s)
    return c


def _pct_saving(before: int, after: int) -> str:
    s = capacity.saving(before, after)
    return "-" if s is None else f"{100 * s:.1f} %"


def advise_column(
    column: str,
    payloads: Sequence[bytes],
    stored_sizes: Sequence[int],
    current: dict[str, int],
    skipped: dict[str, int],
    budget: float = BUDGET_S,
    repetitions: int = REPETITIONS,
    step: Step | None = None,
) -> ColumnAdvice:
    """Every codec measured on the column's payloads; Ctrl-C (KeyboardInterrupt) stops the
    measuring and the advice covers the codecs measured before it (`interrupted`)."""
    sizes = [len(p) for p in payloads]
    advice = ColumnAdvice(column, len(payloads), sum(sizes), sizes, list(stored_sizes), current, skipped)
    if not payloads:
        advice.recommendation = "no values to measure"
        return advice
    codecs, missing = available_codecs()
    advice.notes.extend(missing)
    dictionaries = dictionary_formats()
    big = advice.payload_bytes > SLOW_LIMIT
    todo = [c for c in codecs if not (c.slow and big)]
    for codec in codecs:
        if codec.slow and big:
            advice.notes.append(
                f"{codec.name} skipped: the sample is over {SLOW_LIMIT >> 20} MiB (too slow to "
                "measure here; use SAMPLE to measure a smaller one)"
            )
    measured = 0
    try:
        for codec in todo:
            if step is not None:
                step(f"{codec.name} ({measured + 1} of {len(todo)})", measured / len(todo))
            advice.results.append(measure(codec, payloads, budget, repetitions))
            measured += 1
            fmt = dictionaries.get(codec.name)
            if fmt is not None:
                dict_result = with_dictionary(fmt, payloads, budget, repetitions)
                if isinstance(dict_result, str):
                    advice.notes.append(f"{fmt.label} + dictionary: {dict_result}")
                else:
                    advice.results.append(dict_result)
    except KeyboardInterrupt:
        advice.interrupted = True
        advice.notes.append(f"interrupted while measuring (Ctrl-C): {measured} of {len(todo)} codecs "
                            "measured")
    advice.recommended, advice.recommendation = recommend(advice)
    return advice


def recommend(advice: ColumnAdvice) -> tuple[str | None, str]:
    """One line: the best ratio among codecs fast enough for a request path, against what is stored."""
    if not advice.results:
        return None, "no codec could be measured"
    payload = advice.payload_bytes
    fast = [
        r
        for r in advice.results
        if r.compress.median >= FAST_COMPRESS and r.decompress.median >= FAST_DECOMPRESS
    ]
    pool = fast or advice.results
    best = max(pool, key=lambda r: (payload / r.total if r.total else 0, r.decompress.median))
    ratio = payload / best.total if best.total else 0
    if ratio < 1.1:
        return None, (
            f"do not compress: the best codec here ({best.name}) saves under 10 % "
            f"(ratio {ratio:.2f}); the payloads are already dense"
        )
    unc, now, mine = _capacity(advice.payload_sizes), _capacity(advice.stored_sizes), _capacity(best.sizes)
    text = (
        f"{best.name}: ratio {ratio:.2f}, {best.compress.median:,.0f} MB/s compress, "
        f"{best.decompress.median:,.0f} MB/s decompress here; "
        f"{_pct_saving(unc.wcu, mine.wcu)} fewer WCUs than uncompressed"
    )
    stored = sum(advice.stored_sizes)
    if stored and stored != payload:
        text += f", {_pct_saving(now.wcu, mine.wcu)} fewer than stored now (ratio {payload / stored:.2f})"
    if not fast:
        text += f" (no codec reached {FAST_COMPRESS:.0f}/{FAST_DECOMPRESS:.0f} MB/s here)"
    if "dict" in best.name:
        plain = next((r for r in advice.results if r.name == best.name.split(" + ")[0]), None)
        if plain is not None and plain.total:
            text += (
                f". The application must store the dictionary to read the values back; without one, "
                f"{plain.name} gives ratio {payload / plain.total:.2f}"
            )
    # A much smaller but slower option is worth a mention for write-once data.
    denser = max(advice.results, key=lambda r: payload / r.total if r.total else 0)
    if denser is not best and denser.total and best.total / denser.total >= 1.1:
        text += (
            f". Smallest: {denser.name} (ratio {payload / denser.total:.2f}, "
            f"{denser.compress.median:,.0f} MB/s compress) for data written once and read rarely"
        )
    return best.name, text


def peeled(value: bytes, mode: str, cap: int) -> tuple[str, str, bool, bytes]:
    """A value's (status, chain, exact, payload) by a value engine of its own: what ADVISE takes of
    a value decoded in a memory-limited worker process (insight.isolate), where the view's tree
    would not be worth sending back."""
    from cqlsh_ext.payload.engine import ValueEngine

    return _peeled(ValueEngine(mode, cap).view(value))


def _peeled(view: Any) -> tuple[str, str, bool, bytes]:
    status, chain, _size, exact, _reason = measured(view)
    return status, chain, exact, payload_of(view)


class AdviseSample:
    """The payloads ADVISE measures: the first `size` values per payload column, `max_bytes` in all.

    A blob value is decoded by the value engine (one per column) down to its payload; a text
    value's payload is its UTF-8 bytes, stored uncompressed (chain "text"). Values that cannot be
    decoded, or were cut at the output cap, have no payload to re-compress: they are counted as
    skipped.
    """

    def __init__(self, size: int, mode: str, cap: int, max_bytes: int = ADVISE_SAMPLE_BYTES) -> None:
        from cqlsh_ext.payload.engine import Engines

        self.size, self.mode, self.cap, self.max_bytes = size, mode, cap, max_bytes
        self.total = 0
        self.columns: dict[str, tuple[list[bytes], list[int], dict[str, int], dict[str, int]]] = {}
        self.engines = Engines(mode, cap, {})

    def add(self, column: str, value: bytes | str) -> None:
        """One payload as cql.types.payload_extractor gives it: a blob's bytes, or a text's str."""
        payloads, stored, current, skipped = self.columns.setdefault(column, ([], [], {}, {}))
        if len(payloads) >= self.size or self.total >= self.max_bytes:
            return
        p: tuple[str, str, bool, bytes] | None  # (status, chain, exact, payload)
        label = None
        try:
            if isinstance(value, str):  # a text column's: its UTF-8 bytes, stored uncompressed
                data = value.encode("utf-8")
                p, label = (PLAIN, TEXT_LABEL, True, data), TEXT_LABEL
                stored_size = len(data)
            elif isolate.needs_worker(value, self.mode):  # a codec that needs a worker: memory-limited
                ok, result = isolate.call(peeled, value, self.mode, self.cap)
                p = result if ok else None
                stored_size = len(value)
            else:
                p = _peeled(self.engines(column).view(value))
                stored_size = len(value)
        except Exception:  # the last resort: one value that cannot be read is one skipped value
            p = None
        if p is None or p[0] == UNDECODABLE or not p[2]:
            why = UNDECODABLE if p is None or p[0] == UNDECODABLE else "cut at the output cap"
            skipped[why] = skipped.get(why, 0) + 1
            return
        status, chain, _exact, payload = p
        payloads.append(payload)
        stored.append(stored_size)
        label = label or (chain if status == COMPRESSED else status)
        current[label] = current.get(label, 0) + 1
        self.total += len(payload)

    @property
    def full(self) -> bool:
        return (
            self.total >= self.max_bytes
            or bool(self.columns)
            and all(len(c[0]) >= self.size for c in self.columns.values())
        )

    def advise(self, budget: float = BUDGET_S, repetitions: int = REPETITIONS,
               step: Step | None = None) -> list[ColumnAdvice]:
        """Each column's advice; after Ctrl-C the columns not reached are listed unmeasured."""
        out: list[ColumnAdvice] = []
        columns = list(self.columns.items())
        for n, (name, (payloads, stored, current, skipped)) in enumerate(columns):
            if out and out[-1].interrupted:
                unmeasured = ColumnAdvice(name, len(payloads), sum(len(p) for p in payloads),
                                          [len(p) for p in payloads], list(stored), current, skipped)
                unmeasured.interrupted = True
                unmeasured.recommendation = "not measured: interrupted (Ctrl-C)"
                out.append(unmeasured)
                continue

            def column_step(what: str, done: float, name: str = name, n: int = n) -> None:
                assert step is not None
                step(f"{name}: {what}" if len(columns) > 1 else what, (n + done) / len(columns))

            result = advise_column(name, payloads, stored, current, skipped, budget, repetitions,
                                   column_step if step is not None else None)
            if self.total >= self.max_bytes:
                result.notes.append(f"the sample stopped at {self.max_bytes >> 20} MiB of payloads")
            out.append(result)
        return out


@dataclass
class Advice:
    query: str
    columns: list[ColumnAdvice]
    rows: int
    elapsed: float = 0.0
    #: Ctrl-C while the sample was read (the sample holds the rows read before it).
    interrupted: bool = False
    error: str | None = None

    @property
    def measuring_interrupted(self) -> bool:
        """Ctrl-C while the codecs were measured (the columns say how far each got)."""
        return any(c.interrupted for c in self.columns)

    def to_json(self) -> dict[str, object]:
        return {
            "command": "COMPRESSION ADVISE",
            "query": self.query,
            "rows": self.rows,
            "complete": not self.interrupted and not self.measuring_interrupted and self.error is None,
            "interrupted": self.interrupted or self.measuring_interrupted,
            "interrupted_while": ("reading the sample" if self.interrupted
                                  else "measuring" if self.measuring_interrupted else None),
            "error": self.error,
            "elapsed_s": round(self.elapsed, 3),
            "speed_unit": "MB/s = 10^6 bytes of decompressed data per second, median of the timed runs",
            "columns": [c.to_json() for c in self.columns],
        }

    def render(self) -> list[str]:
        lines = [
            f"COMPRESSION ADVISE: sample of {report.count(self.rows)} rows, measured in {self.elapsed:.1f} s",
            "  speeds in MB/s of decompressed data on this machine: median of timed runs after a warm-up, "
            "± half the spread between the fastest and slowest run",
            "  WCU/RCU count each value as one row",
        ]
        if self.interrupted:
            lines.append("  INTERRUPTED: the sample holds the rows read before Ctrl-C.")
        if self.measuring_interrupted:
            lines.append("  INTERRUPTED while measuring: the figures cover the codecs measured before "
                         "Ctrl-C.")
        if self.error:
            lines.append(f"  STOPPED BY AN ERROR: {self.error}; the sample holds the rows read before it.")
        if not self.columns:
            lines.append("  No blob or text values in the result.")
        for col in self.columns:
            lines.append("")
            lines.extend(col.render())
        return lines
