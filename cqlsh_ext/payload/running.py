"""Which value engine runs, and what a reader above the payload layer may count on from it, asked
here so that no reader asks which engine it is (docs/architecture.md, "One room for the seam").

- `engine_line()`: the engine's line of `cqlsh-ext --version`, told without importing the native
  core (start-up stays as it is); `version_lines()` adds what the core reads and hands back (it
  is loaded for that: --version is no shell start-up).
- `reads_pages_whole()`: the engine reads a page of blobs whole, its cells split and decoded in one
  call without a Python object a row (the native core). A scan then hands the readers the
  server's pages as they came (scanning.pages_in), and one process keeps pace with the server
  (no worker processes: scanning.plan.workers_for).
- `arrow_cells()`: the blob cells read from Arrow's buffers in this process (Spark's closing line).
"""

from __future__ import annotations

from cqlsh_ext.payload import native

__all__ = ["GET_THE_CORE", "arrow_cells", "engine_line", "reads_pages_whole", "version_lines"]

#: What --version adds on the Python engine when the core is not installed: how to get it.
GET_THE_CORE = ("the native core is not installed: its wheel, cqlsh-ext-native, from bin/wheels, or "
                "`pip install ./native` with Rust 1.85+; README, Install")


def engine_line() -> str:
    """Which value engine runs (the native core when installed and not turned off), told
    without importing it. On the Python engine, why."""
    name = native.engine_name()
    if name == "native":
        return f"value engine: {name}"
    why = GET_THE_CORE if not native.installed() else f"the native core is turned off: {native.ENV}=0"
    return f"value engine: {name} ({why})"


def version_lines() -> str:
    """engine_line(), and on the native core what it reads and what it hands back to the Python
    engine (the core is loaded for this)."""
    line = engine_line()
    return f"{line}\n{native.reading()}" if native.engine_name() == "native" else line


def reads_pages_whole() -> bool:
    """The engine reads a page of blobs whole in one call (see the module doc); False on the
    Python engine, where the driver's rows cost less than splitting a page's cells in Python."""
    return native.available()


def arrow_cells() -> int:
    """Blob cells the engine has read from Arrow binary arrays in this process (0 on the Python
    engine, which reads Arrow's Python values)."""
    return native.arrow_cells()
