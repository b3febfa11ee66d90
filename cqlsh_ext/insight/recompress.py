"""One candidate codec of COMPRESSION ADVISE run over a sample: the compressors the codec modules
declare (the Compressors capability, codecs.capabilities, in advise_priority order), a dictionary
trained by two-fold cross-fitting where the codec takes one (Dictionaries), and the measurement
itself (an untimed warm-up that checks the round trip, then timed passes within a time budget;
insight/advise.py reads them).
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from cqlsh_ext.codecs.base import Container
from cqlsh_ext.codecs.capabilities import Compressors, Dictionaries, Writer

#: Timed passes per codec at most, and the time they may take together (seconds) after the warm-up.
REPETITIONS = 7
BUDGET_S = 1.0


@dataclass
class Codec:
    name: str
    family: str
    #: (payload) -> compressed, or (payload, index) -> compressed when `indexed`.
    compress: Callable[..., Any]
    decompress: Callable[..., Any]
    slow: bool = False
    note: str | None = None
    #: compress/decompress take the value's index as a second argument (cross-fitted dictionaries).
    indexed: bool = False
    #: Reading the values back needs a trained dictionary the application must keep.
    dictionary: bool = False


def available_codecs() -> tuple[list[Codec], list[str]]:
    """Every codec we can run here, and notes on the ones that are missing: the compressors of the
    formats that declare an ADVISE priority (Compressors.advise_priority), in that order."""
    from cqlsh_ext.codecs import registry

    codecs: list[Codec] = []
    missing: list[str] = []
    advised = [f for f in registry.all_containers()
               if isinstance(f, Compressors) and f.advise_priority is not None]
    for fmt in sorted(advised, key=lambda f: f.advise_priority or 0):
        try:
            compressors = fmt.compressors()
        except ImportError:
            lib = f" ({fmt.library})" if fmt.library and fmt.library != fmt.codec else ""
            missing.append(f"{fmt.codec}{lib} not installed")
            continue
        codecs.extend(Codec(c.name, c.family, c.compress, c.decompress, slow=c.slow) for c in compressors)
    return codecs, missing


def dictionary_formats() -> dict[str, Container]:
    """{compressor name: format} for the formats measured with a dictionary too, after that one."""
    from cqlsh_ext.codecs import registry

    return {
        f"{f.label} {f.dictionary_level}": f
        for f in registry.all_containers()
        if isinstance(f, Dictionaries) and isinstance(f, Compressors) and f.advise_priority is not None}


@dataclass
class Speed:
    runs: list[float]

    def to_json(self) -> dict[str, object]:
        if not self.runs:
            return {"median": None, "min": None, "max": None, "runs": 0, "spread": None}
        med = statistics.median(self.runs)
        return {"median": round(med, 1), "min": round(min(self.runs), 1), "max": round(max(self.runs), 1),
                "runs": len(self.runs),
                "spread": round((max(self.runs) - min(self.runs)) / med, 4) if med else None}

    @property
    def median(self) -> float:
        return statistics.median(self.runs) if self.runs else 0.0

    @property
    def noise(self) -> float:
        """Half the spread between the fastest and the slowest run, in per cent of the median (the
        ± text() shows); 0 with fewer than two runs."""
        med = self.median
        if len(self.runs) < 2 or not med:
            return 0.0
        return 50 * (max(self.runs) - min(self.runs)) / med

    def text(self) -> str:
        if not self.runs:
            return "-"
        med = self.median
        if len(self.runs) == 1:
            return f"{med:,.0f} (1 run)"
        return f"{med:,.0f} ±{self.noise:.0f} %"


@dataclass
class Result:
    name: str
    family: str
    sizes: list[int]
    compress: Speed
    decompress: Speed
    note: str | None = None
    #: Reading the values back needs a dictionary the application must keep (Codec.dictionary).
    dictionary: bool = False

    @property
    def total(self) -> int:
        return sum(self.sizes)


def _stopped(stop: Callable[[], bool] | None) -> None:
    """Ctrl-C was pressed (`stop()`): the measuring ends here (advise.advise_column catches it)."""
    if stop is not None and stop():
        raise KeyboardInterrupt


def measure(
    codec: Codec, payloads: Sequence[bytes], budget: float = BUDGET_S, repetitions: int = REPETITIONS,
    stop: Callable[[], bool] | None = None,
) -> Result:
    """Warm-up (sizes, round-trip check), then timed passes within `budget` seconds; `stop` is
    asked between values in the warm-up and between timed passes (a pass is short: the budget's
    share), so Ctrl-C ends a codec's measuring within one pass."""
    total = sum(len(p) for p in payloads)
    compress, decompress = codec.compress, codec.decompress
    t0 = time.perf_counter()
    packed = []
    for k, p in enumerate(payloads):
        packed.append(compress(p, k) if codec.indexed else compress(p))
        if k % 64 == 63:
            _stopped(stop)
    t1 = time.perf_counter()
    for k, (p, c) in enumerate(zip(payloads, packed, strict=True)):
        if bytes(decompress(c, k) if codec.indexed else decompress(c)) != p:
            raise ValueError(f"{codec.name}: round trip failed")
    per_pass = t1 - t0 + time.perf_counter() - t1
    runs = max(1, min(repetitions, int(budget / per_pass) if per_pass > 0 else repetitions))
    comp: list[float] = []
    decomp: list[float] = []
    for _ in range(runs):
        _stopped(stop)
        # Plain loops without per-call wrappers: the figure is the codec's, not ours.
        if codec.indexed:
            start = time.perf_counter()
            for k, p in enumerate(payloads):
                compress(p, k)
            mid = time.perf_counter()
            for k, c in enumerate(packed):
                decompress(c, k)
            end = time.perf_counter()
        else:
            start = time.perf_counter()
            for p in payloads:
                compress(p)
            mid = time.perf_counter()
            for c in packed:
                decompress(c)
            end = time.perf_counter()
        comp.append(total / max(mid - start, 1e-9) / 1e6)
        decomp.append(total / max(end - mid, 1e-9) / 1e6)
    return Result(codec.name, codec.family, [len(c) for c in packed], Speed(comp), Speed(decomp), codec.note,
                  codec.dictionary)


def dictionary_name(fmt: Container) -> str:
    """The report's name of `fmt` measured with a trained dictionary ('zstd 19 + dict')."""
    level = fmt.dictionary_level if isinstance(fmt, Dictionaries) else ""
    return f"{fmt.label} {level} + dict"


def dictionary_size(payloads: Sequence[bytes]) -> int:
    """The size of the dictionaries ADVISE trains: a twentieth of the sample, 1 to 16 KiB."""
    return max(1024, min(16 * 1024, sum(len(p) for p in payloads) // 20))


def trained_dictionary(payloads: Sequence[bytes]) -> tuple[Container, bytes]:
    """SAVE DICTIONARY's: the dictionary of the size ADVISE measured, trained on the whole sample
    (ADVISE's are trained on halves), as a file holds it. ValueError when it cannot be trained."""
    formats = list(dictionary_formats().values())
    if not formats:
        raise ValueError("no codec here trains dictionaries")
    fmt = formats[0]
    if len(payloads) < 16:
        raise ValueError("too few values to train a dictionary (needs 16)")
    assert isinstance(fmt, Dictionaries)
    return fmt, fmt.trained_dictionary(list(payloads), dictionary_size(payloads))


def hashed_dictionary(payloads: Sequence[bytes]) -> str:
    """What the dictionary SAVE DICTIONARY would write does as an RFC 9842 `dcz` value's raw
    dictionary, in one sentence: the SHA-256 such a value carries (encode('dcz:dict=...')), and
    the ratio measured with it as raw content, two-fold cross-fitted as with_dictionary (each value
    compressed at level 3 with the dictionary trained on the other half, plus the 40-byte header).
    ValueError when no dictionary can be trained."""
    import hashlib

    from cqlsh_ext.codecs import registry

    fmt, whole = trained_dictionary(payloads)
    halves = (payloads[0::2], payloads[1::2])
    if min(len(h) for h in halves) < 8:
        raise ValueError("too few values to train a dictionary (needs 16)")
    assert isinstance(fmt, Dictionaries)
    size = dictionary_size(payloads)
    dcz = registry.written_by("dcz")
    assert isinstance(dcz, Writer)
    trained = [fmt.trained_dictionary(list(half), size) for half in halves]
    stored = sum(len(dcz.encode(p, 3, trained[1 - k % 2])) for k, p in enumerate(payloads))
    ratio = sum(len(p) for p in payloads) / stored if stored else 0.0
    return (f"dcz (RFC 9842) with the dictionary SAVE DICTIONARY writes ({len(whole):,} bytes) as raw "
            f"content: ratio {ratio:.2f} (measured as zstd 3 + dict is, with the 40-byte header); "
            f"its values carry SHA-256 {hashlib.sha256(whole).hexdigest()}")


def with_dictionary(
    fmt: Container, payloads: Sequence[bytes], budget: float = BUDGET_S, repetitions: int = REPETITIONS,
    stop: Callable[[], bool] | None = None,
) -> Result | str:
    """`fmt` with a trained dictionary at its dictionary_level, two-fold cross-fitted; a reason
    string when it cannot be trained."""
    if not isinstance(fmt, Dictionaries):
        return "no dictionaries in this format"
    level = fmt.dictionary_level
    halves = (payloads[0::2], payloads[1::2])
    if min(len(h) for h in halves) < 8:
        return "too few values to train a dictionary (needs 16)"
    size = dictionary_size(payloads)
    trained = []
    try:
        for half in halves:
            _stopped(stop)
            trained.append(fmt.train_dictionary(list(half), size, level))
    except ValueError as err:
        return f"dictionary training failed: {err}"
    # Value k (in half k % 2) is compressed with the dictionary trained on the other half.
    by_value_c = [trained[1 - k % 2][0] for k in range(len(payloads))]
    by_value_d = [trained[1 - k % 2][1] for k in range(len(payloads))]
    codec = Codec(
        dictionary_name(fmt),
        fmt.codec,
        lambda p, k: by_value_c[k](p),
        lambda c, k: by_value_d[k](c),
        note=f"{fmt.label} {level} + dict: {size // 1024} KiB dictionaries, each value compressed with "
        "the one trained on the other half of the sample",
        indexed=True,
        dictionary=True)
    return measure(codec, payloads, budget, repetitions, stop)
