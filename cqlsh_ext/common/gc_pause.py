"""The cyclic garbage collector is paused from start-up until the shell is connected and ready.

Why: start-up builds tens of thousands of long-lived objects (cqlsh, the driver, prompt_toolkit,
the driver's schema metadata) and little cyclic garbage. With the collector running, CPython
scans them again and again while they are built; while the driver parses the schema it runs a
full collection that takes 15-30 ms on a small machine and frees nothing. Stock cqlsh happens
to stay under that threshold; the interactive shell, with prompt_toolkit loaded, does not.

At `resume()`, `gc.freeze()` moves what start-up built into the permanent generation, so later
full collections (while a long result is formatted) do not scan it again.

Cost, by design: cyclic garbage made during start-up is kept (a few hundred objects), and the
driver's start-up schema metadata, once replaced after DDL, is freed by reference counting
only; its cycles stay. That is bounded by one copy of the schema as it was at connect.
"""

import gc

_paused = False


def pause() -> None:
    """Called first thing by the entry point; a no-op if the collector is already off."""
    global _paused
    if gc.isenabled():
        gc.disable()
        _paused = True


def resume() -> None:
    """Called when the shell is ready (connected, prompt built); safe to call more than once."""
    global _paused
    if _paused:
        _paused = False
        gc.freeze()
        gc.enable()
