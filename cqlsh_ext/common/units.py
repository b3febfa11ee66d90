"""Sizes as people read them ('1.5 KiB'): one spelling for the cells, the reports and the notes.

Standard library only, at the bottom of the layers (docs/architecture.md), so display, output and
insight all use it without importing each other.
"""

from __future__ import annotations

__all__ = ["human_size"]


def human_size(size: int) -> str:
    value = float(size)
    for unit in ("B", "KiB", "MiB", "GiB", "TiB", "PiB"):
        if value < 1024 or unit == "PiB":
            return f"{size} B" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    raise AssertionError("unreachable")
