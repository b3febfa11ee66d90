"""`cqlsh-ext sample-config`: print a commented [cqlsh_ext] cqlshrc section to start from."""

from __future__ import annotations

import sys
from importlib import resources


def sample() -> str:
    return resources.files("cqlsh_ext").joinpath("cqlshrc.sample").read_text(encoding="utf-8")


def main(argv: list[str]) -> int:
    if argv and argv[0] in ("-h", "--help"):
        print("usage: cqlsh-ext sample-config  (append it to ~/.cassandra/cqlshrc and edit)")
        return 0
    sys.stdout.write(sample())
    return 0
