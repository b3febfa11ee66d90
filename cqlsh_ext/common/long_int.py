"""Integers longer than Python converts by default: a document's (payload.json_text reads them,
up to INTEGER_DIGITS of them in one value) and a statement's literal (query.grammar).

Python's int() and str() refuse integers past PYTHON_DIGITS by a setting whose default this is
(their work is quadratic in the digits); `allow_long_integers` lifts it for this process to
INTEGER_DIGITS where such an integer is read, never lowers it. What the readers and writers do
never depends on that setting: an integer a document wrote past PYTHON_DIGITS is a `LongInt`,
which keeps its digits as written, and every other integer past PYTHON_DIGITS is written in hex
(payload.formats.tree.int_text), as before any was read."""

from __future__ import annotations

import sys

#: Python's own limit on the digits int() and str() convert (sys.int_info.default_max_str_digits):
#: past it they refuse, by a setting whose default this is.
PYTHON_DIGITS = 4300
#: The least integer of more digits than that.
PAST_PYTHON_DIGITS = 10 ** PYTHON_DIGITS
#: The most decimal digits of the long integers (past PYTHON_DIGITS) one value's JSON may hold in
#: all, and of a statement's number literal: Python's conversions are quadratic in the digits, so
#: this bounds what one value costs (100,000 digits: about 0.04 s to read, 0.1 s to write).
INTEGER_DIGITS = 100_000
#: The most bits of an integer of at most INTEGER_DIGITS digits (log2(10) bits a digit).
INTEGER_BITS = int(INTEGER_DIGITS * 3.3219280948873626)


class LongIntegerError(ValueError):
    """An integer whose decimal digits a writer would take minutes to spell (a CQL varint may hold
    a megabyte of them): said in one line, where Python's own refusal names a setting."""


class LongInt(int):
    """An integer a document wrote past PYTHON_DIGITS (payload.json_text), with its digits as
    written: a writer spells it in decimal, as the document does (`text`), where it writes the
    integers of other formats past that size in hex."""

    text: str

    def __new__(cls, text: str) -> LongInt:
        allow_long_integers()
        made = super().__new__(cls, text)
        made.text = text
        return made

    def __repr__(self) -> str:
        return self.text

    __str__ = __repr__

    def __reduce__(self) -> tuple[type[LongInt], tuple[str]]:  # to a worker process and back
        return LongInt, (self.text,)


def allow_long_integers() -> None:
    """Lift Python's int-string limit to INTEGER_DIGITS for this process (never lower it): where a
    document's long integer or a long literal is read, so that int(), str() and json write them
    whole. What bounds the work is INTEGER_DIGITS, counted where they are read."""
    limit = getattr(sys, "get_int_max_str_digits", lambda: 0)()
    if limit and limit < INTEGER_DIGITS:
        sys.set_int_max_str_digits(INTEGER_DIGITS)


def integer_text(value: int) -> str:
    """Every decimal digit of an integer, for the writers whose readers take numbers exactly (JSON
    Lines, a Parquet file's NAME:exact): a CQL varint past PYTHON_DIGITS too, up to INTEGER_DIGITS
    (Python's limit lifted where one is met); past them LongIntegerError. An integer within the
    limit costs one str()."""
    try:
        return str(value)
    except ValueError:  # past this process's limit
        if value.bit_length() > INTEGER_BITS:
            digits = round(value.bit_length() * 0.30103)  # log10(2) digits a bit: about
            raise LongIntegerError(f"an integer of about {digits:,} digits, more than the {INTEGER_DIGITS:,} "
                                   "cqlsh-ext writes in decimal") from None
        allow_long_integers()
        return str(value)
