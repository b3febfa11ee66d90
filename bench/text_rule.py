#!/usr/bin/env python3
"""How often random binary values read as text under cqlsh-ext's rule, by length.

    .venv/bin/python bench/text_rule.py [--values N]

A value that matched no compression format is shown as text when it is valid UTF-8 (or UTF-16
with a byte order mark) without control characters other than tab, CR and LF, from
MIN_TEXT_LENGTH bytes on (cqlsh_ext.payload.unwrap.stored_text). Prints, per length, the share of
uniformly random values that pass (the false-positive rate for binary ids and hashes of that
length), measured and as computed for printable ASCII, and the cost of the check per value.
"""

from __future__ import annotations

import argparse
import random
import time

from cqlsh_ext.payload.unwrap import MIN_TEXT_LENGTH, stored_text


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--values", type=int, default=200_000)
    args = parser.parse_args()
    rng = random.Random(1)
    print(f"rule: from {MIN_TEXT_LENGTH} bytes; {args.values:,} random values per length")
    print(f"{'bytes':>6}  {'read as text':>14}  {'printable ASCII, computed':>26}  {'us/value':>9}")
    for n in (8, 10, 12, 16, 20, 32, 64):
        values = [rng.randbytes(n) for _ in range(args.values)]
        start = time.perf_counter()
        hits = sum(stored_text(v) is not None for v in values)
        per_value = (time.perf_counter() - start) / len(values) * 1e6
        computed = (98 / 256) ** n if n >= MIN_TEXT_LENGTH else 0.0  # tab, CR, LF and 95 printable
        print(f"{n:>6}  {hits / len(values):>14.2e}  {computed:>26.2e}  {per_value:>9.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
