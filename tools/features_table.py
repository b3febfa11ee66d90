"""Writes docs/features.md from the read features' declarations (cqlsh_ext/features/reads.py):
`python tools/features_table.py`; `--check` says whether the file is as they generate it (exit 1 if not)."""

from __future__ import annotations

import sys
from pathlib import Path

DOC = Path(__file__).resolve().parent.parent / "docs" / "features.md"


def generated() -> str:
    from cqlsh_ext.features import declared
    from cqlsh_ext.features.reference import reference

    return reference(declared(plugins=False))


def main(argv: list[str]) -> int:
    text = generated()
    if "--check" in argv:
        same = DOC.exists() and DOC.read_text(encoding="utf-8") == text
        print(f"{DOC.name}: " + ("as generated" if same else
                                 "differs from the declarations: run tools/features_table.py"))
        return 0 if same else 1
    DOC.write_text(text, encoding="utf-8")
    print(f"wrote {DOC}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
