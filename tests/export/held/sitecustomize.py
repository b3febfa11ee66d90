"""Test-only start-up hook for cqlsh-ext runs (put on PYTHONPATH by tests/export/test_files.py).

CQLSH_EXT_TEST_HOLD_COMMIT=PATH  an export's file, its rows written, waits for its name until PATH
                                 exists (a minute at most), as on a slow disk: a key pressed "while
                                 the file is written" lands there whatever the machine's load. The
                                 product code is untouched: its commit runs as it is, later.
"""

import os
import time

_gate = os.environ.get("CQLSH_EXT_TEST_HOLD_COMMIT")
if _gate:
    from cqlsh_ext.export import target as _target

    _commit = _target.ExportFile.commit

    def _held_commit(self: "_target.ExportFile") -> None:
        deadline = time.monotonic() + 60
        while not os.path.exists(_gate) and time.monotonic() < deadline:
            time.sleep(0.02)
        _commit(self)

    _target.ExportFile.commit = _held_commit  # type: ignore[method-assign]
