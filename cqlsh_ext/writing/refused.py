"""The one error of a write that is refused: a row, a journal, a target or a request that is not
written, with its reason."""

from __future__ import annotations


class WriteRefused(ValueError):
    """A write refused; str() is the one-line reason (the caller adds "nothing was written" where
    that is so)."""
