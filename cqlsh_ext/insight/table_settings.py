"""COMPRESSION SETTINGS ks.table: the table's SSTable compression next to what its data looks like.

From the schema (system_schema.tables): compressor class, chunk_length_in_kb and the other options.
Measured on a sample of rows (`SELECT * ... LIMIT n`): row and partition sizes (values re-serialized
by the driver: the bytes the columns hold), the blob columns' client-side compression, and the ratio
the table's compressor gets on chunks of these rows at the table's chunk length, at a smaller one,
and with the blobs decompressed. That is an approximation of the SSTable (values only, no cell
headers or clustering prefixes), labelled as such. Advice is given only where a measured number
supports it; the rule behind each line is the one the counters article applies: a read decompresses
whole chunks, so partitions much smaller than a chunk pay for bytes they do not need.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, cast

from cqlsh_ext.common.text import Line
from cqlsh_ext.cql.types import columns_holding, extractor
from cqlsh_ext.insight import report, verdict
from cqlsh_ext.insight.view_measures import COMPRESSED, measured
from cqlsh_ext.payload.places import column_place
from cqlsh_ext.scanning.capacity import Pricing

if TYPE_CHECKING:
    from cqlsh_ext.payload.places import Engines

SETTINGS_SAMPLE_ROWS = 1000
DEFAULT_CHUNK_KB = 16  # Cassandra 4.0+
MIN_SUGGESTED_KB = 4


def compressor_for(options: dict[str, str]) -> tuple[str, Callable[[bytes], int] | None]:
    """(short name, chunk -> compressed size) for the table's compressor; None when off or unknown."""
    if str(options.get("enabled", "true")).lower() == "false" or not options.get("class"):
        return "none", None
    name = options["class"].rsplit(".", 1)[-1]
    from cqlsh_ext.codecs import registry  # the format whose TableCompressor names the class writes it
    from cqlsh_ext.codecs.capabilities import TableCompressor

    fmt = next((fmt for fmt in registry.all_containers()
                if isinstance(fmt, TableCompressor) and fmt.cassandra_class == name), None)
    if fmt is None:
        return name, None
    compress = fmt.table_compressor(options)
    return name, lambda b: len(compress(b))


def chunked_ratio(
    rows: Sequence[bytes], chunk: int, compress: Callable[[bytes], int], min_ratio: float = 0.0
) -> float | None:
    """Ratio of `rows` laid end to end and compressed in `chunk`-byte pieces, as an SSTable would be
    (a chunk that compresses worse than min_compress_ratio is kept raw)."""
    raw = out = 0
    buf = bytearray()

    def flush(piece: bytes) -> None:
        nonlocal raw, out
        size = compress(piece)
        if min_ratio and size * min_ratio > len(piece):
            size = len(piece)
        raw += len(piece)
        out += size

    for row in rows:
        buf += row
        while len(buf) >= chunk:
            flush(bytes(buf[:chunk]))
            del buf[:chunk]
    if buf:
        flush(bytes(buf))
    return raw / out if out else None


@dataclass
class TableSettings:
    keyspace: str
    table: str
    compression: dict[str, str]
    compaction: dict[str, str]
    sample_rows: int = 0
    partitions: int = 0
    row_sizes: list[int] = field(default_factory=list)
    partition_sizes: list[int] = field(default_factory=list)
    blob_stored: int = 0
    blob_decompressed: int = 0
    blob_compressed_stored: int = 0
    blob_values: int = 0
    codecs: dict[str, int] = field(default_factory=dict)
    measured: dict[str, float | None] = field(default_factory=dict)
    estimate: dict[str, int] | None = None
    advice: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    #: The report's first answer (advise() sets it).
    verdict: str = ""
    #: Ctrl-C while the sample was read: the figures cover the rows read before it.
    interrupted: bool = False
    rows_per_partition: list[int] = field(default_factory=list)
    #: Partition key of the last sampled row: rows of a partition arrive together in a scan.
    last_key: object = None

    @property
    def chunk_kb(self) -> int:
        try:
            return int(self.compression.get("chunk_length_in_kb", DEFAULT_CHUNK_KB))
        except ValueError:
            return DEFAULT_CHUNK_KB

    def _median(self, values: list[int]) -> float | None:
        return statistics.median(values) if values else None

    def to_json(self) -> dict[str, object]:
        return {
            "command": "COMPRESSION SETTINGS",
            "keyspace": self.keyspace,
            "table": self.table,
            "compression": self.compression,
            "compaction": self.compaction,
            "sample": {
                "rows": self.sample_rows,
                "partitions": self.partitions,
                "row_bytes_median": self._median(self.row_sizes),
                "row_bytes_max": max(self.row_sizes) if self.row_sizes else None,
                "partition_bytes_median": self._median(self.partition_sizes),
                "partition_bytes_max": max(self.partition_sizes) if self.partition_sizes else None,
                "rows_per_partition_median": (
                    statistics.median(self.rows_per_partition) if self.rows_per_partition else None),
                "blob_values": self.blob_values,
                "blob_stored_bytes": self.blob_stored,
                "blob_decompressed_bytes": self.blob_decompressed,
                "blob_client_compressed_share": (
                    round(self.blob_compressed_stored / self.blob_stored, 4) if self.blob_stored else None),
                "blob_codecs": self.codecs},
            "measured_ratio": self.measured,
            "size_estimates": self.estimate,
            "advice": self.advice,
            "verdict": self.verdict,
            "interrupted": self.interrupted,
            "notes": self.notes}

    def render(self) -> list[Line]:
        lines: list[Line] = [f"COMPRESSION SETTINGS {self.keyspace}.{self.table}"]
        if self.interrupted:
            lines.append(f"  INTERRUPTED (Ctrl-C) while reading the sample: the figures cover the "
                         f"{report.count(self.sample_rows)} rows read before it.")
        if self.verdict:
            lines.append(self.verdict)
        lines += ["", "SSTable compression (schema):"]
        lines.append(report.table([[k, str(v)] for k, v in self.compression.items()] or [["(none)", ""]]))
        doc = cast(dict[str, Any], self.to_json()["sample"])
        lines += [
            "",
            f"Measured on a sample of {report.count(self.sample_rows)} rows "
            f"({report.count(self.partitions)} partitions):"]
        rows = []

        def size(v: Any) -> str:
            return "-" if v is None else report.sized(int(v))

        # One row a partition: a row is its partition, one figure (the partition's, with its key).
        single = bool(self.rows_per_partition) and max(self.rows_per_partition) == 1
        if not single:
            rows.append(["row size (values)", f"median {size(doc['row_bytes_median'])}",
                         f"max {size(doc['row_bytes_max'])}"])
        rows.append(
            ["row = partition size" if single else "partition size (values)",
             f"median {size(doc['partition_bytes_median'])}", f"max {size(doc['partition_bytes_max'])}"])
        if self.rows_per_partition and not single:
            rows.append(["rows per partition", f"median {statistics.median(self.rows_per_partition):g}",
                         f"max {max(self.rows_per_partition)}"])
        if self.blob_values:
            share = self.blob_compressed_stored / self.blob_stored if self.blob_stored else 0
            codecs = ", ".join(f"{k} {report.count(v)}" for k, v in self.codecs.items())
            rows.append(["blob values", report.count(self.blob_values), codecs])
            rows.append(["blob bytes", f"stored {report.sized(self.blob_stored)}",
                         f"decompressed {report.sized(self.blob_decompressed)}, "
                         f"{100 * share:.0f} % of stored bytes compressed by the client"])
        lines.append(report.table(rows))
        if self.estimate:
            lines.append(
                f"  Cassandra's estimate (system.size_estimates): {report.count(self.estimate['partitions'])}"
                f" partitions, mean partition size {report.sized(self.estimate['mean_partition_size'])}")
        if self.measured:
            lines += [
                "",
                "Ratio of the table's compressor on these rows (approximate: column values laid end to "
                "end in chunks, no SSTable framing):"]
            lines.append(report.table([[k, report.ratio(v)] for k, v in self.measured.items()], right=(1,)))
        lines += ["", "Advice:"]
        lines.extend(f"  - {a}" for a in self.advice or ["nothing to change that this sample can support"])
        for note in self.notes:
            lines.append(f"  note: {note}")
        return lines


def collect(settings: TableSettings, names: Sequence[str], types: Sequence[Any],
            rows: Sequence[Sequence[Any]], partition_key: Sequence[str], protocol: int,
            engines: Engines) -> tuple[list[bytes], list[bytes]]:
    """Fold one page of sample rows into `settings`, each blob decoded by the engine of its place
    (`engines`, kept from page to page); returns the rows as stored and with blobs decompressed
    (as byte strings of their values laid end to end, for the chunked-ratio measurement)."""
    pk_index = [names.index(c) for c in partition_key if c in names]
    blob_cols = [(i, extractor(n, t), t.is_blob) for i, n, t in columns_holding(names, types)]
    blob_idx = {i for i, _, _ in blob_cols}
    stored_rows: list[bytes] = []
    plain_rows: list[bytes] = []
    for row in rows:
        size = 0
        stored_parts: list[bytes] = []
        plain_parts: list[bytes] = []
        for i, (t, v) in enumerate(zip(types, row, strict=True)):
            if i in blob_idx or v is None:
                continue
            part = (
                v
                if isinstance(v, (bytes, bytearray))
                else (v.encode("utf-8") if isinstance(v, str) else _serialize(t, v, protocol)))
            stored_parts.append(bytes(part))
            plain_parts.append(bytes(part))
            size += len(part)
        for i, extract, _top in blob_cols:
            for _path, schema, value in extract(row[i]):
                view = engines(column_place(schema)).view(value)
                status, _chain, vsize, _exact, _reason = measured(view)
                codec = view.codec or status
                settings.blob_values += 1
                settings.blob_stored += len(value)
                settings.blob_decompressed += vsize
                settings.codecs[codec] = settings.codecs.get(codec, 0) + 1
                if status == COMPRESSED:
                    settings.blob_compressed_stored += len(value)
                stored_parts.append(value)
                plain_parts.append(view.data)
                size += len(value)
        settings.row_sizes.append(size)
        stored_rows.append(b"".join(stored_parts))
        plain_rows.append(b"".join(plain_parts))
        key = tuple(row[i] for i in pk_index)
        if settings.rows_per_partition and key == settings.last_key:
            settings.rows_per_partition[-1] += 1
            settings.partition_sizes[-1] += size
        else:
            settings.rows_per_partition.append(1)
            settings.partition_sizes.append(size)
            settings.last_key = key
        settings.sample_rows += 1
    settings.partitions = len(settings.partition_sizes)
    return stored_rows, plain_rows


def drop_partial_partition(settings: TableSettings) -> None:
    """The sample stopped at its LIMIT: its last partition may be cut, so leave it out of the sizes."""
    if len(settings.partition_sizes) > 1:
        settings.partition_sizes.pop()
        settings.rows_per_partition.pop()


def _serialize(cqltype: Any, value: Any, protocol: int) -> bytes:
    try:
        return bytes(cqltype.serialize(value, protocol))
    except Exception:
        return str(value).encode("utf-8")


def measure_ratios(
    settings: TableSettings, stored_rows: Sequence[bytes], plain_rows: Sequence[bytes]
) -> None:
    name, compress = compressor_for(settings.compression)
    if compress is None:
        # Off (or a class we cannot run): what Cassandra's default would do is still worth knowing.
        name, compress = compressor_for({"class": "LZ4Compressor"})
        label = "LZ4Compressor (default, if compression were on)"
    else:
        label = name
    assert compress is not None
    try:
        min_ratio = float(settings.compression.get("min_compress_ratio", 0) or 0)
    except ValueError:
        min_ratio = 0.0
    chunk = settings.chunk_kb * 1024
    settings.measured[f"{label}, {settings.chunk_kb} KiB chunks, as stored"] = chunked_ratio(
        stored_rows, chunk, compress, min_ratio)
    suggested = suggested_chunk_kb(settings)
    if suggested is not None:
        settings.measured[f"{label}, {suggested} KiB chunks, as stored"] = chunked_ratio(
            stored_rows, suggested * 1024, compress, min_ratio)
    if settings.blob_compressed_stored:
        settings.measured[f"{label}, {settings.chunk_kb} KiB chunks, blobs decompressed"] = chunked_ratio(
            plain_rows, chunk, compress, min_ratio)


def suggested_chunk_kb(settings: TableSettings) -> int | None:
    """A smaller chunk length when typical partitions are much smaller than a chunk, else None."""
    if not settings.partition_sizes:
        return None
    typical = statistics.median(settings.partition_sizes)
    kb = MIN_SUGGESTED_KB
    while kb * 1024 < typical:
        kb *= 2
    return kb if kb * 4 <= settings.chunk_kb else None


def advise(settings: TableSettings, pricing: Pricing | None = None) -> None:
    """The advice lines a measured number supports, and the verdict they add up to (`pricing`:
    what the user pays: on Amazon Keyspaces these settings change nothing billed)."""
    comp = settings.compression
    off = str(comp.get("enabled", "true")).lower() == "false" or not comp.get("class")
    keys = list(settings.measured)
    current = settings.measured.get(keys[0]) if keys else None
    changes: list[str] = []
    if not settings.sample_rows:
        settings.advice.append("the table has no rows to measure")
        settings.verdict = f"{verdict.LEAD} nothing to judge: the table has no rows."
        return
    if off:
        if current is not None and current >= 1.2:
            changes.append(f"turn SSTable compression on (LZ4Compressor saves "
                           f"{verdict.share(1 - 1 / current, 'storage')} on this sample)")
            settings.advice.append(
                f"SSTable compression is off; LZ4Compressor would store these rows in "
                f"{100 / current:.0f} % of the space (ratio {current:.2f} measured on the sample)")
        else:
            settings.advice.append(f"SSTable compression is off and the rows barely compress (ratio "
                                   f"{report.ratio(current)}): leaving it off saves CPU for nothing lost")
    suggested = suggested_chunk_kb(settings)
    if suggested is not None and not off:
        typical = statistics.median(settings.partition_sizes)
        smaller = settings.measured.get(keys[1]) if len(keys) > 1 else None
        changes.append(_chunk_trade(settings.chunk_kb, suggested, current, smaller))
        settings.advice.append(
            f"a read of one partition (median {report.sized(int(typical))}) decompresses a whole "
            f"{settings.chunk_kb} KiB chunk: chunk_length_in_kb = {suggested} reads and decompresses about "
            f"{settings.chunk_kb // suggested}x fewer bytes per point read, for a ratio of "
            f"{report.ratio(smaller)} instead of {report.ratio(current)} on this sample (and "
            f"{settings.chunk_kb // suggested}x more chunk offsets in memory)")
    share = settings.blob_compressed_stored / settings.blob_stored if settings.blob_stored else 0.0
    if not off and share >= 0.5 and current is not None and current < 1.1:
        min_ratio = comp.get("min_compress_ratio")
        text = (
            f"{100 * share:.0f} % of the blob bytes are compressed by the client, so the SSTable compressor "
            f"saves only {100 * (1 - 1 / current):.0f} % on these rows")
        if not min_ratio or float(min_ratio) <= 1.0:
            text += (
                "; min_compress_ratio: 1.1 stores chunks that do not compress by 10 % uncompressed, so reads "
                "of them skip decompression")
            changes.append("set min_compress_ratio = 1.1: the client compresses the blobs already, and reads "
                           "then skip decompressing chunks that do not compress")
        settings.advice.append(text)
    if not off and share < 0.1 and settings.blob_values and current is not None and current >= 1.5:
        compressor = comp.get("class", "").rsplit(".", 1)[-1]
        settings.advice.append(
            f"the blob values are not compressed by the client and {compressor} gets ratio {current:.2f} "
            "on disk; compressing in the client would also cut network bytes and, on Amazon Keyspaces, "
            "capacity units (see COMPRESSION STATS and COMPRESSION ADVISE)")
    settings.verdict = _verdict(settings, changes, current, pricing or Pricing())


def _chunk_trade(chunk_kb: int, suggested: int, current: float | None, smaller: float | None) -> str:
    """A smaller chunk length as the trade it is: what it buys (point reads decompress fewer
    bytes: faster) and what it costs (disk, when the ratio drops)."""
    buys = (f"set chunk_length_in_kb = {suggested}: faster point reads, each decompressing a "
            f"{suggested} KiB chunk instead of {chunk_kb} KiB ({chunk_kb // suggested}x fewer bytes)")
    if not current or not smaller:
        return buys
    more_disk = current / smaller - 1
    if more_disk < 0.01:
        return (f"{buys}, at no storage cost (ratio {report.ratio(smaller)} instead of "
                f"{report.ratio(current)})")
    return (f"{buys}, for about {100 * more_disk:.0f} % more disk (storage ratio {report.ratio(smaller)} "
            f"instead of {report.ratio(current)})")


def _verdict(settings: TableSettings, changes: list[str], current: float | None, pricing: Pricing) -> str:
    """What the settings mean for what the user pays: on Keyspaces nothing (the service stores
    tables its own way); on Cassandra the changes the advice supports (storage, and the bytes a
    point read decompresses), or that the settings fit."""
    if pricing.keyspaces:
        share = settings.blob_compressed_stored / settings.blob_stored if settings.blob_stored else 0.0
        client = ("client-side compression is what saves capacity units (COMPRESSION ADVISE measures it)"
                  if share < 0.5 else f"the client compresses {share:.0%} of the blob bytes already, which "
                  "is what saves capacity units (COMPRESSION STATS)")
        return (f"{verdict.LEAD} on Amazon Keyspaces the service stores tables its own way: these settings "
                f"change neither capacity units nor storage billed; {client}.")
    if changes:
        return f"{verdict.LEAD} {'; '.join(changes)}."
    saving = ""
    if current and current > 1:
        saving = f", saving {verdict.share(1 - 1 / current, 'storage')} on this sample"
    return (f"{verdict.LEAD} keep the settings: nothing this sample shows calls for a change (the table's "
            f"compressor gets ratio {report.ratio(current)}{saving}).")


def size_estimate(session: Any, ks: str, table: str) -> dict[str, int] | None:
    """Cassandra's own estimate (system.size_estimates): partitions and mean partition size, or None."""
    from cqlsh_ext.scanning.scan import table_size

    size = table_size(session, ks, table)
    if size is None:
        return None
    return {"partitions": size.partitions, "mean_partition_size": size.mean_partition_bytes}
