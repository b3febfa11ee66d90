"""Hostile values: peak memory beyond the process' baseline and time per value, through the
display's decode (`cqlsh_ext.payload.unwrap.unwrap(value, mode, cap)`) and through INSPECT's
per-value path (`insight.inspect.inspect_value` and its text report), and through the display
(`display.BlobDisplay`: the table cell and the EXPAND cell, where a record is rendered).

Each (input, path) is measured in a fresh subprocess: after the imports and one small decode of
every codec (the baseline), the value is decoded once under tracemalloc (the most bytes Python
held at once beyond the baseline) and the process' ru_maxrss and VmHWM are read before and after
(resident memory: native libraries' allocations included); then it is timed untraced, the median
of --repeat runs. INSPECT decodes xz/.lzma and brotli values in a worker process
(insight/isolate.py): for those the worker's peak beyond the baseline is shown ("worker").

    .venv/bin/python bench/hostile.py [--cap SIZE] [--repeat N] [-k TEXT] [--json]

Public tools only: tracemalloc, resource, /proc/self/status, time.perf_counter.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "codecs"))

import hostile_values  # noqa: E402  (the codec values; tests/codecs/test_native_limits.py uses them too)


def _pickle_memo() -> bytes:
    import pickle

    return pickle.dumps([list(range(1000))] * 2000, protocol=4)


def _pickle_doubling() -> bytes:
    import pickle

    value: list[object] = [1]
    for _ in range(40):
        value = [value, value]
    return pickle.dumps(value, protocol=4)


def _pickle_reduce_doubling() -> bytes:
    out = bytearray(b"\x80\x04cbuiltins\nprint\n\x94)R\x94")
    for k in range(1, 41):
        prev = k.to_bytes(4, "little")
        out += b"h\x00j" + prev + b"j" + prev + b"\x86R\x94"
    return bytes(out + b".")


def _smile_shared() -> bytes:
    import gzip

    return gzip.compress(b":)\n\x03\xf8\x7f" + b"A" * 64 + b"\x01" * 990_000 + b"\xf9", 9, mtime=0)


def _cbor_stringref() -> bytes:
    import gzip

    import cbor2

    body = cbor2.dumps(["A" * 100] * 90_000, string_referencing=True)
    return gzip.compress(b"\xd9\xd9\xf7" + body, mtime=0)


def _msgpack_maps() -> bytes:
    import gzip

    import msgpack

    return gzip.compress(msgpack.packb([{}] * 4_000_000), mtime=0)


#: (name, value[, mode]) measured; value as bytes or a function that builds it, mode "auto" when
#: left out. Add payload inputs here: they run through the same paths.
INPUTS: list[tuple[str, bytes | Callable[[], bytes]] | tuple[str, bytes | Callable[[], bytes], str]] = [
    ("snappy framed: chunk declaring 4 GiB", hostile_values.SNAPPY_FRAMED_4GIB),
    ("pickle: self-referencing list", bytes.fromhex("80045d946800612e")),
    ("JSON: 100,000 [ then 100,000 ]", b"[" * 100_000 + b"]" * 100_000),
    ("pickle: a list referenced 2,000 times", _pickle_memo),
    ("pickle: a list doubled by reference 40 times", _pickle_doubling),
    ("pickle: a call argument doubled by reference 40 x", _pickle_reduce_doubling),
    ("smile: 990,000 shared-string refs, gzip", _smile_shared),
    ("cbor: 90,000 string references, gzip", _cbor_stringref),
    ("msgpack: 4,000,000 empty maps, gzip", _msgpack_maps),
]

MiB = 1 << 20
PATHS = ("unwrap", "display", "inspect")


def _inputs() -> list[tuple[str, Callable[[], bytes] | bytes, str]]:
    out: list[tuple[str, Callable[[], bytes] | bytes, str]] = []
    for entry in INPUTS:
        name, value = entry[0], entry[1]
        out.append((name, value, entry[2] if len(entry) > 2 else "auto"))
    for name, build, mode in hostile_values.specs():
        if name not in {e[0] for e in out}:
            out.append((name, build, mode))
    return out


# ------------------------------------------------------------------------------------------ child


def _status_kib(field: str) -> int:
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    return 0


def _hwm_kib() -> int:
    return _status_kib("VmHWM")


def _child(path: str, mode: str, cap: int, which: str, repeat: int) -> None:
    import resource
    import time
    import tracemalloc

    from cqlsh_ext.codecs import registry
    from cqlsh_ext.insight.inspect import inspect_value
    from cqlsh_ext.payload.unwrap import unwrap

    value = Path(path).read_bytes()
    # Baseline: every codec library loaded and used once on a small valid value.
    import bz2
    import gzip
    import lzma

    import cramjam
    import lz4.block
    import lz4.frame
    import zstandard

    from cqlsh_ext.output.display import BlobDisplay
    from cqlsh_ext.settings import DisplaySettings
    from cqlsh_ext.upstream import seams

    colormap = seams.value_colormap(False)
    settings = DisplaySettings(mode=mode, cap=cap)
    displays = [BlobDisplay(settings, False, expanded) for expanded in (False, True)]
    small = b'{"a": 1, "b": "hello hello hello hello"}' * 4
    for sample in (bytes(cramjam.snappy.compress_raw(small)), lz4.frame.compress(small),
                   lz4.block.compress(small), zstandard.ZstdCompressor().compress(small),
                   gzip.compress(small), bz2.compress(small), lzma.compress(small)):
        unwrap(sample, "auto", cap)
        inspect_value(sample, {"file": "warm-up"}, "auto", cap).render()
    registry.decode_named("deflate", gzip.compress(small), cap)

    def run() -> str:
        try:
            return attempt()
        except Exception as err:  # the figure is still measured; the outcome says what escaped
            return f"RAISED {type(err).__name__}: {str(err)[:60]}"

    def attempt() -> str:
        if which == "unwrap":
            view = unwrap(value, mode, cap)
            return f"{view.kind} {len(view.data)} B" + (f": {view.reason}" if view.reason else "")
        if which == "display":  # the table cell and the EXPAND cell, as `-e` prints them (whole)
            shown = [display(value, colormap).strval for display in displays]
            return f"{max(len(s) for s in shown):,} chars: ...{shown[0][-50:]}"
        report = inspect_value(value, {"file": "v"}, mode, cap)
        lines = report.render()
        return lines[1].strip()

    rss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    hwm_before = _hwm_kib()
    rss_now = _status_kib("VmRSS")  # what a worker forked now starts with
    tracemalloc.start()
    base = tracemalloc.get_traced_memory()[0]
    outcome = run()
    traced_peak = tracemalloc.get_traced_memory()[1] - base
    tracemalloc.stop()
    rss_after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    hwm_after = _hwm_kib()
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        run()
        times.append(time.perf_counter() - t0)
    children = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    print(json.dumps({
        "outcome": outcome,
        "tracemalloc_peak": traced_peak,
        "ru_maxrss_delta": (rss_after - rss_before) * 1024,
        "vmhwm_delta": (hwm_after - hwm_before) * 1024,
        "baseline_rss": hwm_before * 1024,
        "worker_maxrss": children * 1024,
        "rss_at_fork": rss_now * 1024,
        "time_median": statistics.median(times),
        "time_min": min(times),
    }))


# ----------------------------------------------------------------------------------------- parent


def _mib(n: int) -> str:
    return f"{n / MiB:8.1f}"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cap", type=int, default=4 * MiB, help="output cap per value (default 4 MiB)")
    ap.add_argument("--repeat", type=int, default=5, help="timed runs per value (median shown)")
    ap.add_argument("-k", default="", help="only inputs whose name contains this text")
    ap.add_argument("--json", action="store_true", help="one JSON document per measurement")
    ap.add_argument("--child", nargs=4, metavar=("FILE", "MODE", "PATH", "REPEAT"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        file, mode, which, repeat = args.child
        _child(file, mode, args.cap, which, int(repeat))
        return
    inputs = [i for i in _inputs() if args.k.lower() in i[0].lower()]
    if not args.json:
        print(f"cap {args.cap / MiB:g} MiB; memory in MiB beyond the baseline (libraries loaded); "
              f"time: median of {args.repeat} runs")
        print(f"{'input':52} {'path':7} {'traced':>8} {'maxrss':>8} {'VmHWM':>8} {'ms':>9}  "
              f"{'worker':>8}  outcome")
    with tempfile.TemporaryDirectory() as tmp:
        for n, (name, value, mode) in enumerate(inputs):
            data = value() if callable(value) else value
            file = os.path.join(tmp, f"{n}.bin")
            Path(file).write_bytes(data)
            del data
            for which in PATHS:
                proc = subprocess.run(
                    [sys.executable, __file__, "--cap", str(args.cap), "--child", file, mode, which,
                     str(args.repeat)],
                    capture_output=True, text=True, cwd=ROOT,
                )
                if proc.returncode != 0 or not proc.stdout.strip():
                    doc = {"input": name, "path": which, "error": f"exit {proc.returncode}: "
                           f"{proc.stderr.strip().splitlines()[-1:] or ''}"}
                    print(json.dumps(doc) if args.json else f"{name[:52]:52} {which:7} DIED {doc['error']}")
                    continue
                doc = json.loads(proc.stdout.strip().splitlines()[-1])
                if args.json:
                    print(json.dumps({"input": name, "mode": mode, "path": which, "cap": args.cap, **doc}))
                    continue
                # a worker's ru_maxrss counts the pages it shares with the process it forked from
                extra = max(0, doc["worker_maxrss"] - doc["rss_at_fork"])
                isolated = which == "inspect" and ("xz" in name or "lzma" in name or mode == "brotli")
                worker = _mib(extra) if isolated else " " * 8
                print(f"{name[:52]:52} {which:7} {_mib(doc['tracemalloc_peak'])} "
                      f"{_mib(doc['ru_maxrss_delta'])} {_mib(doc['vmhwm_delta'])} "
                      f"{1000 * doc['time_median']:9.2f}  {worker}  {doc['outcome'][:70]}")


if __name__ == "__main__":
    main()
