#!/usr/bin/env python3
"""The long fuzz run: one or more targets for a time each, coverage-guided when atheris is here.

    .venv/bin/python tools/fuzz.py --list
    .venv/bin/python tools/fuzz.py payload-pickle inspect --seconds 300
    CQLSH_EXT_FUZZ_SECONDS=60 .venv/bin/python tools/fuzz.py all

Targets are tests/fuzzing/targets.py's (derived from the codec and payload registries). Engine:
atheris (libFuzzer) when installed (CPython 3.11-3.13 on Linux x86-64), else Hypothesis with a new
random seed per batch; `--engine` chooses. Each target runs in child processes under a memory limit
and a hang guard; an input that kills one is a finding too, and a new child carries on.

Written under .cache/fuzz (or --out): corpus/TARGET (what libFuzzer found interesting, kept between
runs) and findings/TARGET/KEY.json (one input per distinct failure: the error type and where it was
raised). A finding worth keeping becomes a named test in tests/fuzzing/test_regressions.py.
Without a time, CQLSH_EXT_FUZZ_SECONDS gives the seconds per target (default 60).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from fuzzing.child import MEMORY_MB  # noqa: E402
from fuzzing.engines import atheris_available  # noqa: E402
from fuzzing.targets import CORPUS, all_targets  # noqa: E402

CHILD = ROOT / "tests" / "fuzzing" / "child.py"
#: One input may run this long before it counts as a hang.
HANG_S = 60


def fuzz_target(name: str, seconds: float, engine: str, out: Path,
                python: str) -> tuple[int, list[dict[str, str]]]:
    """Run `name` for `seconds`; (executions, findings)."""
    target = all_targets()[name]
    findings_dir = out / "findings" / name
    work = out / "corpus" / name
    work.mkdir(parents=True, exist_ok=True)
    deadline = time.monotonic() + seconds
    executions = batch = 0
    with tempfile.TemporaryDirectory(prefix="cqlsh-ext-fuzz.") as tmp:
        current = Path(tmp) / "current"
        while (left := deadline - time.monotonic()) > 1:
            cmd = [python, str(CHILD), name, "--keep-going", "--current", str(current),
                   "--findings", str(findings_dir), "--memory-mb", str(MEMORY_MB)]
            if engine == "atheris":
                seeds = [str(CORPUS / s) for s in target.seeds if (CORPUS / s).is_dir()]
                cmd += ["--engine", "atheris", "--", f"-max_total_time={int(left)}", f"-timeout={HANG_S}",
                        "-rss_limit_mb=0", "-print_final_stats=1", f"-artifact_prefix={findings_dir}/",
                        "-max_len=8192", str(work), *seeds]
            else:
                cmd += ["--examples", "2000", "--seed", str(int(time.time() * 1000) % 2**32 + batch),
                        "--hang-s", str(HANG_S)]
            batch += 1
            current.write_bytes(b"")
            findings_dir.mkdir(parents=True, exist_ok=True)
            proc = subprocess.run(cmd, capture_output=True, text=True, timeout=left + HANG_S + 60)
            ran = [json.loads(line)["executions"] for line in proc.stdout.splitlines()
                   if line.startswith('{"target"')]
            stats = re.findall(r"stat::number_of_executed_units: (\d+)", proc.stderr)
            executions += sum(ran) + sum(int(n) for n in stats)
            if ran or stats:
                continue
            # The child died on an input (memory, hang, native crash): keep it as a finding.
            tail = proc.stderr.strip().splitlines()[-8:]
            data = current.read_bytes()
            why = next((line for line in tail if "Timeout" in line or "ERROR" in line or "Error" in line),
                       tail[-1] if tail else f"exit status {proc.returncode}")
            key = f"died-{hashlib.sha256(data).hexdigest()[:12]}"
            (findings_dir / f"{key}.json").write_text(json.dumps({
                "target": name, "key": key, "last_line": f"process died: {why.strip()}", "hex": data.hex(),
                "traceback": "\n".join(tail)}))
            if proc.returncode != 0 and not data:
                print(f"{name}: the child fails before any input:\n{proc.stderr[-2000:]}", file=sys.stderr)
                break
    found = [json.loads(p.read_text()) for p in sorted(findings_dir.glob("*.json"))]
    # What libFuzzer itself caught (a native crash, its own timeout or memory limit): its artifacts.
    for artifact in sorted(findings_dir.glob("*-*")):
        kind = artifact.name.split("-", 1)[0]
        if artifact.suffix != ".json" and kind in ("crash", "oom", "timeout", "leak"):
            found.append({"target": name, "key": artifact.name, "last_line": f"libFuzzer: {artifact.name}",
                          "hex": artifact.read_bytes().hex(), "traceback": ""})
    return executions, found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("targets", nargs="*", help="target names, or 'all'")
    parser.add_argument("--list", action="store_true", help="list the targets")
    parser.add_argument("--seconds", type=float,
                        default=float(os.environ.get("CQLSH_EXT_FUZZ_SECONDS", "60")),
                        help="per target (default: CQLSH_EXT_FUZZ_SECONDS, else 60)")
    parser.add_argument("--engine", choices=("auto", "atheris", "hypothesis"), default="auto")
    parser.add_argument("--out", type=Path, default=ROOT / ".cache" / "fuzz")
    args = parser.parse_args(argv)
    targets = all_targets()
    if args.list or not args.targets:
        for t in targets.values():
            print(f"{t.name:28} {t.doc}")
        return 0
    names = list(targets) if args.targets == ["all"] else args.targets
    unknown = [n for n in names if n not in targets]
    if unknown:
        parser.error(f"unknown target(s) {', '.join(unknown)}; --list lists them")
    engine = args.engine
    if engine == "auto":
        engine = "atheris" if atheris_available() else "hypothesis"
    if engine == "atheris" and not atheris_available():
        parser.error("atheris is not installed (CPython 3.11-3.13 on Linux x86-64: bin/setup --test)")
    failed = 0
    for name in names:
        executions, found = fuzz_target(name, args.seconds, engine, args.out, sys.executable)
        print(f"{name}: {executions:,} executions ({engine}), {len(found)} finding(s)")
        for f in found:
            size = len(f["hex"]) // 2
            shown = f["hex"] if size <= 64 else f"{f['hex'][:128]}... ({size} bytes)"
            print(f"  {f['key']}: {f['last_line']}\n    input: {shown}")
        failed += bool(found)
    print(f"findings in {args.out / 'findings'}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
