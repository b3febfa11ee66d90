"""A program that presses Ctrl-C (SIGINT to itself, as a terminal sends it) at 20 points of its
readings and says, one JSON line a reading, what each did (tests/api/test_api_reading.py runs it):

    ctrl_c_reader.py HOST PORT USER PASSWORD CQLSHRC KS.TABLE

The press lands where a person's would: in the program's own loop between two rows (iterating),
or between two Arrow batches (to_reader), over the server's pages and over a scan by token ranges
(whose own Ctrl-C is in force inside the answer's); and inside to_arrow() and to_pandas(), once a
count of batches is converted (those readings stop at their next page, keeping the rows read).
Then a reading pressed twice, and whether the handler in force before is back."""

from __future__ import annotations

import json
import signal
import sys
from typing import Any

import cqlsh_ext
from cqlsh_ext.render.arrow_batches import ArrowBatches

#: Batches converted so far, and the count at which to press (0: none), for collecting readings.
_converted = {"count": 0, "press_at": 0}
_convert = ArrowBatches.convert


def _counted(self: ArrowBatches, batch: Any) -> Any:
    made = _convert(self, batch)
    _converted["count"] += 1
    if _converted["count"] == _converted["press_at"]:
        press()
    return made


ArrowBatches.convert = _counted  # type: ignore[method-assign]


def press() -> None:
    signal.raise_signal(signal.SIGINT)


def rows_read(answer: cqlsh_ext.QueryAnswer, target: int) -> tuple[int, str | None]:
    """Iterate, pressing Ctrl-C when the `target`-th row is in hand: rows given, what was raised."""
    given = 0
    try:
        for _row in answer:
            given += 1
            if given == target:
                press()
    except BaseException as err:  # reported, not hidden: the test expects nothing here
        return given, type(err).__name__
    return given, None


def batches_read(answer: cqlsh_ext.QueryAnswer, target: int) -> tuple[int, str | None]:
    """Take Arrow batches, pressing Ctrl-C when the `target`-th is in hand: batches given."""
    given = 0
    try:
        for _batch in answer.to_reader():
            given += 1
            if given == target:
                press()
    except BaseException as err:
        return given, type(err).__name__
    return given, None


def collected(answer: cqlsh_ext.QueryAnswer, target: int, how: str) -> tuple[int, str | None]:
    """to_arrow() or to_pandas(), pressing Ctrl-C once the `target`-th batch is converted: rows kept."""
    _converted.update(count=0, press_at=target)
    try:
        return len(answer.to_arrow() if how == "arrow" else answer.to_pandas()), None
    except BaseException as err:
        return 0, type(err).__name__
    finally:
        _converted["press_at"] = 0


def main(argv: list[str]) -> int:
    host, port, user, password, cqlshrc, table = argv[1:7]
    before = signal.getsignal(signal.SIGINT)
    server_pages = f"SELECT pk, ck, data.status FROM {table}"
    scan = (f"SELECT pk, ck FROM {table} WHERE data.status IN ('PAID', 'NEW', 'FAILED', 'Failed') "
            "ALLOW FILTERING")
    points: list[tuple[str, str, int, int]] = []  # (how, statement, page size, the press's row or batch)
    points += [("rows", server_pages, 6, target) for target in (1, 2, 6, 7, 13, 30, 61, 99, 119)]
    points += [("rows", scan, 4, target) for target in (1, 3, 4, 9, 20, 33)]
    points += [("batches", server_pages, 10, target) for target in (1, 2, 5, 11)]
    points += [("before", server_pages, 10, 0)]
    # (columns alone: no leading sample of values read ahead for their types)
    plain = f"SELECT pk, ck FROM {table}"
    points += [("arrow", plain, 10, 1), ("arrow", plain, 10, 3), ("pandas", plain, 10, 2),
               ("arrow", scan, 4, 2)]
    with cqlsh_ext.connect(host, int(port), username=user, password=password, cqlshrc=cqlshrc) as db:
        for point, (how, statement, size, target) in enumerate(points):
            answer = db.query(statement, page_size=size)
            if how == "before":  # pressed after the call, before a row is taken
                press()
                given, raised = rows_read(answer, -1)
            elif how == "rows":
                given, raised = rows_read(answer, target)
            elif how in ("arrow", "pandas"):
                given, raised = collected(answer, target, how)
            else:
                given, raised = batches_read(answer, target)
            out: dict[str, Any] = {"point": point, "how": how, "expected": target, "given": given,
                                   "raised": raised, "stopped": answer.notes.get("stopped"),
                                   "exact": answer.notes.get("exact"), "page": size}
            print(json.dumps(out), flush=True)
        answer = db.query(server_pages, page_size=6)
        second = None
        try:
            for n, _row in enumerate(answer):
                if n == 2:
                    press()
                    press()
        except KeyboardInterrupt:
            second = "KeyboardInterrupt"
        answer.close()
    print(json.dumps({"second_press": second, "handler_restored": signal.getsignal(signal.SIGINT) is before}),
          flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
