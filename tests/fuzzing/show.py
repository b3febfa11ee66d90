"""Show one value the ways a user sees it, in a child process under a memory limit.

    python tests/fuzzing/show.py FILE [PATH ...]     PATH: table, expand, json, csv, inspect

For each path, one JSON line {"start": PATH}, then {"path", "error" (the traceback's last line,
or null), "chars", "text" (the first 300 and last 100 characters), "cut", "hex_reason", "json"}.
A parent (test_regressions.py) reads them; when this process dies, the last "start" names the path.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]
if str(TESTS) not in sys.path:
    sys.path.insert(0, str(TESTS))

from fuzzing.child import MEMORY_MB, limit_memory  # noqa: E402

PATHS = ("table", "expand", "json", "csv", "inspect")  # and inspect-each: see render()
#: A value shown as its stored bytes with a reason: `0x0a1b... (why)`, on one line (the hex may
#: be cut with an ellipsis on a terminal).
HEX_REASON = re.compile(r"0x[0-9a-f]*…? \([^\n]+\)")


def render(path: str, data: bytes) -> str:
    from cqlsh_ext.settings import DisplaySettings
    from cqlsh_ext.settings.output_formats import output_format

    if path == "inspect-each":  # many values, each a 4-byte big-endian length and the bytes
        pos = count = 0
        while pos < len(data):
            size = int.from_bytes(data[pos:pos + 4], "big")
            one = data[pos + 4:pos + 4 + size]
            try:
                render("inspect", one)
            except Exception as err:
                raise RuntimeError(f"value {count} (0x{one.hex()}): {type(err).__name__}: {err}") from None
            pos, count = pos + 4 + size, count + 1
        return f"{count} reports"

    if path in ("table", "expand"):
        from cqlsh_ext.output.display import BlobDisplay
        from cqlsh_ext.upstream import seams

        display = BlobDisplay(DisplaySettings(), False, path == "expand")
        return str(display(data, seams.value_colormap(False)).strval)
    if path in ("json", "csv"):
        from cqlsh_ext.output.spellings import CsvSpelling, JsonSpelling

        spelling = JsonSpelling if path == "json" else CsvSpelling
        return spelling(DisplaySettings(output_format=output_format(path))).value(data)
    from cqlsh_ext.insight.inspect import inspect_value

    report = inspect_value(data, {"row": 1, "key": {"id": 1}, "column": "c"})
    return "\n".join(report.render()) + "\n" + json.dumps(report.to_json())


def main() -> int:
    limit_memory(int(sys.argv[sys.argv.index("--memory-mb") + 1]) if "--memory-mb" in sys.argv else MEMORY_MB)
    args = [a for a in sys.argv[1:] if not a.startswith("--") and not a.isdigit()]
    data = Path(args[0]).read_bytes()
    for path in args[1:] or PATHS:
        print(json.dumps({"start": path}), flush=True)
        result: dict[str, object] = {"path": path, "error": None}
        try:
            text = render(path, data)
        except BaseException as err:  # noqa: B036 - RecursionError, MemoryError: what the user would get
            result["error"] = f"{type(err).__name__}: {err}".splitlines()[0][:300]
        else:
            result["chars"] = len(text)
            result["text"] = text[:300] + ("…" + text[-100:] if len(text) > 400 else text[300:])
            result["cut"] = "cut" in text
            result["hex_reason"] = bool(HEX_REASON.fullmatch(text))
            if path == "json":
                try:
                    doc = json.loads(text)
                except ValueError as err:
                    result["json"] = f"not JSON: {err}"
                else:
                    result["json"] = "hex" if isinstance(doc, str) and doc.startswith("0x") else (
                        "note" if isinstance(doc, dict) and doc.get("note") else "decoded")
            del text
        print(json.dumps(result), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
