"""COMPRESSION ADVISE: re-compress a sample's payloads with every available codec, measured here.

For each codec and level: the compressed sizes (so the ratio, the bucket distribution and the
Keyspaces capacity units it would give), and compress / decompress speed in MB/s (10^6 bytes of
decompressed data per second) on this machine. The measurement is one untimed warm-up pass (which
also checks the round trip) and then several timed passes over the whole sample; the median is
reported with the spread (max - min) / median, so the machine's noise is visible. Slow codecs get
fewer passes (a time budget per codec), never fewer than one.

The candidates are the compressors the codec modules declare (the Compressors capability, in
advise_priority order). A format with dictionaries (the Dictionaries capability) is also measured with
one, trained by two-fold cross-fitting: the dictionary that compresses a value was trained on the
other half of the sample, never on the value itself.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable, Collection, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from cqlsh_ext.codecs.base import Container
from cqlsh_ext.common.text import Line
from cqlsh_ext.insight import isolate, report, verdict
from cqlsh_ext.insight.recompress import (
    BUDGET_S,
    REPETITIONS,
    Codec,
    Result,
    available_codecs,
    dictionary_formats,
    dictionary_name,
    hashed_dictionary,
    measure,
    with_dictionary,
)
from cqlsh_ext.insight.view_measures import COMPRESSED, STORED, measured
from cqlsh_ext.payload.measures import STATUS_TITLES
from cqlsh_ext.payload.places import column_place
from cqlsh_ext.payload.unwrap import TEXT_LABEL
from cqlsh_ext.payload.view import FAILED, KIND_TITLES
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
#: Values whose median is at most this many bytes are "too small to gain": a codec's header and
#: framing outweigh what it can find to save in them.
SMALL_VALUE = 64
#: Speeds whose runs differ by more than ± this many per cent (of their median) are noisy: the
#: machine was busy, and the report says so before its figures are read.
NOISY = 25.0
#: What is stored now is named by its most frequent containers, this many; the rest are counted.
NAMED_CONTAINERS = 3

#: Why a value that a format failed to decode is left out of the sample (its payload is unknown).
SKIPPED_FAILED = f"undecodable: {KIND_TITLES[FAILED]}"

#: Told what is measured next: (what, share of the measuring done so far); a progress line.
Step = Callable[[str, float], None]
#: True once the measuring is to stop (Ctrl-C): checked between codecs and between their passes.
Stop = Callable[[], bool]


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
    #: What the recommendation rests on, in sentences (speeds, the dictionary, a smaller option).
    reasons: list[str] = field(default_factory=list)
    #: Ctrl-C while measuring: the settings measured before it are the results.
    interrupted: bool = False
    #: Settings measured (a codec, or a codec with a dictionary) and how many there were to measure.
    measured: int = 0
    planned: int = 0
    #: How units are priced and what the user pays (the verdict's terms).
    pricing: capacity.Pricing = field(default_factory=capacity.Pricing)

    def _rows(self) -> list[tuple[str, str, list[int]]]:
        """(name, family, sizes) of the reference rows and every codec."""
        base = [("uncompressed", "", self.payload_sizes), ("stored now", "", self.stored_sizes)]
        return base + [(r.name, r.family, r.sizes) for r in self.results]

    def to_json(self) -> dict[str, object]:
        unc = _capacity(self.payload_sizes)
        now = _capacity(self.stored_sizes)
        pricing = self.pricing
        codecs = []
        for key, r in zip(_keys(), self.results, strict=False):
            cap = _capacity(r.sizes)
            codecs.append(
                {"codec": r.name, "family": r.family, "chart_key": key, "dictionary": r.dictionary,
                 "compressed_bytes": r.total,
                 "ratio": round(self.payload_bytes / r.total, 4) if r.total else None,
                 "compress_mb_s": r.compress.to_json(), "decompress_mb_s": r.decompress.to_json(),
                 "buckets": _buckets(r.sizes).to_json(), "keyspaces": cap.to_json(pricing),
                 "wcu_saving_vs_uncompressed": capacity.saving(unc.wcu, cap.wcu),
                 "wcu_saving_vs_stored": capacity.saving(now.wcu, cap.wcu),
                 "rcu_saving_vs_uncompressed": capacity.saving(unc.rcu, cap.rcu),
                 "rcu_saving_vs_stored": capacity.saving(now.rcu, cap.rcu),
                 "storage_saving_vs_stored": capacity.saving(sum(self.stored_sizes), r.total), "note": r.note}
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
            "uncompressed": {"buckets": _buckets(self.payload_sizes).to_json(),
                             "keyspaces": unc.to_json(pricing)},
            "stored_now": {"buckets": _buckets(self.stored_sizes).to_json(),
                           "keyspaces": now.to_json(pricing)},
            "codecs": codecs,
            "notes": self.notes,
            "recommendation": {"codec": self.recommended, "text": self.recommendation,
                               "reasons": self.reasons}}

    @property
    def codec_words(self) -> str:
        """How the verdict names the codecs it weighed: every one, or those measured before Ctrl-C."""
        return "codec measured" if self.interrupted else "codec"

    def verdict(self, named: bool) -> str:
        """The column's verdict line (`named`: the report has several columns); when Ctrl-C stopped
        the measuring, what it rests on."""
        whose = f" ({self.column})" if named else ""
        if self.interrupted and self.planned:
            whose += f", from the {self.measured} of {self.planned} codecs measured"
        text = self.recommendation
        return f"{verdict.LEAD[:-1]}{whose}: {text}" + ("" if text.endswith(".") else ".")

    def opening(self, named: bool) -> list[Line]:
        """The verdict and, under it, what it rests on."""
        if not self.recommendation:
            return []
        return [self.verdict(named), *(f"  {reason}" for reason in self.reasons)]

    def render(self) -> list[Line]:
        current = main_containers(self.current, counts=True)
        lines: list[Line] = [
            f"Column {self.column}: {report.count(self.payloads)} values, "
            f"{report.sized(self.payload_bytes)} decompressed, {report.sized(sum(self.stored_sizes))} "
            f"stored now ({current})"]
        for why, n in self.skipped.items():
            lines.append(f"  skipped {report.count(n)} values: {why}")
        unc = _capacity(self.payload_sizes)
        rows = []
        for name, _family, sizes in self._rows():
            total = sum(sizes)
            cap = _capacity(sizes)
            res = next((r for r in self.results if r.name == name), None)
            rows.append(
                [name, report.ratio(self.payload_bytes / total if total else None), report.sized(total),
                 res.compress.text() if res else "-", res.decompress.text() if res else "-",
                 report.count(cap.wcu), capacity.units(self.pricing.reads(cap.rcu)),
                 capacity.saving_text(unc.wcu, cap.wcu) if name != "uncompressed" else "",
                 report.count(cap.over_quota)])
        header = ["codec", "ratio", "size", "compress MB/s", "decompress MB/s", "WCU",
                  f"RCU ({self.pricing.consistency})", "WCU saved", "> 1 MB"]
        if all(row[-1] == "0" for row in rows):  # no value over the row quota: said once, below
            header, rows = header[:-1], [row[:-1] for row in rows]
        lines.append(report.table(rows, header, right=range(1, len(header))))
        if len(header) == 8:
            lines.append("  no value is over the 1 MB row quota, compressed or not")
        lines.extend(self._chart())
        lines.extend(self._buckets())
        for note in self.notes:
            lines.append(f"  note: {note}")
        return lines

    def _chart(self) -> list[Line]:
        """Ratio against compress and decompress speed, a letter a codec: the trade-off at a glance."""
        measured = [(k, r) for k, r in zip(_keys(), self.results, strict=False) if r.total]
        if len(measured) < 2:
            return []
        panels = [
            report.Panel(f"ratio against {side} MB/s ({use})",
                         [report.Point(k, getattr(r, side).median, self.payload_bytes / r.total)
                          for k, r in measured])
            for side, use in (("compress", "writes"), ("decompress", "reads"))]
        legend = ", ".join(f"{k} {r.name}" for k, r in measured)
        return ["", report.Scatter(panels, "MB/s, log scale", "ratio"), f"  {legend}"]

    def _buckets(self) -> list[Line]:
        """Values per Keyspaces size bucket, for the buckets some codec has values in; one line when
        every codec keeps every value in one bucket."""
        counted = [(name, _buckets(sizes).counts) for name, _f, sizes in self._rows()]
        used = [k for k in range(len(capacity.BUCKET_LABELS)) if any(c[k] for _, c in counted)]
        if len(used) <= 1:
            where = capacity.BUCKET_LABELS[used[0]] if used else "-"
            return ["", f"  values per size bucket: all {report.count(self.payloads)} in {where}, with every "
                    f"{self.codec_words} and uncompressed"]
        rows = [[name, *(report.count(c[k]) for k in used)] for name, c in counted]
        return ["", "  values per size bucket:",
                report.table(rows, ["codec", *(capacity.BUCKET_LABELS[k] for k in used)],
                             right=tuple(range(1, len(used) + 1)), indent=4)]


def _keys() -> Iterator[str]:
    """The letters that mark codecs on the chart: a-z, then A-Z."""
    yield from "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"


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


def advise_column(column: str, payloads: Sequence[bytes], stored_sizes: Sequence[int],
                  current: dict[str, int], skipped: dict[str, int], budget: float = BUDGET_S,
                  repetitions: int = REPETITIONS, step: Step | None = None,
                  pricing: capacity.Pricing | None = None, stop: Stop | None = None) -> ColumnAdvice:
    """Every codec measured on the column's payloads; Ctrl-C (`stop()` turning true, or a
    KeyboardInterrupt) stops the measuring and the advice covers the codecs measured before it
    (`interrupted`)."""
    sizes = [len(p) for p in payloads]
    advice = ColumnAdvice(column, len(payloads), sum(sizes), sizes, list(stored_sizes), current, skipped,
                          pricing=pricing or capacity.Pricing())
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
                "measure here; use SAMPLE to measure a smaller one)")
    # What is measured, in order: each codec, and after a codec that takes a dictionary the same
    # with one (a row of its own in the report, so a step of its own in the count).
    steps: list[tuple[Codec, Container | None]] = []
    for codec in todo:
        steps.append((codec, None))
        if codec.name in dictionaries:
            steps.append((codec, dictionaries[codec.name]))
    measured = 0
    advice.planned = len(steps)
    try:
        for codec, fmt in steps:
            if stop is not None and stop():
                raise KeyboardInterrupt
            if step is not None:
                what = codec.name if fmt is None else dictionary_name(fmt)
                step(f"{what} ({measured + 1} of {len(steps)})", measured / len(steps))
            if fmt is None:
                advice.results.append(measure(codec, payloads, budget, repetitions, stop))
            else:
                dict_result = with_dictionary(fmt, payloads, budget, repetitions, stop)
                if isinstance(dict_result, str):
                    advice.notes.append(f"{fmt.label} + dictionary: {dict_result}")
                else:
                    advice.results.append(dict_result)
                    try:
                        advice.notes.append(hashed_dictionary(payloads))
                    except ValueError as err:
                        advice.notes.append(f"dcz: {err}")
            measured += 1
            advice.measured = measured
    except KeyboardInterrupt:
        advice.interrupted = True
        advice.notes.append(f"interrupted while measuring (Ctrl-C): {measured} of {len(steps)} codecs "
                            "measured")
    advice.recommended, advice.recommendation, advice.reasons = recommend(advice)
    return advice


def recommend(advice: ColumnAdvice) -> tuple[str | None, str, list[str]]:
    """The column's verdict: the codec to write with (None: keep what is stored, or do not
    compress), the verdict itself, and the reasons behind it, in what the user pays
    (advice.pricing; verdict.py).

    Candidates are the codecs fast enough for a request path here (FAST_COMPRESS, FAST_DECOMPRESS;
    all of them when none is), ranked by their saving against what is stored now on the measure
    paid: write units, then read units, then storage on Keyspaces; storage on Cassandra. A
    dictionary is chosen only when it saves verdict.WORTH more of what is paid than the best codec
    without one (on Keyspaces: capacity units; storage alone does not pay for keeping it). A change
    that saves nothing on the measure paid is not recommended; one that saves storage but no units
    on Keyspaces says so; one that saves less than verdict.WORTH of every measure paid is not worth
    the change."""
    if not advice.results:
        return None, "no codec could be measured", []
    pricing, payload = advice.pricing, advice.payload_bytes
    codec = advice.codec_words  # 'codec measured' after Ctrl-C: the verdict says no more than that
    fast = [r for r in advice.results
            if r.compress.median >= FAST_COMPRESS and r.decompress.median >= FAST_DECOMPRESS]
    pool = [r for r in fast or advice.results if r.total]
    if not pool:
        return None, "no codec could be measured", []
    now, stored = _capacity(advice.stored_sizes), sum(advice.stored_sizes)

    def change(r: Result) -> verdict.Change:
        mine = _capacity(r.sizes)
        return verdict.Change((now.wcu, mine.wcu), (now.rcu, mine.rcu), (stored, r.total))

    def rank(r: Result) -> tuple[float, ...]:
        return (*change(r).paid(pricing), r.decompress.median)

    chosen, reasons = _choose(advice, pool, change, rank)
    dense = _dense_verdict(advice, chosen, codec)
    if dense is not None:
        return None, dense, []
    moved = change(chosen)
    against = ("against uncompressed" if stored == payload
               else f"against what is stored now ({main_containers(advice.current)})")
    unc = _capacity(advice.payload_sizes)
    floor = verdict.floor_reason(len(advice.payload_sizes), unc.wcu, unc.rcu, "value")
    reasons.insert(0, _speed_reason(chosen, fast, codec))
    if pricing.keyspaces and not moved.saves_units:
        why = floor or f"what is stored now already costs as few units as any {codec}"
        if moved.storage_saving < verdict.WORTH:
            return None, (f"keep what is stored: no {codec} saves capacity units ({why}) nor 10 % of "
                          f"storage (best: {chosen.name}, "
                          f"{verdict.share(moved.storage_saving, 'storage')})"), reasons[1:]
        text = f"{chosen.name} {verdict.saves(moved, pricing)}: {why}"
    elif not pricing.keyspaces and moved.storage_saving < verdict.WORTH:
        return None, (f"keep what is stored: no {codec} fast enough for a request path stores 10 % less "
                      f"(best: {chosen.name}, {verdict.share(moved.storage_saving, 'storage')})"), reasons[1:]
    elif max(moved.wcu_saving, moved.rcu_saving, moved.storage_saving) < verdict.WORTH:
        saves = verdict.saves(moved, pricing).removeprefix("saves ")
        return None, (f"keep what is stored: no {codec} fast enough for a request path saves 10 % of what "
                      f"you pay (best: {chosen.name}, {saves})"), reasons[1:]
    else:
        text = f"{chosen.name} {verdict.saves(moved, pricing)} {against}"
    smallest = _smallest_reason(advice, chosen)
    if smallest is not None:
        reasons.append(smallest)
    return chosen.name, text, reasons


def _choose(advice: ColumnAdvice, pool: list[Result], change: Callable[[Result], verdict.Change],
            rank: Callable[[Result], tuple[float, ...]]) -> tuple[Result, list[str]]:
    """The codec recommend() weighs (the best of `pool` by `rank`, with a dictionary only when it
    saves verdict.WORTH more than without), and the reason given about the dictionary, if any."""
    reasons: list[str] = []
    # The best codec without a dictionary, the one a dictionary is weighed against: a fast one, or
    # the best of all when only a dictionary is fast here (a busy machine can make it so).
    plain = ([r for r in pool if not r.dictionary]
             or [r for r in advice.results if not r.dictionary and r.total])
    best = max(plain or pool, key=rank)
    chosen = best
    with_dict = max((r for r in pool if r.dictionary), key=rank, default=None)
    if with_dict is not None and with_dict is not best:
        extra, measure = _dictionary_gain(change(with_dict), change(best), advice.pricing)
        if extra >= verdict.WORTH:
            chosen = with_dict
            reasons.append(f"The application must keep the dictionary to read the values back; without one, "
                           f"{best.name} {verdict.saves(change(best), advice.pricing)}.")
        else:
            more = f"only {report.saved(extra)} more" if extra >= verdict.NOTHING else "no more"
            reasons.append(f"A dictionary is not worth keeping: {with_dict.name} saves {more} {measure} than "
                           f"{best.name}, and the application would have to keep it to read the values back.")
    return chosen, reasons


def _dense_verdict(advice: ColumnAdvice, chosen: Result, codec: str) -> str | None:
    """recommend()'s "do not compress" when `chosen` saves under 10 % of the payload, else None."""
    ratio = advice.payload_bytes / chosen.total
    if ratio >= 1.1:
        return None
    median = statistics.median(advice.payload_sizes) if advice.payload_sizes else 0
    if ratio < 1 and median <= SMALL_VALUE:
        return (f"do not compress: the values are too small to gain (median {median:,.0f} B); "
                f"every {codec} makes them larger (best: {chosen.name}, ratio {ratio:.2f}): its "
                "header and framing outweigh what it saves")
    if ratio < 1:
        return (f"do not compress: every {codec} makes the values larger (best: {chosen.name}, "
                f"ratio {ratio:.2f}); the payloads are already dense")
    return (f"do not compress: the best {codec} here ({chosen.name}) saves under 10 % "
            f"(ratio {ratio:.2f}); the payloads are already dense")


def _speed_reason(chosen: Result, fast: list[Result], codec: str) -> str:
    """The first reason recommend() gives: how fast `chosen` ran here, and whether it is fast."""
    speed = (f"{chosen.name}: {chosen.compress.median:,.0f} MB/s compress, "
             f"{chosen.decompress.median:,.0f} MB/s decompress here")
    if not fast:
        speed += f"; no {codec} reached {FAST_COMPRESS:.0f}/{FAST_DECOMPRESS:.0f} MB/s here"
    elif chosen not in fast:
        speed += f", under {FAST_COMPRESS:.0f}/{FAST_DECOMPRESS:.0f} MB/s (only a dictionary reached it here)"
    return speed + "."


def _smallest_reason(advice: ColumnAdvice, chosen: Result) -> str | None:
    """A much smaller but slower codec than `chosen`, worth a mention for write-once data."""
    payload = advice.payload_bytes
    denser = max(advice.results, key=lambda r: payload / r.total if r.total else 0)
    if denser is not chosen and denser.total and chosen.total / denser.total >= 1.1:
        return (f"Smallest: {denser.name} (ratio {payload / denser.total:.2f}, "
                f"{denser.compress.median:,.0f} MB/s compress) for data written once and read rarely.")
    return None


def main_containers(current: dict[str, int], counts: bool = False) -> str:
    """What is stored now, by its NAMED_CONTAINERS most frequent containers (with their counts when
    `counts`), the rest counted: 'zstd, snappy/framed, gzip and 13 more', 'zstd 2, snappy/framed 1,
    gzip 1, 13 more with 13 values'."""
    ordered = sorted(current.items(), key=lambda item: -item[1])
    shown = ordered if len(ordered) <= NAMED_CONTAINERS + 1 else ordered[:NAMED_CONTAINERS]
    text = ", ".join(f"{name} {report.count(n)}" if counts else name for name, n in shown)
    rest = ordered[len(shown):]
    if rest and counts:
        text += f", {len(rest)} more with {report.count(sum(n for _, n in rest))} values"
    elif rest:
        text += f" and {len(rest)} more"
    return text


def _dictionary_gain(with_dict: verdict.Change, without: verdict.Change,
                     pricing: capacity.Pricing) -> tuple[float, str]:
    """How much more a dictionary saves than the best codec without one, and of what: capacity
    units on Keyspaces (the larger of write and read units), storage on Cassandra."""
    if pricing.keyspaces:
        return max((with_dict.wcu_saving - without.wcu_saving, "write units"),
                   (with_dict.rcu_saving - without.rcu_saving, "read units"))
    return with_dict.storage_saving - without.storage_saving, "storage"


def peeled(value: bytes, mode: str, cap: int) -> tuple[str, str, bool, bytes]:
    """A value's (status, chain, exact, payload) by a value engine of its own: what ADVISE takes of
    a value decoded in a memory-limited worker process (insight.isolate), where the view's tree
    would not be worth sending back."""
    from cqlsh_ext.payload.engine import ValueEngine

    return _peeled(ValueEngine(mode, cap).view(value))


def _peeled(view: Any) -> tuple[str, str, bool, bytes]:
    status, chain, _size, exact, _reason = measured(view)
    return status, chain, exact, view.data


class AdviseSample:
    """The payloads ADVISE measures: the first `size` values per payload column, `max_bytes` in all.

    A blob value is decoded by the value engine (one per column) down to its payload; a text
    value's payload is its UTF-8 bytes, stored uncompressed (chain "text"). Values that cannot be
    decoded, or were cut at the output cap, have no payload to re-compress: they are counted as
    skipped.
    """

    def __init__(self, size: int, mode: str, cap: int, max_bytes: int = ADVISE_SAMPLE_BYTES,
                 pricing: capacity.Pricing | None = None) -> None:
        from cqlsh_ext.payload.places import Decoding, Engines

        self.size, self.mode, self.cap, self.max_bytes = size, mode, cap, max_bytes
        self.pricing = pricing or capacity.Pricing()
        self.total = 0
        self.columns: dict[str, tuple[list[bytes], list[int], dict[str, int], dict[str, int]]] = {}
        self.engines = Engines(Decoding(mode, cap))

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
                p, label = (STORED, TEXT_LABEL, True, data), TEXT_LABEL
                stored_size = len(data)
            elif isolate.needs_worker(value, self.mode):  # a codec that needs a worker: memory-limited
                ok, result = isolate.call(peeled, value, self.mode, self.cap)
                p = result if ok else None
                stored_size = len(value)
            else:
                p = _peeled(self.engines(column_place(column)).view(value))
                stored_size = len(value)
        except Exception:  # the last resort: one value that cannot be read is one skipped value
            p = None
        if p is None or p[0] == FAILED or not p[2]:
            why = SKIPPED_FAILED if p is None or p[0] == FAILED else "cut at the output cap"
            skipped[why] = skipped.get(why, 0) + 1
            return
        status, chain, _exact, payload = p
        payloads.append(payload)
        stored.append(stored_size)
        label = label or (chain if status == COMPRESSED else STATUS_TITLES[status])
        current[label] = current.get(label, 0) + 1
        self.total += len(payload)

    @property
    def full(self) -> bool:
        return (
            self.total >= self.max_bytes
            or bool(self.columns)
            and all(len(c[0]) >= self.size for c in self.columns.values()))

    def advise(self, budget: float = BUDGET_S, repetitions: int = REPETITIONS,
               step: Step | None = None, stop: Stop | None = None) -> list[ColumnAdvice]:
        """Each column's advice; after Ctrl-C (`stop()`) the columns not reached are listed
        unmeasured."""
        out: list[ColumnAdvice] = []
        columns = list(self.columns.items())
        for n, (name, (payloads, stored, current, skipped)) in enumerate(columns):
            if out and out[-1].interrupted:
                unmeasured = ColumnAdvice(name, len(payloads), sum(len(p) for p in payloads),
                                          [len(p) for p in payloads], list(stored), current, skipped,
                                          pricing=self.pricing)
                unmeasured.interrupted = True
                unmeasured.recommendation = "not measured: interrupted (Ctrl-C)"
                out.append(unmeasured)
                continue

            def column_step(what: str, done: float, name: str = name, n: int = n) -> None:
                assert step is not None
                step(f"{name}: {what}" if len(columns) > 1 else what, (n + done) / len(columns))

            result = advise_column(name, payloads, stored, current, skipped, budget, repetitions,
                                   column_step if step is not None else None, self.pricing, stop)
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
    #: SAVE DICTIONARY: per column, the dictionary written (SavedDictionary) or why none was.
    saved: list[SavedDictionary] = field(default_factory=list)

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
            "speed_noise_percent": round(self.noise, 1),
            "speeds_noisy": self.noise > NOISY,
            "interrupted": self.interrupted or self.measuring_interrupted,
            "interrupted_while": ("reading the sample" if self.interrupted
                                  else "measuring" if self.measuring_interrupted else None),
            "error": self.error,
            "elapsed_s": round(self.elapsed, 3),
            "speed_unit": "MB/s = 10^6 bytes of decompressed data per second, median of the timed runs",
            "verdicts": {c.column: c.verdict(False) for c in self.columns if c.recommendation},
            "pricing": self.columns[0].pricing.to_json() if self.columns else None,
            "columns": [c.to_json() for c in self.columns],
            **({"saved_dictionaries": [d.to_json() for d in self.saved]} if self.saved else {})}

    @property
    def noise(self) -> float:
        """The largest ± (per cent of a median) between the runs of any speed measured."""
        return max([s.noise for c in self.columns for r in c.results for s in (r.compress, r.decompress)],
                   default=0.0)

    def render(self) -> list[Line]:
        lines: list[Line] = [
            f"COMPRESSION ADVISE: sample of {report.count(self.rows)} rows, measured in {self.elapsed:.1f} s"]
        # How the run ended comes before what it concludes: a verdict on part of the sample.
        if self.interrupted:
            lines.append("  INTERRUPTED: the sample holds the rows read before Ctrl-C.")
        if self.measuring_interrupted:
            lines.append("  INTERRUPTED while measuring: the figures cover the codecs measured before "
                         "Ctrl-C.")
        if self.error:
            lines.append(f"  STOPPED BY AN ERROR: {self.error}; the sample holds the rows read before it.")
        for col in self.columns:
            lines.extend(col.opening(len(self.columns) > 1))
        # What SAVE DICTIONARY wrote, with the ID the REWRITE it leads to needs: on the first screen,
        # not on the pager's last page (how to use it is said at the end).
        for saved in self.saved:
            lines.append(saved.heading())
        if self.noise > NOISY:
            lines.append(f"  NOISY SPEEDS: the runs of one codec differ by up to ±{self.noise:.0f} % (a busy "
                         "machine): the ratios and sizes hold, the speeds and the verdict's speed limits "
                         "may not; run it again on an idle machine to compare speeds.")
        if not self.columns:
            lines.append("  No blob or text values in the result.")
            return lines
        pricing = self.columns[0].pricing
        lines += [
            "",
            "  speeds in MB/s of decompressed data on this machine: median of timed runs after a warm-up, "
            "± half the spread between the fastest and slowest run",
            f"  WCU/RCU count each value as one row ({pricing.basis()})"]
        for col in self.columns:
            lines.append("")
            lines.extend(col.render())
        for saved in self.saved:
            if not saved.error:
                lines.append("")
                lines.extend(saved.render())
        return lines


@dataclass
class SavedDictionary:
    """SAVE DICTIONARY's file for one column: the dictionary trained on its whole sample."""

    column: str
    path: str
    codec: str = ""
    dict_id: int = 0
    size: int = 0
    #: Why no file was written (training failed, the file could not be written).
    error: str | None = None
    #: The column as keyspace.table.column, when the sample read a table's own column: the
    #: REWRITE that re-encodes it with the dictionary names it.
    target: str | None = None

    def to_json(self) -> dict[str, object]:
        return {"column": self.column, "file": self.path, "codec": self.codec or None,
                "dictionary_id": self.dict_id or None, "bytes": self.size or None, "error": self.error,
                "rewrite": self.rewrite}

    @property
    def rewrite(self) -> str | None:
        """The statement that re-encodes the column with this dictionary (a preview without CONFIRM)."""
        if self.error or not self.target:
            return None
        return f"COMPRESSION REWRITE {self.target} AS '{self.codec}:dict={self.dict_id}'"

    def heading(self) -> str:
        """One line near the report's top: the file, the ID, and the REWRITE that uses it."""
        if self.error:
            return f"  Dictionary for {self.column} not saved: {self.error}"
        then = f"; re-encode the column with it: {self.rewrite}" if self.rewrite else ""
        return (f"  Dictionary saved: {self.path}, {self.codec} dictionary ID {self.dict_id} ({self.size:,} "
                f"bytes, trained on the sample of {self.column}){then}")

    def render(self) -> list[str]:
        """How to use the dictionary saved (its heading() is near the report's top)."""
        return [
            f"  Dictionary {self.dict_id} ({self.path}):",
            "  This session reads the values written with it; later sessions: cqlsh-ext --dictionary "
            f"{self.path} (or [cqlsh_ext] dictionaries in cqlshrc, or CQLSH_EXT_DICTIONARIES).",
            f"  The application writes with it (zstd -D {self.path}; python-zstandard's "
            "ZstdCompressionDict; zstd-jni's ZstdDictCompress), and so does "
            f"encode('{self.codec}:dict={self.dict_id}', ...)."]


def save_dictionaries(sample: AdviseSample, path: str, table: str | None = None,
                      columns_of_table: Collection[str] = ()) -> list[SavedDictionary]:
    """SAVE DICTIONARY 'path': for each payload column of the sample, the dictionary trained on its
    whole sample written to `path` (one column) or `path.<column>` (several), and added to this
    process's store, so that what encode() writes with it reads back at once. `table`
    (keyspace.table) and its columns: the REWRITE each saved dictionary names."""
    import os

    from cassandra.metadata import protect_name

    from cqlsh_ext.codecs import dictionaries
    from cqlsh_ext.insight.recompress import trained_dictionary

    saved = []
    columns = [c for c, (payloads, *_rest) in sample.columns.items() if payloads]
    for column in columns:
        file = os.path.expanduser(path if len(columns) == 1 else f"{path}.{column}")
        try:
            fmt, data = trained_dictionary(sample.columns[column][0])
            entry = dictionaries.from_bytes(data, file)
            with open(file, "wb") as f:
                f.write(data)
            dictionaries.add(entry)
        except (ValueError, OSError) as err:  # DictionaryError is a ValueError
            why = err.strerror if isinstance(err, OSError) and err.strerror else str(err)
            saved.append(SavedDictionary(column, file, error=why))
            continue
        target = f"{table}.{protect_name(column)}" if table and column in columns_of_table else None
        saved.append(SavedDictionary(column, file, fmt.codec, entry.id, len(data), target=target))
    return saved
