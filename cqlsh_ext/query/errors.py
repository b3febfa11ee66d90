"""The one error of this package."""


class QueryError(ValueError):
    """A statement this layer refuses: one line, said as is."""
