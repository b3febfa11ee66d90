"""JSON Lines and CSV files: the shell's own writers (cqlsh_ext.output.writers), so a file holds
exactly what `--output-format json` or `csv` prints for the same SELECT."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from cqlsh_ext.export.target import ExportFile


class TextSink:
    def __init__(self, fmt: str, target: ExportFile, names: Sequence[str], types: Sequence[Any],
                 settings: Any, places: Sequence[Any]) -> None:
        from cqlsh_ext.output.writers import make_writer
        from cqlsh_ext.payload.budget import Budget
        from cqlsh_ext.settings.output_formats import output_format

        self.names = list(names)
        self.paths = [i for i, t in enumerate(types) if t is None]
        self.budget = Budget.for_cap(settings.cap)
        # newline="": the CSV writer ends lines itself; utf-8 whatever the locale says.
        self.out = open(target.temp, "w", encoding="utf-8", newline="")  # noqa: SIM115
        self.writer = make_writer(output_format(fmt), self.out, self.names, list(types), settings,
                                  list(places))
        self.rows = 0

    def write(self, rows: Sequence[Sequence[Any]]) -> None:
        from cqlsh_ext.render.path_values import machine_value

        names, paths, budget = self.names, self.paths, self.budget
        shown = []
        for row in rows:
            values = list(row)
            for i in paths:
                values[i] = machine_value(values[i], budget)
            shown.append(dict(zip(names, values, strict=True)))
        self.writer.write_rows(shown)
        self.rows += len(shown)

    def finish(self) -> None:
        self.writer.finish()
        self.out.close()

    def abort(self) -> None:
        try:
            self.out.close()
        except OSError:  # a full disk fails the last flush too: the file is discarded anyway
            pass
