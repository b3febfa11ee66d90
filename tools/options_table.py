#!/usr/bin/env python3
"""Write docs/options.md's options table from the settings' declarations (cqlsh_ext.settings.SETTINGS).

    .venv/bin/python tools/options_table.py          rewrite the table in docs/options.md
    .venv/bin/python tools/options_table.py --check  exit 1 when it differs (tests/test_settings.py)
"""

from __future__ import annotations

import sys
from pathlib import Path

from cqlsh_ext.settings.sample_config import options_table

OPTIONS_DOC = Path(__file__).resolve().parent.parent / "docs" / "options.md"


def table_span(lines: list[str]) -> tuple[int, int]:
    """Where the options table is in docs/options.md's lines: [start, end)."""
    start = lines.index(options_table()[0])
    end = start
    while end < len(lines) and lines[end].startswith("|"):
        end += 1
    return start, end


def main(argv: list[str]) -> int:
    lines = OPTIONS_DOC.read_text(encoding="utf-8").splitlines()
    start, end = table_span(lines)
    wanted = options_table()
    if lines[start:end] == wanted:
        return 0
    if "--check" in argv:
        print(f"{OPTIONS_DOC}: the options table differs from the settings; run tools/options_table.py",
              file=sys.stderr)
        return 1
    lines[start:end] = wanted
    OPTIONS_DOC.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
