"""COMPRESSION STATS at table scale: exact scans (1 and N worker processes) and the sampled mode,
against a bare cassandra-driver scan of the same rows, in one run.

    .venv/bin/python bench/scale.py --host 127.0.0.1 --port 9042 [--repeat 3] [--workers 1 2]

Needs the table bench/scale_table.py loads (1,000,000 rows, about 1.3 GB). Prints, per mode:
  - rows/s and the ratio to the bare scan measured in the same round;
  - client CPU per row (user + system of cqlsh-ext and its workers), which shows the decoding
    cost even where the server shares this machine's cores;
  - peak RSS (the largest single process);
  - for SAMPLE (until +-1 %, 60 s at most): the time it took, and the error of each estimate
    against the exact scan's figure.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from scale_table import KEYSPACE, TABLE, connect  # noqa: E402

CQLSH_EXT = str(Path(sys.executable).parent / "cqlsh-ext")
QUERY = f"SELECT data FROM {KEYSPACE}.{TABLE}"
#: Runs a command and reports its descendants' CPU and peak RSS (they are all waited for).
WRAPPER = (
    "import resource, subprocess, sys\n"
    "code = subprocess.call(sys.argv[1:], stdout=sys.stdout, stderr=subprocess.DEVNULL)\n"
    "r = resource.getrusage(resource.RUSAGE_CHILDREN)\n"
    "sys.stderr.write('%d %f\\n' % (r.ru_maxrss, r.ru_utime + r.ru_stime))\n"
    "sys.exit(code)\n"
)


def bare_scan(session: Any) -> tuple[int, float, float]:
    """(rows, seconds, CPU seconds) of a paged driver scan touching every value."""
    from cassandra.query import SimpleStatement
    started, cpu = time.perf_counter(), time.process_time()
    n = total = 0
    for row in session.execute(SimpleStatement(QUERY, fetch_size=5000), timeout=120):
        total += len(row[0])
        n += 1
    return n, time.perf_counter() - started, time.process_time() - cpu


def shell(args: argparse.Namespace, statement: str, home: str) -> tuple[dict[str, Any], float, int, float]:
    """(JSON report, wall seconds, peak RSS KiB, CPU seconds) of one cqlsh-ext -e run."""
    cmd = [sys.executable, "-c", WRAPPER, CQLSH_EXT, args.host, str(args.port), "-u", args.user, "-p",
           args.password, "--request-timeout", "120", "--output-format", "json", "-e", statement]
    started = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, env={**os.environ, "HOME": home}, timeout=1800)
    wall = time.perf_counter() - started
    if proc.returncode != 0:
        raise RuntimeError(f"cqlsh-ext failed ({statement}): {proc.stdout[-500:]} {proc.stderr[-500:]}")
    rss, cpu = proc.stderr.strip().splitlines()[-1].split()
    doc = json.loads([line for line in proc.stdout.splitlines() if line.startswith("{")][-1])
    return doc, wall, int(rss), float(cpu)


def exact_figures(doc: dict[str, Any]) -> dict[str, float]:
    col = doc["columns"][0]
    values = col["values"]
    out = {"ratio": col["ratio"], "rows": doc["rows"]}
    for codec, n in col["by_codec"].items():
        out[f"share {codec}"] = n / values
    for side in ("decompressed", "stored"):
        for label, n in col["buckets"][side].items():
            out[f"bucket {side} {label}"] = n / values
    out["WCU saving"] = doc["keyspaces"]["wcu_saving"]
    out["RCU saving"] = doc["keyspaces"]["rcu_saving"]
    return out


def sampled_figures(doc: dict[str, Any]) -> dict[str, dict[str, float]]:
    est = doc["estimates"]
    col = est["columns"][0]
    out = {"ratio": col["ratio"], "rows": est["rows"]}
    for codec, iv in col["codecs"].items():
        out[f"share {codec}"] = iv
    for side in ("decompressed", "stored"):
        for label, iv in col["buckets"][side].items():
            out[f"bucket {side} {label}"] = iv
    out["WCU saving"] = est["keyspaces"]["wcu_saving"]
    out["RCU saving"] = est["keyspaces"]["rcu_saving"]
    return out


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=9042)
    p.add_argument("-u", "--user", default="cassandra")
    p.add_argument("-p", "--password", default="cassandra")
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--workers", type=int, nargs="*", default=[1, os.cpu_count() or 1])
    p.add_argument("--seeds", type=int, default=3, help="sampled runs (seeds 1..n)")
    args = p.parse_args()

    cluster, session = connect(args.host, args.port, args.user, args.password)
    print(f"{os.cpu_count()} CPUs on this machine (the server shares them); table {KEYSPACE}.{TABLE}")
    rates: dict[str, list[float]] = {}
    paired: dict[str, list[float]] = {}
    cpu_row: dict[str, list[float]] = {}
    rss: dict[str, list[int]] = {}
    exact: dict[str, float] = {}
    with tempfile.TemporaryDirectory() as home:
        bare_scan(session)  # warm the server's caches
        for rnd in range(args.repeat):
            n, secs, cpu = bare_scan(session)
            base = n / secs
            rates.setdefault("bare driver scan", []).append(base)
            cpu_row.setdefault("bare driver scan", []).append(cpu / n * 1e6)
            line = [f"round {rnd + 1}: bare {base:,.0f} rows/s"]
            for w in args.workers:
                key = f"STATS exact, {w} process{'es' if w > 1 else ''}"
                doc, wall, peak, cpu = shell(args, f"COMPRESSION STATS PARALLEL {w} CONFIRM {QUERY}", home)
                if doc["rows"] != n or not doc["complete"]:
                    raise RuntimeError(f"{key}: {doc['rows']} rows, bare scan {n}; {doc.get('error')}")
                rate = doc["rows_per_s"]
                rates.setdefault(key, []).append(rate)
                paired.setdefault(key, []).append(rate / base)
                cpu_row.setdefault(key, []).append(cpu / n * 1e6)
                rss.setdefault(key, []).append(peak)
                exact = exact_figures(doc)
                line.append(f"{key} {rate:,.0f} rows/s = {rate / base:.2f} x")
            print("; ".join(line), flush=True)
        print()
        print(f"{'mode':<28} {'rows/s':>10} {'x bare':>7} {'CPU us/row':>11} {'peak RSS':>9}")
        for key, values in rates.items():
            ratio = f"{statistics.median(paired[key]):.2f}" if key in paired else "1.00"
            mem = f"{statistics.median(rss[key]) / 1024:.0f} MiB" if key in rss else "-"
            print(f"{key:<28} {statistics.median(values):>10,.0f} {ratio:>7} "
                  f"{statistics.median(cpu_row[key]):>11.1f} {mem:>9}")

        print()
        print("SAMPLE (until the ratio's 95 % interval is within +-1 %, 60 s at most):")
        errors: dict[str, list[float]] = {}
        covered: dict[str, int] = {}
        for seed in range(1, args.seeds + 1):
            doc, wall, peak, _cpu = shell(args, f"COMPRESSION STATS SAMPLE SEED {seed} {QUERY}", home)
            sample = doc["sample"]
            figures = sampled_figures(doc)
            ratio = figures["ratio"]
            rel = (ratio["high"] - ratio["low"]) / 2 / ratio["estimate"]
            print(f"  seed {seed}: {doc['elapsed_s']:.1f} s ({wall:.1f} s with start-up), "
                  f"{sample['rows_read']:,} rows ({100 * sample['ring_share']:.1f} % of the ring), "
                  f"ratio {ratio['estimate']:.4f} +-{100 * rel:.2f} % (exact {exact['ratio']:.4f}), "
                  f"stopped: {sample['stopped']}, peak RSS {peak / 1024:.0f} MiB")
            for name, iv in figures.items():
                truth = exact.get(name)
                if truth is None or iv["estimate"] is None:
                    continue
                errors.setdefault(name, []).append(abs(iv["estimate"] - truth))
                inside = iv["low"] is not None and iv["low"] <= truth <= iv["high"]
                covered[name] = covered.get(name, 0) + inside
        print()
        print(f"  {'figure':<34} {'exact':>10} {'mean |error|':>13} {'in the interval':>16}")
        for name, errs in errors.items():
            truth = exact[name]
            shown = f"{truth:,.0f}" if name == "rows" else f"{truth:.4f}"
            err = f"{statistics.mean(errs):,.0f}" if name == "rows" else f"{statistics.mean(errs):.4f}"
            print(f"  {name:<34} {shown:>10} {err:>13} {covered[name]:>9} of {len(errs)}")
    cluster.shutdown()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
