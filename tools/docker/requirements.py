"""Print the requirements of pyproject.toml (its ranges), one a line, for the Dockerfile's dependency
layer, which installs them at locks/main.txt's versions (uv pip install --constraint).

    python3 requirements.py [EXTRAS] [PYPROJECT]

EXTRAS: `all` (every optional extra except the test/dev ones and Spark's; the default), `none`, or a
comma list of extras (names pyproject.toml does not define are ignored, so the Dockerfile's default keeps
working as extras come and go). Installing these before the source is copied in keeps that layer
cached across source edits. Standard library only (tomllib: Python 3.11+).
"""

from __future__ import annotations

import re
import sys

import tomllib

#: Test and development tools, and Spark mode on Spark 3.5 and 4 (pyspark, pandas: about 400 MB, and
#: a JVM the image does not have; Spark jobs ship cqlsh-ext in their own packed environment,
#: docs/spark.md): `EXTRAS=spark` (or spark4) still installs it on purpose. The Python API's extra
#: (pandas, polars: for programs and notebooks, not the image's shell) is left out too. The parquet
#: extra (pyarrow) is in the image. The native extra is the core's prebuilt wheel, which no index
#: has: the image builds the core itself.
NOT_FOR_THE_IMAGE = {"test", "tests", "dev", "lint", "docs", "spark", "spark4", "native", "api"}


def requirements(project: dict, extras: str) -> list[str]:
    optional: dict[str, list[str]] = project.get("optional-dependencies", {})
    if extras == "all":
        chosen = [name for name in optional if name not in NOT_FOR_THE_IMAGE]
    elif extras in ("", "none"):
        chosen = []
    else:
        chosen = [name.strip() for name in extras.split(",") if name.strip() in optional]
    out = list(project.get("dependencies", []))
    while chosen:
        name = chosen.pop(0)
        for req in optional[name]:
            # An extra naming another of this project's extras ("cqlsh-ext[parquet]") brings its
            # requirements: pip would look for cqlsh-ext on PyPI otherwise.
            own = re.fullmatch(rf"{re.escape(project['name'])}\[([\w,-]+)\]", req.strip())
            if own:
                chosen.extend(e.strip() for e in own.group(1).split(",") if e.strip() in optional)
            elif req not in out:
                out.append(req)
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
