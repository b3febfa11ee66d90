"""Child process of test_native_limits.py: every hostile value through every path that decodes,
under a memory limit (RLIMIT_AS). Prints one JSON line per value; a crash leaves the "start" line
of the value that caused it as the last line.

    python hostile_child.py VALUES.pickle LIMIT_BYTES CAP
"""

from __future__ import annotations

import contextlib
import io
import json
import pickle
import resource
import sys


def hwm_kib() -> int:
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    return -1


def reset_hwm() -> None:
    with open("/proc/self/clear_refs", "w") as fh:  # "5": reset the peak RSS (Linux >= 4.0)
        fh.write("5")


def main() -> None:
    values = pickle.loads(open(sys.argv[1], "rb").read())
    limit, cap = int(sys.argv[2]), int(sys.argv[3])
    from cqlsh_ext.codecs import registry
    from cqlsh_ext.codecs.base import DecodeError
    from cqlsh_ext.insight import cli
    from cqlsh_ext.insight.advise import AdviseSample
    from cqlsh_ext.insight.inspect import inspect_value
    from cqlsh_ext.payload.engine import ValueEngine
    from cqlsh_ext.payload.unwrap import unwrap

    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))

    def display(value: bytes, mode: str) -> str:
        try:
            if mode == "auto":
                found = registry.decode_auto(value, cap)
            else:
                found = registry.decode_named(mode, value, cap)
        except DecodeError as err:
            return f"reason: {err}"
        if found is None:
            return "not compressed"
        return f"decoded {len(found[1].data)} bytes" + (" (cut)" if found[1].truncated else "")

    def cell(value: bytes, mode: str) -> str:
        view = unwrap(value, mode, cap)
        return f"reason: {view.reason}" if view.reason else f"{view.kind} {len(view.data)} bytes"

    def inspect(value: bytes, mode: str) -> str:
        rep = inspect_value(value, {"file": "v"}, mode, cap)
        lines = rep.render()
        json.dumps(rep.to_json(), default=str)
        return lines[1].strip()

    def offline(value: bytes, mode: str) -> str:
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            rc = cli.main(["0x" + value.hex(), "-d", mode, "--max-output-size", str(cap)])
        return f"rc {rc}: " + out.getvalue().splitlines()[1].strip()

    def stats(value: bytes, mode: str) -> str:
        a = ValueEngine(mode, cap).measure(value, False)
        b = ValueEngine(mode, cap).measure(value, True)
        return f"{a[0]} {a[2]} / from headers {b[0]} {b[2]}: {a[4]}"

    def advise(value: bytes, mode: str) -> str:
        sample = AdviseSample(10, mode, cap)
        sample.add("c", value)
        payloads, _stored, current, skipped = sample.columns["c"]
        return f"sampled {sum(map(len, payloads))} bytes {current} skipped {skipped}"

    for name, value, mode in values:
        print(json.dumps({"start": name}), flush=True)
        reset_hwm()
        before = hwm_kib()
        doc: dict[str, object] = {"name": name}
        for path, fn in (("display", display), ("cell", cell), ("inspect", inspect), ("offline", offline),
                         ("stats", stats), ("advise", advise)):
            try:
                doc[path] = fn(value, mode)
            except BaseException as err:  # noqa: BLE001 - reported, the test fails on it
                doc[path] = f"RAISED {type(err).__name__}: {err}"
        doc["peak_kib"] = hwm_kib() - before
        print(json.dumps(doc), flush=True)


if __name__ == "__main__":
    main()
