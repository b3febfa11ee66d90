"""Print the pinned requirements of pyproject.toml, one a line, for the Dockerfile's dependency layer.

    python3 requirements.py [EXTRAS] [PYPROJECT]

EXTRAS: `all` (every optional extra except the test/dev ones and Spark's; the default), `none`, or a
comma list of extras (names pyproject.toml does not define are ignored, so the Dockerfile's default keeps
working as extras come and go). Installing these before the source is copied in keeps that layer
cached across source edits. Standard library only (tomllib: Python 3.11+).
"""

from __future__ import annotations

import sys

import tomllib

#: Test and development tools, and Spark mode (pyspark, pandas, pyarrow: about 500 MB, and a JVM
#: the image does not have; Spark jobs ship cqlsh-ext in their own packed environment,
#: docs/spark.md): `EXTRAS=spark` still installs it on purpose.
NOT_FOR_THE_IMAGE = {"test", "tests", "dev", "lint", "docs", "spark"}


def requirements(project: dict, extras: str) -> list[str]:
    optional: dict[str, list[str]] = project.get("optional-dependencies", {})
    if extras == "all":
        chosen = [name for name in optional if name not in NOT_FOR_THE_IMAGE]
    elif extras in ("", "none"):
        chosen = []
    else:
        chosen = [name.strip() for name in extras.split(",") if name.strip() in optional]
    out = list(project.get("dependencies", []))
    for name in chosen:
        out.extend(req for req in optional[name] if req not in out)
    return out


def main(argv: list[str]) -> int:
    extras = argv[1] if len(argv) > 1 else "all"
    path = argv[2] if len(argv) > 2 else "pyproject.toml"
    with open(path, "rb") as f:
        project = tomllib.load(f)["project"]
    print("\n".join(requirements(project, extras)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
